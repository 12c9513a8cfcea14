/* Device memory over time, from the allocations and frees of databases
 * (--memory-allocation-trace; host memory, pageable or pinned, left out): per process and
 * device, the bytes held at each allocation
 * and free, the peak (how much, when) and what held it, by allocation site, and what was
 * never freed by the end (leaks), by site. An allocation's site is the innermost frame of
 * the user's code on its call's stack (analysis/user-code.h), at the line of the call
 * there; without a stack, "[no call stack]". For gpuprof summary's MEMORY tables, advise
 * and report. */
#ifndef GPUPROF_ANALYSIS_MEMORY_H
#define GPUPROF_ANALYSIS_MEMORY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Allocations of one site that are live at a moment: their count and bytes. */
struct memory_site {
	char *function;  /* the site's function ("[no call stack]" when none) */
	char *where;     /* its file and line ("file.c:42"), "" when unknown */
	uint64_t allocations, bytes;
};

/* One process's memory on one device. */
struct memory_device {
	int input;              /* which database (0, 1, ...) */
	int64_t process_id, pid, agent_index;
	char *device;           /* the device's name */
	char *label;            /* as findings name it: "GPU 1 (NVIDIA H100)" */
	uint64_t device_bytes;  /* the device's global memory; 0 when unknown */
	uint64_t allocations, frees;
	uint64_t unmatched_frees; /* frees of memory allocated before the recording */
	uint64_t peak_bytes;
	int64_t peak_ns;        /* when it was first reached, from the process's start */
	uint64_t end_bytes;     /* held when the recording ended: never freed */
	uint64_t churn;         /* allocations freed within 1 ms of being made */
	int64_t churn_ns;       /* the time of the calls that made and freed them (each
				 * call's API call where the API was traced, else its record's) */
	/* by site, the most bytes first: live at the peak, at the end, and churned */
	struct memory_site *at_peak, *at_end, *churned;
	size_t at_peak_count, at_end_count, churned_count;
	/* live at the peak by the innermost push/pop marker range (a PyTorch operator under
	 * --torch-trace) open on the allocating thread at the allocation ("[no range]":
	 * none), the most bytes first (function: the range's name, where ""); only where
	 * some allocation was made inside a range (in_ranges) */
	int in_ranges;
	struct memory_site *at_peak_ranges;
	size_t at_peak_range_count;
	/* bytes held over time, from the process's start: after each allocation or free, up
	 * to 8192 points; past that each point is the most held over as many events */
	int64_t *times_ns;
	uint64_t *held;
	size_t points;
};

struct memory_report {
	struct memory_device *devices;
	size_t count;
};

/* What memory_gather reads beyond the peak and the leaks by site. */
enum memory_gather_flags {
	MEMORY_BY_RANGE = 1, /* the peak's holders by marker range (at_peak_ranges) */
};

/* Adds the memory of each process and device of db (input: its number among several
 * inputs; flags: enum memory_gather_flags); none from a database without allocations.
 * 0, or -1 with err set. */
int memory_gather(sqlite3 *db, int input, unsigned flags, struct memory_report *r,
		  struct error *err);
void memory_release(struct memory_report *r);

/* The findings of one process's memory on one device (memory-findings.c): churn, a
 * leak, a peak held by one site; for insight_check (analysis/insight.h). */
struct insight_process;
struct findings;
void memory_findings(const struct insight_process *p, const struct memory_device *d,
		     struct findings *out);

#endif
