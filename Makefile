# gpuprof: one build entry point.
#   make                 build the command, the injected libraries and the samples
#   make check           build, then run every test (unit, end-to-end on OpenCL, GPU skips)
#   make check-asan      the same under AddressSanitizer and UndefinedBehaviorSanitizer
#   make check-tsan      the same under ThreadSanitizer
#   make fuzz            build the libFuzzer fuzzers with clang, run each FUZZ_SECONDS
#   make bench           build, then run the benchmarks
#   make install PREFIX=/usr/local
# Optional parts are detected here and reported; the build succeeds without them.

VERSION := 0.1.0
.DEFAULT_GOAL := all
PREFIX ?= /usr/local
CC ?= cc
BUILD ?= build
CUDA_HOME ?= /usr/local/cuda

WARNINGS := -Wall -Wextra -Wshadow -Wformat=2 -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(CFLAGS) $(WARNINGS) -fPIC -fvisibility=hidden -pthread \
	-Isrc -I$(BUILD)/gen -Iinclude -DGPUPROF_VERSION='"$(VERSION)"' -MMD -MP
# the store and the analyses: SQLite, zlib, elfutils' libdw (sample stacks) and the C++
# runtime's demangler; zlib after elfutils, which uses it (a static libelf.a needs that order)
LDLIBS_SQLITE := -lsqlite3 -ldw -lelf -lz -lm -lstdc++

# ---- detection ------------------------------------------------------------------
HASH := \#
have = $(shell printf '$(1)\nint main(void){return 0;}\n' | \
	$(CC) -x c - -o /dev/null $(2) >/dev/null 2>&1 && echo yes || echo no)
HAVE_SQLITE := $(call have,$(HASH)include <sqlite3.h>,-lsqlite3)
HAVE_ZLIB := $(call have,$(HASH)include <zlib.h>,-lz)
HAVE_YAML := $(call have,$(HASH)include <yaml.h>,-lyaml)
HAVE_DW := $(call have,$(HASH)include <elfutils/libdwfl.h>,-ldw -lelf)
HAVE_OPENCL := $(call have,$(HASH)define CL_TARGET_OPENCL_VERSION 300\n$(HASH)include <CL/cl.h>,-lOpenCL)
# MPI interposers (--mpi-trace): one per implementation whose headers are installed
OPENMPI_CFLAGS := $(shell pkg-config --cflags ompi-c 2>/dev/null)
MPICH_CFLAGS := $(shell pkg-config --cflags mpich 2>/dev/null)
HAVE_OTF2 := $(call have,$(HASH)include <otf2/otf2.h>,-lotf2)
HAVE_ISAL := $(call have,$(HASH)include <isa-l/crc.h>,-lisal)
HAVE_OPENMPI := $(if $(OPENMPI_CFLAGS),$(call have,$(HASH)include <mpi.h>,$(OPENMPI_CFLAGS)),no)
HAVE_MPICH := $(if $(MPICH_CFLAGS),$(call have,$(HASH)include <mpi.h>,$(MPICH_CFLAGS)),no)
HAVE_CUDA := $(shell test -x $(CUDA_HOME)/bin/nvcc && test -f $(CUDA_HOME)/include/cupti.h && echo yes || echo no)

ifneq ($(MAKECMDGOALS),clean)
$(info gpuprof $(VERSION) build configuration:)
$(info   SQLite store ........ $(HAVE_SQLITE))
$(info   OpenCL backend ...... $(HAVE_OPENCL))
$(info   MPI tracing ......... Open MPI $(HAVE_OPENMPI), MPICH $(HAVE_MPICH))
$(info   OTF2 output ......... $(HAVE_OTF2))
$(info   ISA-L checksums ..... $(HAVE_ISAL))
$(info   CUDA backend ........ $(HAVE_CUDA) ($(CUDA_HOME): CUPTI, nvcc for the CUDA samples))
ifneq ($(HAVE_ZLIB),yes)
$(error zlib development files not found: run scripts/install-deps.sh (Debian package zlib1g-dev))
endif
ifneq ($(HAVE_DW),yes)
$(error elfutils development files not found: run scripts/install-deps.sh (Debian package libdw-dev))
endif
ifneq ($(HAVE_YAML),yes)
$(error libyaml development files not found: run scripts/install-deps.sh (Debian package libyaml-dev))
endif
ifneq ($(HAVE_SQLITE),yes)
$(error SQLite development files not found: run scripts/install-deps.sh (Debian package libsqlite3-dev))
endif
endif

# The spools' checksums (core/spool.c): zlib's CRC-32, computed by Debian's ISA-L where it
# is installed: the same value at some ten times the speed, which the recorder's writer
# pays for every byte a program records and every read of a spool pays again
LIBZ := -lz
ifeq ($(HAVE_ISAL),yes)
LIBZ += -lisal
LDLIBS_SQLITE += -lisal
$(BUILD)/obj/src/core/spool.o: ALL_CFLAGS += -DHAVE_ISAL
endif

# -f otf2 (writer/otf2.c, otf2-events.c) with Debian's libotf2 where it is installed
ifeq ($(HAVE_OTF2),yes)
LDLIBS_SQLITE += -lotf2
$(BUILD)/obj/src/writer/otf2.o $(BUILD)/obj/src/writer/otf2-events.o: ALL_CFLAGS += -DHAVE_OTF2
endif

