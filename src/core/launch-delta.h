/* Launch stacks given as their difference from the thread's previous one
 * (RECORD_LAUNCH_DELTA, written by runtime/launch-stack.c; SAMPLE_STACK_DELTA in older
 * spools) made whole again, thread by thread, in the order the spool holds them (each
 * thread's in the order it wrote them). */
#ifndef GPUPROF_CORE_LAUNCH_DELTA_H
#define GPUPROF_CORE_LAUNCH_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"

struct launch_delta {
	struct launch_delta_thread {
		uint32_t tid;
		uint16_t number;      /* of the stack held; 0: none to build on */
		struct record_sample *sample; /* the stack held, its bytes after it */
		size_t capacity;      /* bytes of sample */
	} *threads;
	size_t count;
};

/* The whole sample of launch stack h (RECORD_LAUNCH_STACK or RECORD_LAUNCH_DELTA), its
 * own or rebuilt (valid until the next call); NULL when the stack it differs from is
 * missing (a record lost) or it is corrupt. */
const struct record_sample *launch_delta_next(struct launch_delta *d,
					      const struct record_header *h);

/* The call a launch stack record (either type) was taken at, as a launch point gives it:
 * its thread, time, domain, function and correlation id; a launch point's (RECORD_LAUNCH)
 * own. */
struct record_launch launch_stack_call(const struct record_header *h);
void launch_delta_release(struct launch_delta *d);

#endif
