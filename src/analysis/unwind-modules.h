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

/* A libdw session with the process's files reported; notes into s->notes. NULL when libdw
 * cannot start one. */
Dwfl *unwind_report_modules(const struct recording *rec, struct sample_stacks *s);

/* Marks the note of the file holding pc, if any, as needed by a sample. */
void unwind_note_used(struct sample_stacks *s, uint64_t pc);

#endif
