/* Reading the kernel's sample rings (see perf-ring.h). */
#include "core/perf-ring.h"

#include <linux/perf_event.h>
#include <string.h>

/* perf's x86-64 register numbers (asm/perf_regs.h) of the DWARF order of record.h */
static const int perf_register[SAMPLE_REGISTERS] = {
	0 /* ax */, 3 /* dx */, 2 /* cx */, 1 /* bx */, 4 /* si */, 5 /* di */, 6 /* bp */,
	7 /* sp */, 16, 17, 18, 19, 20, 21, 22, 23 /* r8-r15 */, 8 /* ip */,
};

uint64_t perf_ring_registers(int slot[SAMPLE_REGISTERS])
{
	uint64_t mask = 0;
	for (int i = 0; i < SAMPLE_REGISTERS; i++)
		mask |= 1ull << perf_register[i];
	for (int i = 0; i < SAMPLE_REGISTERS; i++) /* the kernel writes them by bit order */
		slot[i] = __builtin_popcountll(mask & ((1ull << perf_register[i]) - 1));
	return mask;
}

void perf_ring_copy(const struct perf_ring *r, uint64_t at, void *out, size_t n)
{
	size_t from = (size_t)(at % r->data_size), first = r->data_size - from;
	if (first >= n) {
		memcpy(out, r->data + from, n);
	} else {
		memcpy(out, r->data + from, first);
		memcpy((unsigned char *)out + first, r->data, n - first);
	}
}

int perf_ring_sample(const struct perf_ring *r, uint64_t at, size_t size,
		     const int slot[SAMPLE_REGISTERS], struct record_sample *s, uint32_t *pid)
{
	uint64_t offset = at + sizeof(struct perf_event_header);
	uint32_t pid_tid[2];
	uint64_t time, abi, stack_size, registers[SAMPLE_REGISTERS];
	if (size < sizeof(struct perf_event_header) + 8 + 8 + 8)
		return -1;
	perf_ring_copy(r, offset, pid_tid, sizeof(pid_tid));
	perf_ring_copy(r, offset + 8, &time, 8);
	perf_ring_copy(r, offset + 16, &abi, 8);
	offset += 24;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE) /* the thread was in the kernel only */
		return -1;
	perf_ring_copy(r, offset, registers, sizeof(registers));
	offset += sizeof(registers);
	perf_ring_copy(r, offset, &stack_size, 8);
	offset += 8;
	if (stack_size > SAMPLE_STACK_MAX)
		return -1;
	uint64_t dynamic = 0;
	if (stack_size)
		perf_ring_copy(r, offset + stack_size, &dynamic, 8);
	if (dynamic > stack_size)
		dynamic = stack_size;
	memset(s, 0, sizeof(*s));
	*pid = pid_tid[0];
	s->tid = pid_tid[1];
	s->time_ns = time;
	for (int i = 0; i < SAMPLE_REGISTERS; i++)
		s->registers[i] = registers[slot[i]];
	s->stack_size = (uint32_t)dynamic;
	if (dynamic >= stack_size)
		s->flags |= SAMPLE_STACK_FULL;
	perf_ring_copy(r, offset, (unsigned char *)s + sizeof(*s), (size_t)dynamic);
	s->header.type = RECORD_SAMPLE;
	s->header.size = (uint32_t)RECORD_PADDED(sizeof(*s) + dynamic);
	return 0;
}

int perf_ring_lost(const struct perf_ring *r, uint64_t at, size_t size,
		   struct record_samples_lost *l, uint64_t *lost)
{
	if (size < sizeof(struct perf_event_header) + 32)
		return -1;
	/* id, lost; then the sample id: pid, tid, time */
	uint64_t counts[2], time;
	uint32_t pid_tid[2];
	perf_ring_copy(r, at + sizeof(struct perf_event_header), counts, sizeof(counts));
	perf_ring_copy(r, at + sizeof(struct perf_event_header) + 16, pid_tid, sizeof(pid_tid));
	perf_ring_copy(r, at + sizeof(struct perf_event_header) + 24, &time, sizeof(time));
	*lost = counts[1];
	*l = (struct record_samples_lost){
		.header = { sizeof(*l), RECORD_SAMPLES_LOST, 0 },
		.tid = pid_tid[1],
		.samples = counts[1] > UINT32_MAX ? UINT32_MAX : (uint32_t)counts[1],
		.start_ns = r->last_time && r->last_time <= time ? r->last_time : time,
		.end_ns = time,
	};
	return 0;
}
