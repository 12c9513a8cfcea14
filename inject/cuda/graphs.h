/* Where each CUDA graph node was made, for the CUDA backend (graphs.c): its capture site
 * (the stack, or the thread and time, of the stream capture's launch or the
 * cudaGraphAdd*Node that made it) and, for the nodes of an instantiated graph, the node
 * each was copied from, so that a graph's kernels are placed where they were captured
 * (their operator, their line) as well as where the graph was launched. */
#ifndef GPUPROF_INJECT_CUDA_GRAPHS_H
#define GPUPROF_INJECT_CUDA_GRAPHS_H

#include <cupti.h>
#include <stdint.h>

/* Subscribes to the nodes made and copied, and to the calls that copy them
 * (instantiation, update, clone); with_stacks: capture sites are stacks
 * (--launch-stacks), else points (thread and time). 0, or -1 (said). */
int graphs_configure(CUpti_SubscriberHandle subscriber, int with_stacks);

/* An API callback: 1 when it is of a call that copies nodes (followed here), else 0. */
int graphs_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *call);

/* A resource callback: a node made (recorded with function_id, the launching call open
 * on this thread: 0 when none) or copied (its original recorded). */
void graphs_resource(CUpti_CallbackId cbid, const void *data, uint32_t function_id);

#endif
