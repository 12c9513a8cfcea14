/* How the marker libraries (libgpuprof-markers, libroctx64) reach the recorder: not by
 * linking it, so that a program using them runs without gpuprof installed or present.
 * On first use they look for the recorder `gpuprof trace` named in GPUPROF_RECORDER; when
 * there is none, every marker call returns at once. */
#ifndef GPUPROF_MARKERS_BIND_H
#define GPUPROF_MARKERS_BIND_H

#include <stdint.h>

struct marker_recorder {
	int (*push)(const char *text, uint32_t domain_id);
	int (*push_module)(const char *text, const char *module, uint32_t domain_id);
	int (*pop)(void);
	int (*domain_pop)(uint32_t domain_id);
	uint64_t (*start)(const char *text, uint32_t domain_id);
	void (*stop)(uint64_t id);
	void (*mark)(const char *text, uint32_t domain_id);
	void (*name_thread)(const char *name);
	void (*pause)(void);
	void (*resume)(void);
	uint32_t (*intern)(const char *text); /* a domain's name: its id */
};

/* The recorder's functions, or NULL when no profiler is present. */
const struct marker_recorder *marker_recorder(void);

/* Nesting and ids without a profiler, so that return values keep their meaning. */
int marker_depth_push(void);
int marker_depth_pop(void);
uint64_t marker_next_id(void);

#endif
