/* The interposers of communication libraries in LD_PRELOAD: --mpi-trace's of the
 * program's MPI (inject/mpi), --nccl-trace's (inject/nccl); and finding the program as
 * exec does. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/trace.h"
#include "util/error.h"

int trace_find_program(const char *program, struct strbuf *found)
{
	if (strchr(program, '/')) {
		if (access(program, X_OK) != 0)
			return 0;
		if (found)
			strbuf_addstr(found, program);
		return 1;
	}
	const char *path = getenv("PATH");
	int seen = 0; /* found but not executable: EACCES, as exec says */
	for (const char *at = path ? path : "/bin:/usr/bin"; ; ) {
		const char *colon = strchr(at, ':');
		size_t length = colon ? (size_t)(colon - at) : strlen(at);
		struct strbuf candidate = STRBUF_INIT;
		strbuf_addf(&candidate, "%.*s%s%s", (int)length, at, length ? "/" : "", program);
		int ok = access(candidate.buf, X_OK) == 0;
		seen |= !ok && errno == EACCES;
		if (ok && found)
			strbuf_addstr(found, candidate.buf);
		strbuf_release(&candidate);
		if (ok)
			return 1;
		if (!colon)
			break;
		at = colon + 1;
	}
	errno = seen ? EACCES : ENOENT;
	return 0;
}

/* The implementation a shared library's name says: MPICH's libmpich.so.12 and the
 * libmpi.so.12 of MPICH and the MPIs that share its ABI (Intel MPI, MVAPICH); any other
 * libmpi.so is Open MPI's (libmpi.so.40 since 3.0). */
static const char *implementation_of_library(const char *needed)
{
	if (!strncmp(needed, "libmpich.so", 11) || !strcmp(needed, "libmpi.so.12"))
		return "mpich";
	if (!strncmp(needed, "libmpi.so", 9))
		return "openmpi";
	return NULL;
}

/* The implementation the program links (its DT_NEEDED), NULL when it names none (a
 * script, or a program that reaches MPI through a library of its own). */
static const char *implementation_linked(const char *path)
{
	const char *found = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	while (elf && !found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && !found && i < shdr.sh_size / (shdr.sh_entsize ? shdr.sh_entsize : 1); i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			const char *name = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val);
			if (name)
				found = implementation_of_library(name);
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

/* The implementation the launcher that started this rank says: Open MPI's mpirun sets
 * OMPI_COMM_WORLD_*, MPICH's Hydra PMI_* (Slurm's srun sets neither alone). */
static const char *implementation_launched(void)
{
	if (getenv("OMPI_COMM_WORLD_SIZE"))
		return "openmpi";
	if (getenv("PMI_RANK") && getenv("PMI_SIZE") && !getenv("SLURM_PROCID"))
		return "mpich";
	return NULL;
}

/* Puts library at the end of LD_PRELOAD in place of the one *placed names (added for
 * an earlier job); NULL: takes that one off. */
static void preload_replace(char **placed, const char *library)
{
	const char *preload = getenv("LD_PRELOAD");
	struct strbuf kept = STRBUF_INIT;
	for (const char *at = preload ? preload : ""; *at; ) {
		size_t length = strcspn(at, ": ");
		if (length && (!*placed || length != strlen(*placed) || strncmp(at, *placed, length)))
			strbuf_addf(&kept, "%s%.*s", kept.len ? ":" : "", (int)length, at);
		at += length;
		at += *at != '\0';
	}
	if (library)
		strbuf_addf(&kept, "%s%s", kept.len ? ":" : "", library);
	setenv("LD_PRELOAD", kept.buf, 1);
	strbuf_release(&kept);
	free(*placed);
	*placed = library ? strdup(library) : NULL;
}

static char *placed_mpi, *placed_nccl; /* the entries added, for the next job */

void trace_place_nccl(int on)
{
	struct strbuf library = STRBUF_INIT;
	struct error err;
	if (on && trace_find_library("libgpuprof-nccl.so", &library, &err))
		die("--nccl-trace: libgpuprof-nccl.so is not installed beside gpuprof");
	preload_replace(&placed_nccl, on ? library.buf : NULL);
	strbuf_release(&library);
}

void trace_place_mpi(int on, const char *program)
{
	preload_replace(&placed_mpi, NULL);
	if (!on)
		return;
	/* GPUPROF_MPI_IMPLEMENTATION says it where nothing else can (docs/MPI.md) */
	const char *which = getenv("GPUPROF_MPI_IMPLEMENTATION");
	struct strbuf path = STRBUF_INIT, library = STRBUF_INIT;
	struct error err;
	if (which && *which && strcmp(which, "openmpi") && strcmp(which, "mpich"))
		die_with(EXIT_USAGE, "%s: GPUPROF_MPI_IMPLEMENTATION is '%s': say 'openmpi' or "
			 "'mpich' (MPICH, Intel MPI, MVAPICH)", trace_command_name, which);
	const char *linked = trace_find_program(program, &path) ? implementation_linked(path.buf)
							       : NULL;
	strbuf_release(&path);
	/* the MPICH interposer cannot hand Open MPI's handles (pointers) on whole */
	if (which && *which && linked && strcmp(which, linked) && !strcmp(which, "mpich"))
		die_with(EXIT_USAGE, "%s: GPUPROF_MPI_IMPLEMENTATION is 'mpich', and '%s' links "
			 "Open MPI: its calls would reach Open MPI damaged; leave the variable unset",
			 trace_command_name, program);
	if (!which || !*which)
		which = linked ? linked : implementation_launched();
	if (!which) {
		warn("--mpi-trace: cannot tell which MPI '%s' uses (it links neither Open MPI's "
		     "libmpi nor MPICH's, and no launcher of either started it): MPI calls are not "
		     "recorded; set GPUPROF_MPI_IMPLEMENTATION=openmpi or mpich", program);
		return;
	}
	strbuf_addf(&path, "libgpuprof-mpi-%s.so", which);
	if (trace_find_library(path.buf, &library, &err)) {
		warn("--mpi-trace: '%s' uses %s, and this gpuprof was built without its headers: "
		     "MPI calls are not recorded (scripts/install-deps.sh installs them; then "
		     "rebuild)", program, !strcmp(which, "mpich") ? "MPICH" : "Open MPI");
		strbuf_release(&path);
		return;
	}
	preload_replace(&placed_mpi, library.buf);
	strbuf_release(&path);
	strbuf_release(&library);
}