# ---- sources ----------------------------------------------------------------------
UTIL_SRC := $(wildcard src/util/*.c)
CORE_SRC := src/core/record.c src/core/spool.c src/core/paths.c src/core/python-read.c src/core/off-cpu.c src/core/gil.c \
	src/core/maps.c src/core/perf-ring.c
# what runs inside the profiled program: linked into the preload library only
RECORDER_SRC := $(wildcard src/runtime/*.c)
STORE_SRC := src/core/recording.c src/core/recording-markers.c src/core/recording-communication.c src/core/record-list.c src/core/kernel-filter.c src/core/launch-delta.c $(wildcard src/store/*.c) $(wildcard src/writer/*.c) $(wildcard src/analysis/*.c) $(wildcard src/analysis/rules/*.c)
# gpuprof compute: what the tests link (no loading of CUPTI), then the rest
COMPUTE_SRC := src/compute/expr.c src/compute/catalog.c src/compute/workload.c \
	src/compute/workload-write.c src/compute/analyze.c src/compute/analyze-kernels.c \
	src/compute/analyze-roofline.c \
	src/compute/analyze-pc.c src/compute/torch-ops.c \
	src/roofline/roofline.c src/roofline/plot.c src/metrics/nvml.c
CLI_SRC := $(wildcard src/commands/*.c) $(filter-out src/metrics/nvml.c,$(wildcard src/metrics/*.c)) \
	$(COMPUTE_SRC) src/compute/host.c

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

GPUPROF := $(BUILD)/bin/gpuprof
LIBDIR := $(BUILD)/lib/gpuprof
RECORDER_LIB := $(LIBDIR)/libgpuprof-recorder.so
OPENCL_LIB := $(LIBDIR)/libgpuprof-opencl.so
ROOFLINE_OPENCL := $(LIBDIR)/gpuprof-roofline-opencl
ROOFLINE_CUDA := $(LIBDIR)/gpuprof-roofline-cuda
CUDA_LIB := $(LIBDIR)/libgpuprof-cuda.so
NVTX_LIB := $(LIBDIR)/libgpuprof-nvtx.so
HOST_LIB := $(LIBDIR)/libgpuprof-cupti-host.so
TARGETS := $(GPUPROF) $(RECORDER_LIB)
# The marker libraries: the public API, and the ROCTX ABI in a directory of its own that
# `gpuprof trace` puts on LD_LIBRARY_PATH.
MARKERS_LIB := $(BUILD)/lib/libgpuprof-markers.so.1
ROCTX_LIB := $(LIBDIR)/markers/libroctx64.so.4
MARKERS_PC := $(BUILD)/lib/pkgconfig/gpuprof-markers.pc
TARGETS += $(MARKERS_LIB) $(ROCTX_LIB) $(MARKERS_PC)
# Presets ship beside the command: <prefix>/share/gpuprof/presets
PRESETS := $(patsubst presets/%,$(BUILD)/share/gpuprof/presets/%,$(wildcard presets/*.yaml))
TARGETS += $(PRESETS)
# trace --torch-trace's Python hooks: <prefix>/share/gpuprof/python
PYTHON_HOOKS := $(patsubst python/%,$(BUILD)/share/gpuprof/python/%,$(wildcard python/*.py))
TARGETS += $(PYTHON_HOOKS)
# The metric catalog of gpuprof compute: <prefix>/share/gpuprof/catalog
CATALOG := $(patsubst catalog/%,$(BUILD)/share/gpuprof/catalog/%,$(wildcard catalog/*.yaml))
# a block file renamed or removed in catalog/ leaves the build's copy: removed, or the
# catalog would hold the old block beside the new
$(foreach f,$(filter-out $(CATALOG),$(wildcard $(BUILD)/share/gpuprof/catalog/*.yaml)),$(shell rm -f $(f)))
TARGETS += $(CATALOG)
# Backend libraries share the one recorder of the process, found beside them.
INJECT_LDLIBS := -L$(LIBDIR) -lgpuprof-recorder -Wl,-rpath,'$$ORIGIN'

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test-*.c))
# the Python layouts checked against pyenv's 3.12 and 3.13 too, where installed (their
# headers include the internal ones)
PYENV_VERSIONS := $(shell pyenv root 2>/dev/null || echo $(HOME)/.pyenv)/versions
PYENV_PYTHON_TESTS := $(foreach v,3.12 3.13,$(if $(wildcard $(PYENV_VERSIONS)/$(v).*/include/python$(v)/internal/pycore_frame.h),$(BUILD)/tests/test-python-$(v)))
UNIT_TESTS += $(PYENV_PYTHON_TESTS)
ifneq ($(HAVE_CUDA),yes)
UNIT_TESTS := $(filter-out $(BUILD)/tests/test-cupti,$(UNIT_TESTS))
endif
TARGETS += $(UNIT_TESTS)

