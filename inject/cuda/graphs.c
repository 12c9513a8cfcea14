/* Where each CUDA graph node was made (see graphs.h). CUPTI calls GRAPHNODE_CREATED on the
 * thread that makes a node, between the entry and exit callbacks of the call that makes
 * it (CUPTI 11.0's release notes): a launch into a stream being captured, or a
 * cudaGraphAdd*Node. There the thread's stack is the node's capture site, taken as a
 * launch's is (domain DOMAIN_CUDA_GRAPH_NODE, keyed by the node's id). Instantiating a
 * graph copies its nodes (GRAPHNODE_CLONED, after a GRAPHNODE_CREATED of each copy, which
 * is not a capture: NVIDIA's cuda_graphs_trace sample skips the nodes created inside
 * cudaGraphInstantiate); the kernels of the instantiated graph carry the copy's id, which
 * a RECORD_GRAPH_NODE_CLONE ties to the node the program made. */
#include "graphs.h"
#include "callbacks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/record.h"
#include "runtime/recorder.h"
#include "util/hash.h"

static int stacks; /* the capture sites are stacks, not only points */

/* The calls that copy a graph's nodes, by domain and cbid, and how deep this thread is in
 * them. */
static uint8_t copying[CALLBACK_DOMAINS][CALLBACK_MAX_CBID];
static _Thread_local int copying_depth;

/* Each copy's original: the node the program made, a copy's copy resolved to it. Open
 * addressing on the copy's id, under a lock (copies are made as graphs are
 * instantiated, not at launches). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct original {
	uint64_t node, original;
} *originals;
static size_t original_slots, original_count;

static uint64_t original_of(uint64_t node)
{
	if (!original_slots)
		return node;
	for (size_t i = hash_int(node) & (original_slots - 1); originals[i].node;
	     i = (i + 1) & (original_slots - 1))
		if (originals[i].node == node)
			return originals[i].original;
	return node;
}

static void add_original(uint64_t node, uint64_t original)
{
	if (2 * (original_count + 1) > original_slots) {
		size_t slots = original_slots ? 2 * original_slots : 256;
		struct original *grown = calloc(slots, sizeof(*grown));
		if (!grown)
			return;
		for (size_t i = 0; i < original_slots; i++) {
			if (!originals[i].node)
				continue;
			size_t j = hash_int(originals[i].node) & (slots - 1);
			while (grown[j].node)
				j = (j + 1) & (slots - 1);
			grown[j] = originals[i];
		}
		free(originals);
		originals = grown;
		original_slots = slots;
	}
	size_t i = hash_int(node) & (original_slots - 1);
	while (originals[i].node && originals[i].node != node)
		i = (i + 1) & (original_slots - 1);
	original_count += !originals[i].node;
	originals[i] = (struct original){ node, original };
}

/* A call that copies a graph's nodes. */
static int copying_visit(int d, uint32_t cbid, const char *name, void *arg)
{
	(void)arg;
	static const char *const prefixes[] = { "cudaGraphInstantiate", "cuGraphInstantiate",
						"cudaGraphExecUpdate", "cuGraphExecUpdate",
						"cudaGraphClone", "cuGraphClone" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) {
			copying[d][cbid] = 1;
			return 1;
		}
	return 0;
}

int graphs_configure(CUpti_SubscriberHandle subscriber, int with_stacks)
{
	stacks = with_stacks;
	callback_each(subscriber, copying_visit, NULL);
	if (cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
				CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) != CUPTI_SUCCESS ||
	    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
				CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) != CUPTI_SUCCESS) {
		recorder_report("CUPTI does not say where CUDA graph nodes are made: a graph's "
				"kernels are placed where the graph is launched");
		return -1;
	}
	return 0;
}

int graphs_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *call)
{
	int d = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CALLBACK_RUNTIME
		: domain == CUPTI_CB_DOMAIN_DRIVER_API ? CALLBACK_DRIVER : -1;
	if (d < 0 || cbid >= CALLBACK_MAX_CBID || !copying[d][cbid])
		return 0;
	if (call->callbackSite == CUPTI_API_ENTER)
		copying_depth++;
	else if (copying_depth > 0)
		copying_depth--;
	return 1;
}

void graphs_resource(CUpti_CallbackId cbid, const void *data, uint32_t function_id)
{
	const CUpti_ResourceData *resource = data;
	const CUpti_GraphData *graph = resource ? resource->resourceDescriptor : NULL;
	uint64_t node = 0;
	if (!graph || cuptiGetGraphNodeId(graph->node, &node) != CUPTI_SUCCESS || !node)
		return;
	if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
		uint64_t original = 0;
		if (cuptiGetGraphNodeId(graph->originalNode, &original) != CUPTI_SUCCESS || !original)
			return;
		pthread_mutex_lock(&lock);
		original = original_of(original); /* a copy's copy: the node made */
		add_original(node, original);
		pthread_mutex_unlock(&lock);
		struct record_graph_node_clone r = {
			.header = { sizeof(r), RECORD_GRAPH_NODE_CLONE, 0 },
			.node_id = node,
			.original_id = original,
		};
		recorder_emit(&r);
		return;
	}
	/* a node made by the program, of a kernel: its capture site (not a copy's, made
	 * inside an instantiation), whether collection is on or not (a graph captured
	 * before a capture range is replayed inside it) */
	if (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED || copying_depth ||
	    graph->nodeType != CU_GRAPH_NODE_TYPE_KERNEL)
		return;
	if (stacks)
		recorder_launch_stack(DOMAIN_CUDA_GRAPH_NODE, function_id, node, 0);
	else
		recorder_launch(DOMAIN_CUDA_GRAPH_NODE, function_id, node);
}
