#!/bin/sh
# Writes the linker version script of gpuprof's OpenCL library from inject/opencl/api.h:
# every entry point in the version node the ICD loaders define for it (OPENCL_1.0 ...
# OPENCL_3.0), so a program linked against a loader binds to this library unchanged,
# and gpuprof_opencl_interposer, which tells the library apart from a loader.
# Usage: exports-map.sh CPP api.h > exports.map
set -eu
cpp=$1
api=$2
previous=""
for version in 1_0 1_1 1_2 2_0 2_1 2_2 3_0; do
	node="OPENCL_$(echo "$version" | tr _ .)"
	printf '%s {\n\tglobal:\n' "$node"
	# each row expands to its name in its own version's pass, to nothing in the others
	{
		echo "#define X(kind, version, ret, name, params, args) PICK_##version(name)"
		for other in 1_0 1_1 1_2 2_0 2_1 2_2 3_0; do
			if [ "$other" = "$version" ]; then
				echo "#define PICK_$other(name) @name;"
			else
				echo "#define PICK_$other(name)"
			fi
		done
		echo "#include \"$api\""
		echo "OPENCL_API(X)"
	} | $cpp -P -x c - | tr ' ' '\n' | sed -n 's/^@\(cl[A-Za-z0-9_]*;\)$/\t\t\1/p'
	if [ "$version" = 1_0 ]; then
		printf '\t\tgpuprof_opencl_interposer;\n\tlocal: *;\n};\n'
	else
		printf '} %s;\n' "$previous"
	fi
	previous=$node
done
