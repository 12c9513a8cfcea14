/* The files mapped in a recorded process, as libdw takes them to unwind and name its
 * samples (analysis/unwind.c): each file of its RECORD_MODULE records at the address it
 * was loaded (its load bias from the first mapping; none for ET_EXEC), the vDSO from
 * gpuprof's own image when their build-ids agree. A file that cannot be used (gone,
 * unreadable, changed since the process started) gets a note, said once by the caller
 * if a sample needed it. */
#ifndef GPUPROF_ANALYSIS_UNWIND_MODULES_H
#define GPUPROF_ANALYSIS_UNWIND_MODULES_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

#include "analysis/unwind.h"

struct module_note {
	uint64_t start, end;
	char *text; /* "PATH: WHY" */
	int used;
};

/* The process's files over time. Each RECORD_MODULE is one file of a set read at once
 * (its time_ns); a later set is the truth where it differs. An epoch is a stretch of the
 * run over which no file's addresses were taken by another: files only added keep the
 * epoch (what a sample before them needed is still there), a set that maps a file where
 * an earlier one had another (unloaded since, or a load that failed and was undone)
 * begins a new epoch, whose files are that set's, then the earlier ones' where nothing
 * newer lies. Spools before time_ns: one epoch, the later records preferred. */
struct module_epochs {
	const struct record_module **modules; /* by time, then as recorded */
	size_t count;
	size_t *first;      /* per epoch: its first module (its set's) */
	uint64_t *begins;   /* per epoch: the time of that set (0 for the first) */
	size_t epoch_count;
};

void module_epochs_build(struct module_epochs *e, const struct recording *rec);
void module_epochs_release(struct module_epochs *e);
/* The epoch of a sample taken at time_ns: the last to begin at or before it. The
 * sampler's ticker has the files read again within a tick of a load or an unload, so
 * only a sample in that tick can be named after the files before. */
size_t module_epochs_at(const struct module_epochs *e, uint64_t time_ns);

/* A libdw session with the files of an epoch reported (the latest of each address
 * range); notes into s->notes, once per file. NULL when libdw cannot start one. */
Dwfl *unwind_report_modules(const struct recording *rec, const struct module_epochs *e,
			    size_t epoch, struct sample_stacks *s);

/* Marks the note of the file holding pc, if any, as needed by a sample. */
void unwind_note_used(struct sample_stacks *s, uint64_t pc);

#endif