# Fuzz targets (tests/fuzz/NAME.c): each replays its committed corpus as a test,
# build/tests/test-fuzz-NAME; `make fuzz` builds them as libFuzzer fuzzers with clang.
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(filter-out tests/fuzz/fuzz.c tests/fuzz/replay.c,\
	$(wildcard tests/fuzz/*.c)))
FUZZ_LINK := $(call obj,tests/fuzz/fuzz.c src/commands/output.c src/commands/input-file.c \
	src/commands/commands.c $(STORE_SRC) $(CORE_SRC) $(UTIL_SRC) $(COMPUTE_SRC))
TARGETS += $(patsubst %,$(BUILD)/tests/test-fuzz-%,$(FUZZ_NAMES))

# The backend run without a GPU: stand-ins for CUPTI, the driver and the host library,
# and the program that replays CUPTI's callbacks and records through them.
CUPTI_REPLAY_SRC := tests/e2e/fake-cupti.c tests/e2e/fake-cupti-profiler.c tests/e2e/fake-cuda.c \
	tests/e2e/fake-cupti-host.c tests/e2e/cupti-replay.c

ifeq ($(HAVE_OPENCL),yes)
TARGETS += $(OPENCL_LIB) $(ROOFLINE_OPENCL)
SAMPLES := $(patsubst samples/opencl/%.c,$(BUILD)/samples/%,$(wildcard samples/opencl/*.c))
TEST_PROGRAMS := $(patsubst tests/e2e/%.c,$(BUILD)/tests/%,$(filter-out tests/e2e/fake-nccl.c tests/e2e/nccl-app.c tests/e2e/cuda-spool.c tests/e2e/make-recording.c tests/e2e/nvtx-app.c tests/e2e/enospc.c tests/e2e/clwork-lib.c tests/e2e/nvml-double.c tests/e2e/hot-library.c $(CUPTI_REPLAY_SRC),\
	$(wildcard tests/e2e/*.c))) $(BUILD)/tests/libclwork.so $(BUILD)/tests/libnvml-double.so \
	$(BUILD)/tests/libhot-library.so
TEST_PROGRAMS += $(patsubst tests/e2e/%.cpp,$(BUILD)/tests/%,$(wildcard tests/e2e/*.cpp)) \
	$(BUILD)/tests/libenospc.so $(BUILD)/tests/plt-ibt
TARGETS += $(SAMPLES) $(TEST_PROGRAMS) $(BUILD)/bench/launches
endif
TARGETS += $(BUILD)/bench/make-spool $(BUILD)/bench/make-ranks $(BUILD)/bench/read-db $(BUILD)/bench/markers \
	$(BUILD)/bench/attach-target $(BUILD)/tests/make-recording

# ---- MPI: the interposers of --mpi-trace, one per implementation's ABI ---------------
MPI_SRC := inject/mpi/mpi-state.c inject/mpi/mpi-p2p.c inject/mpi/mpi-collectives.c
MPI_LIBS :=
ifeq ($(HAVE_OPENMPI),yes)
MPI_LIBS += $(LIBDIR)/libgpuprof-mpi-openmpi.so
endif
ifeq ($(HAVE_MPICH),yes)
MPI_LIBS += $(LIBDIR)/libgpuprof-mpi-mpich.so
endif
TARGETS += $(MPI_LIBS)
# the MPI sample, built against each implementation found (with OpenCL)
ifeq ($(HAVE_OPENCL),yes)
ifeq ($(HAVE_OPENMPI),yes)
TARGETS += $(BUILD)/samples/mpi/halo $(BUILD)/bench/mpi-device
endif
ifeq ($(HAVE_MPICH),yes)
TARGETS += $(BUILD)/samples/mpi/halo-mpich
endif
endif
ifeq ($(HAVE_OPENMPI),yes)
TARGETS += $(BUILD)/bench/mpi-rate $(LIBDIR)/gpuprof-ranks-openmpi
endif
ifeq ($(HAVE_MPICH),yes)
TARGETS += $(LIBDIR)/gpuprof-ranks-mpich
endif
# summary --mpi's helper, one per MPI (src/ranks): the analysis's objects and MPI
RANKS_LINK := $(call obj,$(STORE_SRC) $(CORE_SRC) $(UTIL_SRC))
$(BUILD)/obj/ranks-openmpi/ranks.o: src/ranks/ranks.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(OPENMPI_CFLAGS) -c $< -o $@
$(BUILD)/obj/ranks-mpich/ranks.o: src/ranks/ranks.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(MPICH_CFLAGS) -c $< -o $@
$(LIBDIR)/gpuprof-ranks-openmpi: $(BUILD)/obj/ranks-openmpi/ranks.o $(RANKS_LINK)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(shell pkg-config --libs ompi-c 2>/dev/null) $(LDLIBS_SQLITE)
$(LIBDIR)/gpuprof-ranks-mpich: $(BUILD)/obj/ranks-mpich/ranks.o $(RANKS_LINK)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(shell pkg-config --libs mpich 2>/dev/null) $(LDLIBS_SQLITE)
$(BUILD)/bench/mpi-rate: bench/mpi-rate.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra $(OPENMPI_CFLAGS) $< -o $@ \
		$(shell pkg-config --libs ompi-c 2>/dev/null)
$(BUILD)/bench/mpi-device: bench/mpi-device.c samples/opencl/common.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra $(OPENMPI_CFLAGS) $< -o $@ \
		$(shell pkg-config --libs ompi-c 2>/dev/null) -lOpenCL
$(BUILD)/samples/mpi/halo: samples/mpi/halo.c samples/opencl/common.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra $(OPENMPI_CFLAGS) $< -o $@ \
		$(shell pkg-config --libs ompi-c 2>/dev/null) -lOpenCL
$(BUILD)/samples/mpi/halo-mpich: samples/mpi/halo.c samples/opencl/common.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra -Wno-stringop-overflow $(MPICH_CFLAGS) $< -o $@ \
		$(shell pkg-config --libs mpich 2>/dev/null) -lOpenCL

$(BUILD)/obj/mpi-openmpi/%.o: inject/mpi/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=default $(OPENMPI_CFLAGS) -c $< -o $@
$(BUILD)/obj/mpi-mpich/%.o: inject/mpi/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=default $(MPICH_CFLAGS) -c $< -o $@
# not linked with the MPI library: its functions are weak references (inject/mpi); MPI_*
# exported whatever visibility the implementation's mpi.h gives them, nothing else
$(LIBDIR)/libgpuprof-mpi-openmpi.so: $(patsubst inject/mpi/%.c,$(BUILD)/obj/mpi-openmpi/%.o,$(MPI_SRC))
$(LIBDIR)/libgpuprof-mpi-mpich.so: $(patsubst inject/mpi/%.c,$(BUILD)/obj/mpi-mpich/%.o,$(MPI_SRC))
$(MPI_LIBS): $(LIBDIR)/libgpuprof-mpi-%.so: $(call obj,inject/loaded.c) $(RECORDER_LIB) inject/mpi/exports.map
	$(CC) $(ALL_CFLAGS) -shared -Wl,--version-script=inject/mpi/exports.map \
		-Wl,-soname,libgpuprof-mpi-$*.so $(filter %.o,$^) -o $@ $(INJECT_LDLIBS) -ldl

# ---- NCCL and RCCL: the interposer of --nccl-trace (nothing of NCCL needed to build) ----
NCCL_LIB := $(LIBDIR)/libgpuprof-nccl.so
TARGETS += $(NCCL_LIB)
$(NCCL_LIB): $(call obj,inject/nccl/nccl.c inject/loaded.c) $(RECORDER_LIB)
	$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,libgpuprof-nccl.so $(filter %.o,$^) -o $@ \
		$(INJECT_LDLIBS) -ldl
# its test: a stand-in for libnccl.so.2 and a program that calls it, linked with it or
# through a library it loads privately (tests/e2e/nccl-app.c)
TARGETS += $(BUILD)/tests/fake-nccl/libnccl.so.2 $(BUILD)/tests/nccl-app \
	$(BUILD)/tests/fake-nccl/libnccl-app.so $(BUILD)/tests/nccl-app-private
$(BUILD)/tests/fake-nccl/libnccl.so.2: tests/e2e/fake-nccl.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -shared -Wl,-soname,libnccl.so.2 $< -o $@
$(BUILD)/tests/nccl-app: tests/e2e/nccl-app.c $(BUILD)/tests/fake-nccl/libnccl.so.2
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(BUILD)/tests/fake-nccl/libnccl.so.2 \
		-Wl,-rpath,'$$ORIGIN/fake-nccl'
$(BUILD)/tests/fake-nccl/libnccl-app.so: tests/e2e/nccl-app.c $(BUILD)/tests/fake-nccl/libnccl.so.2
	$(CC) $(ALL_CFLAGS) -DNCCL_APP_LIBRARY -shared $< -o $@ \
		$(BUILD)/tests/fake-nccl/libnccl.so.2 -Wl,-rpath,'$$ORIGIN'
$(BUILD)/tests/nccl-app-private: tests/e2e/nccl-app.c
	$(CC) $(ALL_CFLAGS) -DNCCL_APP_LOADER='"fake-nccl/libnccl-app.so"' $< -o $@ -ldl

# ---- CUDA: the CUPTI backend, the CUDA samples, the GPU tests and benchmarks --------
# The backend run without a GPU (built with the CUDA backend, below)
CUPTI_REPLAY := $(BUILD)/tests/cupti-replay $(BUILD)/tests/fake/libcupti.so.13 \
	$(BUILD)/tests/fake/libcuda.so.1 $(BUILD)/tests/fake/libgpuprof-cupti-host.so
NVCC := $(CUDA_HOME)/bin/nvcc
# Hopper machine code, and PTX that any newer GPU compiles when it loads the program.
NVCC_FLAGS ?= -O2 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
CUPTI_LIBDIR := $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/lib64) $(CUDA_HOME)/lib64)
CUDA_INJECT_OBJ := $(call obj,inject/cuda/cuda.c inject/cuda/translate.c inject/cuda/nvidia-proc.c \
	inject/cuda/pc-sampling.c \
	inject/cuda/counters.c inject/cuda/counters-context.c inject/cuda/graphs.c \
	src/core/kernel-filter.c src/util/error.c src/util/strbuf.c)
CUDA_SAMPLES := $(patsubst samples/cuda/%.cu,$(BUILD)/samples/cuda/%,$(wildcard samples/cuda/*.cu))
GPU_PROGRAMS := $(patsubst %.cu,$(BUILD)/%,$(wildcard tests/gpu/*.cu bench/gpu/*.cu))
ifeq ($(HAVE_CUDA),yes)
TARGETS += $(NVTX_LIB) $(BUILD)/tests/nvtx-app
TARGETS += $(CUDA_LIB) $(CUDA_SAMPLES) $(GPU_PROGRAMS) $(BUILD)/bench/gpu/libcupti-floor.so \
	$(BUILD)/tests/cuda-spool $(HOST_LIB) $(ROOFLINE_CUDA) $(CUPTI_REPLAY)
endif

all: $(TARGETS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(GPUPROF): $(call obj,$(CLI_SRC) $(STORE_SRC) $(CORE_SRC) $(UTIL_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS_SQLITE) -lyaml -ldl

$(RECORDER_LIB): $(call obj,$(RECORDER_SRC) $(CORE_SRC) $(UTIL_SRC)) src/runtime/recorder.map
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared -Wl,--version-script=src/runtime/recorder.map \
		-Wl,-soname,libgpuprof-recorder.so $(filter %.o,$^) -o $@ $(LIBZ) -ldl

# The microbenchmarks of `gpuprof roofline` on OpenCL devices: a helper program that
# gpuprof runs, linked against the system's OpenCL loader.
$(ROOFLINE_OPENCL): inject/opencl/roofline.c inject/roofline-result.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra $< -o $@ -lOpenCL -lm

# The OpenCL library is named like the ICD loader (soname libOpenCL.so.1, its symbol
# versions) and also found as libOpenCL.so.1 and libOpenCL.so in lib/gpuprof/opencl/,
# which `gpuprof trace` puts first on LD_LIBRARY_PATH: however a program finds OpenCL,
# it finds gpuprof's, which forwards to the real loader.
$(BUILD)/gen/opencl-exports.map: inject/opencl/api.h inject/opencl/exports-map.sh
	@mkdir -p $(dir $@)
	inject/opencl/exports-map.sh "$(CC) -E" $< > $@.tmp && mv $@.tmp $@

$(OPENCL_LIB): $(call obj,inject/opencl/opencl.c inject/opencl/opencl-commands.c \
	inject/opencl/opencl-transfers.c inject/opencl/opencl-loader.c \
	inject/opencl/opencl-memory.c) $(RECORDER_LIB) $(BUILD)/gen/opencl-exports.map
	$(CC) $(ALL_CFLAGS) -shared -Wl,--version-script=$(BUILD)/gen/opencl-exports.map \
		-Wl,-soname,libOpenCL.so.1 $(filter %.o,$^) -o $@ $(INJECT_LDLIBS) -ldl
	@mkdir -p $(LIBDIR)/opencl
	ln -sf ../libgpuprof-opencl.so $(LIBDIR)/opencl/libOpenCL.so.1
	ln -sf ../libgpuprof-opencl.so $(LIBDIR)/opencl/libOpenCL.so

$(CUDA_INJECT_OBJ) $(BUILD)/obj/bench/gpu/cupti-floor.o: ALL_CFLAGS += -I$(CUDA_HOME)/include

$(CUDA_LIB): $(CUDA_INJECT_OBJ) $(RECORDER_LIB)
	$(CC) $(ALL_CFLAGS) -shared -Wl,--version-script=inject/cuda/exports.map \
		-Wl,-soname,libgpuprof-cuda.so $(filter %.o,$^) -o $@ $(INJECT_LDLIBS) \
		-L$(CUPTI_LIBDIR) -Wl,-rpath,$(CUPTI_LIBDIR) -lcupti -lstdc++ -ldl -lm

# NVTX injection: only the header-only nvtx3 API of the CUDA toolkit, no CUDA or CUPTI
$(BUILD)/obj/inject/nvtx/nvtx.o: ALL_CFLAGS += -I$(CUDA_HOME)/include

$(NVTX_LIB): $(call obj,inject/nvtx/nvtx.c src/util/strbuf.c src/util/error.c) $(RECORDER_LIB)
	$(CC) $(ALL_CFLAGS) -shared -Wl,--version-script=inject/nvtx/exports.map \
		-Wl,-soname,libgpuprof-nvtx.so $(filter %.o,$^) -o $@ $(INJECT_LDLIBS)

# a program annotated with NVTX, as PyTorch and NCCL use it (header-only nvtx3)
$(BUILD)/tests/nvtx-app: tests/e2e/nvtx-app.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra -I$(CUDA_HOME)/include -pthread $< -o $@ -ldl

# CUPTI's profiler host API (gpuprof compute: metrics, names, passes), the one C++ file;
# gpuprof loads it at run time
$(HOST_LIB): src/compute/cupti-host.cpp inject/cupti-host.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(CFLAGS) -Wall -Wextra -fPIC -shared -fvisibility=hidden -Isrc \
		-I$(CUDA_HOME)/include $< -o $@ -L$(CUPTI_LIBDIR) -Wl,-rpath,$(CUPTI_LIBDIR) -lcupti

$(BUILD)/bench/gpu/libcupti-floor.so: $(BUILD)/obj/bench/gpu/cupti-floor.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared $^ -o $@ -L$(CUPTI_LIBDIR) -Wl,-rpath,$(CUPTI_LIBDIR) -lcupti

# The microbenchmarks of `gpuprof roofline` on CUDA devices, a helper program like the
# OpenCL one; the CUDA runtime linked statically, so it runs wherever a driver is. Its
# Hopper code is sm_90a, which has the warpgroup tensor instructions of Hopper's peak (and
# runs on compute capability 9.0 only); newer GPUs compile its sm_90 PTX.
ROOFLINE_NVCC_FLAGS ?= -O2 -gencode arch=compute_90a,code=sm_90a \
	-gencode arch=compute_90,code=compute_90
$(ROOFLINE_CUDA): inject/cuda/roofline.cu inject/roofline-result.h
	@mkdir -p $(dir $@)
	$(NVCC) $(ROOFLINE_NVCC_FLAGS) $< -o $@

$(BUILD)/samples/cuda/%: samples/cuda/%.cu samples/cuda/common.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) $< -o $@

$(BUILD)/tests/gpu/cupti-holder: NVCC_LIBS = -I$(CUDA_HOME)/include -L$(CUPTI_LIBDIR) \
	-Xlinker -rpath,$(CUPTI_LIBDIR) -lcupti
# the PC sampling test names source lines: line information in its code
$(BUILD)/tests/gpu/pc-chase: NVCC_FLAGS += -lineinfo
$(GPU_PROGRAMS): $(BUILD)/%: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) $< -o $@ $(NVCC_LIBS)

$(BUILD)/tests/fake/libcupti.so.13: tests/e2e/fake-cupti.c tests/e2e/fake-cupti-profiler.c \
		tests/e2e/fake-cupti.h tests/e2e/fake-cupti-internal.h tests/e2e/fake-images.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -I$(CUDA_HOME)/include -shared \
		-Wl,-soname,libcupti.so.13 $(filter %.c,$^) -o $@ -ldl -pthread
$(BUILD)/tests/fake/libcuda.so.1: tests/e2e/fake-cuda.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -I$(CUDA_HOME)/include -shared \
		-Wl,-soname,libcuda.so.1 $< -o $@
$(BUILD)/tests/fake/libgpuprof-cupti-host.so: tests/e2e/fake-cupti-host.c tests/e2e/fake-images.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared $< -o $@
$(BUILD)/tests/cupti-replay: tests/e2e/cupti-replay.c tests/e2e/fake-cupti.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(CUDA_HOME)/include $< -o $@ -ldl

$(BUILD)/tests/cuda-spool: tests/e2e/cuda-spool.c $(call obj,inject/cuda/translate.c $(CORE_SRC) $(UTIL_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(CUDA_HOME)/include $^ -o $@ -lstdc++ $(LIBZ) -lm

# the Python layouts against the installed interpreter's internal headers, when present
PYTHON_INCLUDES := $(shell /usr/bin/python3-config --includes 2>/dev/null)
HAVE_PYTHON_HEADERS := $(call have,$(HASH)define Py_BUILD_CORE 1\n$(HASH)include <Python.h>\n$(HASH)include <internal/pycore_frame.h>,$(PYTHON_INCLUDES))
$(BUILD)/tests/test-python: tests/unit/test-python.c src/core/python-layouts.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra $(if $(filter yes,$(HAVE_PYTHON_HEADERS)),-DPYTHON_HEADERS $(PYTHON_INCLUDES)) $< -o $@
# and against pyenv's 3.12 and 3.13 (PYENV_PYTHON_TESTS, above)
$(BUILD)/tests/test-python-%: tests/unit/test-python.c src/core/python-layouts.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra -DPYTHON_HEADERS -I$(firstword $(wildcard $(PYENV_VERSIONS)/$*.*/include/python$*)) $< -o $@

