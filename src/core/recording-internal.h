/* What recording.c and recording-markers.c share, not part of the recording's interface
 * (recording.h). */
#ifndef GPUPROF_CORE_RECORDING_INTERNAL_H
#define GPUPROF_CORE_RECORDING_INTERNAL_H

#include "core/recording.h"

#include <string.h>

#define list_add record_list_add

/* The id of a string, agent or queue record (each starts with a u32 id). */
static inline uint32_t record_id_of(const struct record_header *h)
{
	uint32_t id;
	memcpy(&id, h + 1, sizeof(id));
	return id;
}

/* Joins each range's start with its end (by id); a range never ended ends with the
 * recording. Texts are checked against their record's size. 0, or -1 with err set. */
int recording_join_markers(struct recording *rec, const struct record_list *begins,
			   const struct record_list *ends, struct error *err);

/* Kernels that recorded no range but name their launching API call or launch (CUDA):
 * the innermost push/pop range open on that thread when it began; failing one, the
 * PyTorch backward call open then on another thread. Sorts rec->launches first. */
void recording_attribute_kernels(struct recording *rec);

/* NCCL's calls listed by thread and start (rec->communication_calls), for
 * recording_kernel_call() (the API calls by correlation id are listed for it where
 * recording.c's needs_enqueuers() sees NCCL's calls). */
void recording_index_communication(struct recording *rec);

#endif
