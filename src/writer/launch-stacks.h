/* The call stack of each launch (trace --launch-stacks) as text for the timelines:
 * "main;run;light;clEnqueueNDRangeKernel", from the root down to the API function, found
 * by the API call's process and correlation id (the launch's API slice carries it). */
#ifndef GPUPROF_WRITER_LAUNCH_STACKS_H
#define GPUPROF_WRITER_LAUNCH_STACKS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "core/recording.h"
#include "util/error.h"

struct launch_stack_index {
	struct launch_entry {
		int64_t process_id, correlation_id;
		uint32_t text;
	} *entries;                /* by process, then correlation id */
	size_t count;
	char **texts;              /* one per distinct stack */
	size_t text_count;
};

/* Every launch stack of a database (none from one of a schema before 3.4). 0, or -1
 * with err. */
int launch_stacks_load(sqlite3 *db, struct launch_stack_index *x, struct error *err);
/* Those of a recording, unwound (rec->stacks), as process 1. */
void launch_stacks_from_recording(const struct recording *rec, struct launch_stack_index *x);
/* The stack of the call, or NULL. */
const char *launch_stacks_find(const struct launch_stack_index *x, int64_t process_id,
			       int64_t correlation_id);
void launch_stacks_release(struct launch_stack_index *x);

#endif