$(BUILD)/tests/test-cupti: tests/unit/test-cupti.c $(call obj,inject/cuda/translate.c inject/cuda/nvidia-proc.c src/core/record.c)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(CUDA_HOME)/include $^ -o $@ -lstdc++ -lm

$(BUILD)/samples/%: samples/opencl/%.c samples/opencl/common.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra -pthread $< -o $@ -lOpenCL

$(BUILD)/tests/%: tests/e2e/%.c samples/opencl/common.h tests/e2e/cl-check.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra -pthread $< -o $@ -lOpenCL

# programs of the marker tests link the marker library like any application would
$(BUILD)/tests/markers $(BUILD)/tests/slowdown: $(BUILD)/tests/%: tests/e2e/%.c $(MARKERS_LIB) \
		samples/opencl/common.h tests/e2e/cl-check.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra -Iinclude -pthread $< -o $@ -lOpenCL \
		-L$(BUILD)/lib -lgpuprof-markers -Wl,-rpath,'$$ORIGIN/../lib'

# programs that find OpenCL on their own: not linked against it
$(BUILD)/tests/private-opencl $(BUILD)/tests/own-handle: $(BUILD)/tests/%: tests/e2e/%.c tests/e2e/clwork.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra $< -o $@ -ldl

$(BUILD)/tests/libclwork.so: tests/e2e/clwork-lib.c tests/e2e/clwork.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra -fPIC -shared -fvisibility=hidden $< -o $@ -lOpenCL

# the sampling tests' program: the same code in every build (no sanitizer, no tail calls,
# symbols), so that its call stacks are what the tests expect
$(BUILD)/tests/split: tests/e2e/split.c $(MARKERS_LIB)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fno-optimize-sibling-calls -Wall -Wextra -Iinclude -pthread $< \
		-o $@ -L$(BUILD)/lib -lgpuprof-markers -Wl,-rpath,'$$ORIGIN/../lib'

# the stubs of an indirect-branch-tracking procedure linkage table (.plt.sec)
$(BUILD)/tests/plt-ibt: tests/e2e/plt.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -fcf-protection=full -Wall -Wextra $< -o $@ -Wl,-z,ibtplt

$(BUILD)/tests/jit: tests/e2e/jit.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fno-optimize-sibling-calls -Wall -Wextra $< -o $@

$(BUILD)/tests/hot-template: tests/e2e/hot-template.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -fno-optimize-sibling-calls -Wall -Wextra $< -o $@ -ldl

$(BUILD)/tests/libhot-library.so: tests/e2e/hot-library.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fno-optimize-sibling-calls -Wall -Wextra -fPIC -shared $< -o $@

# a stand-in for libnvidia-ml.so.1 (GPUPROF_NVML_LIBRARY), for the device metrics tests
$(BUILD)/tests/libnvml-double.so: tests/e2e/nvml-double.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra -fPIC -shared $< -o $@

$(BUILD)/tests/libenospc.so: tests/e2e/enospc.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra -fPIC -shared $< -o $@ -ldl

$(BUILD)/tests/%: tests/e2e/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(CFLAGS) -Wall -Wextra $< -o $@ -lOpenCL

$(BUILD)/bench/launches: bench/launches.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra $< -o $@ -lOpenCL

# recordings with exact times for the tests whose premise is a duration
$(BUILD)/tests/make-recording: tests/e2e/make-recording.c $(call obj,$(CORE_SRC) $(UTIL_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LIBZ)

$(BUILD)/bench/make-spool: bench/make-spool.c bench/spool-writer.h $(call obj,$(CORE_SRC) $(UTIL_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(filter-out %.h,$^) -o $@ $(LIBZ)
$(BUILD)/bench/make-ranks: bench/make-ranks.c bench/spool-writer.h $(call obj,$(CORE_SRC) $(UTIL_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(filter-out %.h,$^) -o $@ $(LIBZ)

$(BUILD)/bench/markers: bench/markers.c $(MARKERS_LIB)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra -Iinclude $< -o $@ -L$(BUILD)/lib -lgpuprof-markers \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/bench/attach-target: bench/attach-target.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(CFLAGS) -Wall -Wextra $< -o $@

$(BUILD)/bench/read-db: bench/read-db.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(LDLIBS_SQLITE)

$(BUILD)/tests/test-%: tests/unit/test-%.c $(call obj,$(STORE_SRC) $(CORE_SRC) $(RECORDER_SRC) $(UTIL_SRC) $(COMPUTE_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS_SQLITE) -lyaml

$(BUILD)/tests/test-fuzz-%: tests/fuzz/replay.c $(BUILD)/obj/tests/fuzz/%.o $(FUZZ_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DFUZZ_NAME='"$*"' $^ -o $@ $(LDLIBS_SQLITE) -lyaml -ldl

$(BUILD)/fuzzers/%: $(BUILD)/obj/tests/fuzz/%.o $(FUZZ_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS_SQLITE) -lyaml -ldl

fuzzers: $(patsubst %,$(BUILD)/fuzzers/%,$(FUZZ_NAMES))

$(MARKERS_LIB): $(call obj,markers/markers.c markers/bind.c)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,libgpuprof-markers.so.1 $^ -o $@ -ldl
	ln -sf libgpuprof-markers.so.1 $(BUILD)/lib/libgpuprof-markers.so
	@mkdir -p $(LIBDIR)/markers
	ln -sf ../../libgpuprof-markers.so.1 $(LIBDIR)/markers/libgpuprof-markers.so.1

$(ROCTX_LIB): $(call obj,markers/roctx.c markers/bind.c)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,libroctx64.so.4 $^ -o $@ -ldl
	ln -sf libroctx64.so.4 $(LIBDIR)/markers/libroctx64.so

$(BUILD)/share/gpuprof/presets/%.yaml: presets/%.yaml
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/share/gpuprof/python/%.py: python/%.py
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/share/gpuprof/catalog/%.yaml: catalog/%.yaml
	@mkdir -p $(dir $@)
	cp $< $@

# pkg-config file for the build tree (make install writes one for PREFIX)
$(MARKERS_PC): markers/gpuprof-markers.pc.in Makefile
	@mkdir -p $(dir $@)
	sed 's|@VERSION@|$(VERSION)|; s|@LIBDIR@|$(abspath $(BUILD)/lib)|; s|@INCLUDEDIR@|$(abspath include)|' $< > $@

check: all
	BUILD=$(BUILD) HAVE_OPENCL=$(HAVE_OPENCL) HAVE_CUDA=$(HAVE_CUDA) tests/run.sh

# Everything built again with a sanitizer, in a build directory of its own, then tested
# (tests/sanitizers/run.sh says which tests and with which options).
SANITIZER_CFLAGS := -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all
# What nvcc builds (the CUDA samples, the GPU tests and benchmarks, the CUDA roofline
# helper) has no sanitizer in it: a sanitized build takes the plain build's copies, their
# times kept so that make sees them up to date, rather than compiling them again.
NVCC_OUTPUTS = $(CUDA_SAMPLES) $(GPU_PROGRAMS) $(ROOFLINE_CUDA)
reuse_nvcc = for f in $(NVCC_OUTPUTS); do [ -f "$$f" ] || continue; \
	t=$(1)/$${f\#$(BUILD)/}; mkdir -p "$$(dirname "$$t")"; \
	[ "$$t" -nt "$$f" ] || cp -p "$$f" "$$t"; done
check-asan:
	@$(call reuse_nvcc,$(BUILD)/asan)
	$(MAKE) BUILD=$(BUILD)/asan CFLAGS="$(SANITIZER_CFLAGS) -fsanitize=address,undefined" all
	BUILD=$(BUILD)/asan HAVE_OPENCL=$(HAVE_OPENCL) tests/sanitizers/run.sh address

check-tsan:
	@$(call reuse_nvcc,$(BUILD)/tsan)
	$(MAKE) BUILD=$(BUILD)/tsan CFLAGS="$(SANITIZER_CFLAGS) -fsanitize=thread" all
	BUILD=$(BUILD)/tsan HAVE_OPENCL=$(HAVE_OPENCL) tests/sanitizers/run.sh thread

# The fuzz targets as libFuzzer fuzzers (clang), with AddressSanitizer and
# UndefinedBehaviorSanitizer, each run FUZZ_SECONDS from its corpus (tests/fuzz/run.sh).
FUZZ_SECONDS ?= 600
fuzz:
	scripts/install-deps.sh --fuzz
	$(MAKE) BUILD=$(BUILD)/fuzz CC=clang \
		CFLAGS="$(SANITIZER_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined" fuzzers
	BUILD=$(BUILD) tests/fuzz/run.sh -t $(FUZZ_SECONDS)

bench: all
	scripts/install-deps.sh --bench || echo "gpuprof: the benchmarks' peers are missing; their sections say so"
	BUILD=$(BUILD) bench/run.sh
	BUILD=$(BUILD) bench/gpu/run.sh || [ $$? -eq 77 ]

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/gpuprof \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(GPUPROF) $(DESTDIR)$(PREFIX)/bin/gpuprof
	install -m 755 $(RECORDER_LIB) $(DESTDIR)$(PREFIX)/lib/gpuprof/
	$(if $(filter yes,$(HAVE_OPENCL)),install -m 755 $(OPENCL_LIB) $(ROOFLINE_OPENCL) $(DESTDIR)$(PREFIX)/lib/gpuprof/)
	$(if $(filter yes,$(HAVE_OPENCL)),install -d $(DESTDIR)$(PREFIX)/lib/gpuprof/opencl)
	$(if $(filter yes,$(HAVE_OPENCL)),ln -sf ../libgpuprof-opencl.so $(DESTDIR)$(PREFIX)/lib/gpuprof/opencl/libOpenCL.so.1)
	$(if $(filter yes,$(HAVE_OPENCL)),ln -sf ../libgpuprof-opencl.so $(DESTDIR)$(PREFIX)/lib/gpuprof/opencl/libOpenCL.so)
	$(if $(filter yes,$(HAVE_CUDA)),install -m 755 $(NVTX_LIB) $(DESTDIR)$(PREFIX)/lib/gpuprof/)
	install -m 755 $(NCCL_LIB) $(filter-out $(BUILD)/bench/%,$(MPI_LIBS) \
		$(wildcard $(LIBDIR)/gpuprof-ranks-*)) $(DESTDIR)$(PREFIX)/lib/gpuprof/
	$(if $(filter yes,$(HAVE_CUDA)),install -m 755 $(CUDA_LIB) $(DESTDIR)$(PREFIX)/lib/gpuprof/)
	install -m 644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/lib/gpuprof/markers $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include/gpuprof
	install -m 755 $(MARKERS_LIB) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libgpuprof-markers.so.1 $(DESTDIR)$(PREFIX)/lib/libgpuprof-markers.so
	install -m 755 $(ROCTX_LIB) $(DESTDIR)$(PREFIX)/lib/gpuprof/markers/
	ln -sf libroctx64.so.4 $(DESTDIR)$(PREFIX)/lib/gpuprof/markers/libroctx64.so
	ln -sf ../../libgpuprof-markers.so.1 \
		$(DESTDIR)$(PREFIX)/lib/gpuprof/markers/libgpuprof-markers.so.1
	install -m 644 include/gpuprof/markers.h $(DESTDIR)$(PREFIX)/include/gpuprof/
	install -d $(DESTDIR)$(PREFIX)/share/gpuprof/catalog
	rm -f $(DESTDIR)$(PREFIX)/share/gpuprof/catalog/*.yaml
	install -m 644 catalog/*.yaml $(DESTDIR)$(PREFIX)/share/gpuprof/catalog/
	$(if $(filter yes,$(HAVE_CUDA)),install -m 755 $(HOST_LIB) $(ROOFLINE_CUDA) $(DESTDIR)$(PREFIX)/lib/gpuprof/)
	install -d $(DESTDIR)$(PREFIX)/share/gpuprof/presets
	install -m 644 presets/*.yaml $(DESTDIR)$(PREFIX)/share/gpuprof/presets/
	install -d $(DESTDIR)$(PREFIX)/share/gpuprof/python
	install -m 644 python/*.py $(DESTDIR)$(PREFIX)/share/gpuprof/python/
	sed 's|@VERSION@|$(VERSION)|; s|@LIBDIR@|$(PREFIX)/lib|; s|@INCLUDEDIR@|$(PREFIX)/include|' \
		markers/gpuprof-markers.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gpuprof-markers.pc

clean:
	rm -rf $(BUILD)

.PHONY: all check check-asan check-tsan fuzz fuzzers bench install clean
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# The schema is compiled in from src/store/schema.sql.
$(BUILD)/gen/store/schema.h: src/store/schema.sql
	@mkdir -p $(dir $@)
	{ echo '/* generated from src/store/schema.sql */'; \
	  echo 'static const char store_schema_sql[] ='; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' $<; echo ';'; } > $@
$(BUILD)/obj/src/store/store.o $(BUILD)/obj/src/store/merge.o: $(BUILD)/gen/store/schema.h
