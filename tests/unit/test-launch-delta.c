/* Unit tests of launch stacks given as their difference from the thread's previous one:
 * the recorder's encoding (recorder_launch_stack_delta, runtime/launch-stack.c) read back
 * by the converter's (launch_delta_next, core/launch-delta.c) gives every stack byte for
 * byte, whatever changed; a stack whose base is missing (a record lost, a number out of
 * order, another stack pointer or size) or whose map or counts are corrupt is refused, and so is
 * every delta after it until a whole stack; threads are rebuilt apart; the registers are
 * given as their difference too (RECORD_LAUNCH_DELTA), and an older spool's differences
 * (SAMPLE_STACK_DELTA) are still read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/launch-delta.h"
#include "runtime/recorder.h"

#define MOST_WORDS 1024

/* A launch stack record of tid numbered `number`: whole (the stack's bytes follow) or,
 * where encoded is not NULL, its delta of `size` bytes. */
static struct record_launch_stack *make_record(uint32_t tid, uint16_t number, uint64_t sp,
					       const uint64_t *stack, size_t words,
					       const unsigned char *encoded, size_t size)
{
	size_t payload = encoded ? size : words * 8, padded = (payload + 7) & ~(size_t)7;
	struct record_launch_stack *r = calloc(1, sizeof(*r) + padded);
	r->header = (struct record_header){ (uint32_t)(sizeof(*r) + padded), RECORD_LAUNCH_STACK,
					    number };
	r->sample.header = (struct record_header){ (uint32_t)(sizeof(r->sample) + padded),
						   RECORD_SAMPLE, 0 };
	r->sample.tid = tid;
	r->sample.stack_size = (uint32_t)(words * 8);
	r->sample.registers[7] = sp;
	r->sample.registers[16] = 0x401000 + number; /* the instruction pointer: rebuilt too */
	r->sample.flags = SAMPLE_LAUNCH | (encoded ? SAMPLE_STACK_DELTA : 0);
	memcpy(r + 1, encoded ? (const void *)encoded : (const void *)stack, payload);
	return r;
}

/* The registers each thread's last record gave (tid < 8), as the recorder keeps them. */
static uint64_t last_registers[8][SAMPLE_REGISTERS];

/* The record of `now` after `last` (which becomes now), as the recorder writes it: a
 * RECORD_LAUNCH_DELTA (its registers: the stack pointer sp, the instruction pointer
 * numbered, the others the thread's), or whole where the difference would not be
 * smaller. */
static struct record_header *next_record_at(uint32_t tid, uint16_t number, uint64_t sp,
					    const uint64_t *now, uint64_t *last, size_t words,
					    int *delta)
{
	uint64_t registers[SAMPLE_REGISTERS];
	for (int i = 0; i < SAMPLE_REGISTERS; i++)
		registers[i] = tid * 100u + (uint64_t)i;
	registers[7] = sp;
	registers[16] = 0x401000 + number;
	size_t room = (SAMPLE_REGISTERS + MOST_WORDS) * 8;
	struct record_launch_delta *r = calloc(1, sizeof(*r) + room);
	size_t size = recorder_launch_delta((unsigned char *)(r + 1), room, registers,
					    last_registers[tid], &r->registers, now, last, words);
	*delta = size != 0;
	if (!size) {
		free(r);
		memcpy(last, now, words * 8);
		memcpy(last_registers[tid], registers, sizeof(registers));
		struct record_launch_stack *whole = make_record(tid, number, sp, now, words, NULL, 0);
		memcpy(whole->sample.registers, registers, sizeof(registers));
		return &whole->header;
	}
	r->launch = (struct record_launch){
		.header = { (uint32_t)(sizeof(*r) + size), RECORD_LAUNCH_DELTA, number },
		.tid = tid, .correlation_id = number, .time_ns = 1000u * number,
	};
	r->sample_flags = SAMPLE_LAUNCH;
	return &r->launch.header;
}

static struct record_header *next_record(uint32_t tid, uint16_t number, const uint64_t *now,
					 uint64_t *last, size_t words, int *delta)
{
	return next_record_at(tid, number, 0x7ffd0000, now, last, words, delta);
}

/* A whole record that the recorder's next difference builds on (its registers the ones
 * next_record gives the thread). */
static struct record_header *whole_record(uint32_t tid, uint16_t number, const uint64_t *stack,
					  size_t words)
{
	int delta;
	static uint64_t ignored[MOST_WORDS];
	memset(last_registers[tid], 0xff, sizeof(last_registers[tid])); /* every word differs */
	memset(ignored, 0xff, sizeof(ignored));
	for (size_t w = 0; w < words; w++)
		ignored[w] = ~stack[w];
	struct record_header *h = next_record(tid, number, stack, ignored, words, &delta);
	CHECK(!delta);
	return h;
}

/* The stack's struct launch_stack_delta in a RECORD_LAUNCH_DELTA. */
static struct launch_stack_delta *stack_delta(struct record_header *h)
{
	struct record_launch_delta *r = (void *)h;
	return (struct launch_stack_delta *)((uint64_t *)(r + 1) +
					     __builtin_popcount(r->registers));
}

static int same_stack(const struct record_sample *s, const uint64_t *stack, size_t words,
		      uint16_t number)
{
	return s && s->stack_size == words * 8 && !(s->flags & SAMPLE_STACK_DELTA) &&
	       s->registers[16] == 0x401000u + number && s->header.size == sizeof(*s) + words * 8 &&
	       !memcmp(s + 1, stack, words * 8);
}

static void test_roundtrip(void)
{
	srand(7);
	size_t words = 272;
	uint64_t now[MOST_WORDS], last[MOST_WORDS];
	for (size_t w = 0; w < words; w++)
		now[w] = ((uint64_t)rand() << 32) | (uint64_t)rand();
	memcpy(last, now, sizeof(now));
	struct launch_delta d = { 0 };
	struct record_header *r = whole_record(1, 1, now, words);
	CHECK(same_stack(launch_delta_next(&d, r), now, words, 1));
	free(r);
	int deltas = 0, wholes = 0, all_right = 1;
	for (uint16_t n = 2; n < 400; n++) {
		/* a few words changed, or every word (a whole record then), or none */
		size_t changes = n % 50 == 0 ? words : n % 7 == 0 ? 0 : (size_t)rand() % 40;
		for (size_t k = 0; k < changes; k++)
			now[changes == words ? k : (size_t)rand() % words] ^= (uint64_t)rand() + 1;
		int delta;
		r = next_record(1, n, now, last, words, &delta);
		deltas += delta;
		wholes += !delta;
		const struct record_sample *rebuilt = launch_delta_next(&d, r);
		all_right &= same_stack(rebuilt, now, words, n);
		all_right &= !delta || (rebuilt->time_ns == 1000u * n && rebuilt->tid == 1 &&
					rebuilt->registers[3] == 103); /* one not given: kept */
		all_right &= !memcmp(last, now, words * 8);
		free(r);
	}
	CHECK(all_right);
	CHECK(deltas > 350 && wholes >= 7); /* every fiftieth changed whole */
	/* the last word alone changed: the header, the map (272 bits, padded to 40 bytes)
	 * and the word; then none: the header and the map */
	now[words - 1]++;
	int delta;
	r = next_record(1, 400, now, last, words, &delta);
	CHECK(delta && r->size == sizeof(struct record_launch_delta) + 8 + 8 + 40 + 8);
	CHECK(same_stack(launch_delta_next(&d, r), now, words, 400));
	free(r);
	r = next_record(1, 401, now, last, words, &delta);
	CHECK(delta && r->size == sizeof(struct record_launch_delta) + 8 + 8 + 40);
	CHECK(same_stack(launch_delta_next(&d, r), now, words, 401));
	free(r);
	launch_delta_release(&d);
}

/* stacks of sizes that are not whole blocks of eight words: the last words apart */
static void test_short_tails(void)
{
	static const size_t sizes[] = { 37, 5, 9 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t words = sizes[k];
		uint64_t now[MOST_WORDS], last[MOST_WORDS];
		for (size_t w = 0; w < words; w++)
			now[w] = 0x1000 + w;
		memcpy(last, now, sizeof(now));
		struct launch_delta d = { 0 };
		struct record_header *r = whole_record(3, 1, now, words);
		CHECK(launch_delta_next(&d, r) != NULL);
		free(r);
		int all_right = 1, deltas = 0;
		for (uint16_t n = 2; n < 60; n++) {
			now[(n * 7) % words] ^= n;      /* one in the blocks or the tail */
			now[words - 1 - n % 2] += 1;   /* one of the last two */
			int delta;
			r = next_record(3, n, now, last, words, &delta);
			deltas += delta;
			all_right &= same_stack(launch_delta_next(&d, r), now, words, n);
			free(r);
		}
		CHECK(all_right);
		CHECK(deltas == 58); /* two words at most changed: smaller than the stack */
		launch_delta_release(&d);
	}
}

static void test_missing_base(void)
{
	size_t words = 64;
	uint64_t now[MOST_WORDS] = { 0 }, last[MOST_WORDS] = { 0 };
	struct launch_delta d = { 0 };
	struct record_header *r = whole_record(5, 1, now, words);
	CHECK(launch_delta_next(&d, r) != NULL);
	free(r);
	int delta;
	now[3] = 9;
	free(next_record(5, 2, now, last, words, &delta)); /* lost: never read */
	CHECK(delta);
	now[4] = 10;
	r = next_record(5, 3, now, last, words, &delta);
	CHECK(delta && launch_delta_next(&d, r) == NULL); /* number 3 after 1 */
	free(r);
	now[5] = 11;
	r = next_record(5, 4, now, last, words, &delta);
	CHECK(delta && launch_delta_next(&d, r) == NULL); /* nothing to build on now */
	free(r);
	r = whole_record(5, 5, now, words); /* whole again */
	memcpy(last, now, sizeof(now));
	CHECK(same_stack(launch_delta_next(&d, r), now, words, 5));
	free(r);
	now[6] = 12;
	r = next_record(5, 6, now, last, words, &delta);
	CHECK(delta && same_stack(launch_delta_next(&d, r), now, words, 6));
	free(r);
	/* a difference at another stack pointer: refused */
	now[7] = 13;
	r = next_record_at(5, 7, 0x7ffd0010, now, last, words, &delta);
	CHECK(delta && (((struct record_launch_delta *)r)->registers >> 7 & 1));
	CHECK(launch_delta_next(&d, r) == NULL);
	free(r);
	launch_delta_release(&d);
	/* numbers wrap from 65535 to 1 (0: none) */
	memset(&d, 0, sizeof(d));
	r = whole_record(6, 65535, now, words);
	memcpy(last, now, sizeof(now));
	CHECK(launch_delta_next(&d, r) != NULL);
	free(r);
	now[1] ^= 1;
	r = next_record(6, 1, now, last, words, &delta);
	CHECK(delta && same_stack(launch_delta_next(&d, r), now, words, 1));
	free(r);
	launch_delta_release(&d);
}

static void test_threads_and_corruption(void)
{
	size_t words = 32;
	uint64_t a[MOST_WORDS], b[MOST_WORDS], last_a[MOST_WORDS], last_b[MOST_WORDS];
	for (size_t w = 0; w < words; w++)
		a[w] = w, b[w] = 1000 + w;
	memcpy(last_a, a, sizeof(a));
	memcpy(last_b, b, sizeof(b));
	struct launch_delta d = { 0 };
	struct record_header *r = whole_record(1, 1, a, words);
	CHECK(launch_delta_next(&d, r) != NULL);
	free(r);
	r = whole_record(2, 1, b, words);
	CHECK(launch_delta_next(&d, r) != NULL);
	free(r);
	int delta;
	a[0] = 77, b[31] = 88; /* each thread's delta on its own last stack */
	struct record_header *rb = next_record(2, 2, b, last_b, words, &delta);
	struct record_header *ra = next_record(1, 2, a, last_a, words, &delta);
	CHECK(same_stack(launch_delta_next(&d, rb), b, words, 2));
	CHECK(same_stack(launch_delta_next(&d, ra), a, words, 2));
	free(ra);
	free(rb);
	/* a map with more bits than words follow, a count of words past the record, a
	 * count of words not the stack's: refused */
	a[1] = 5;
	r = next_record(1, 3, a, last_a, words, &delta);
	unsigned char *map = (unsigned char *)(stack_delta(r) + 1);
	map[3] |= 0x80;
	CHECK(delta && launch_delta_next(&d, r) == NULL);
	free(r);
	r = whole_record(1, 4, a, words);
	memcpy(last_a, a, sizeof(a));
	CHECK(launch_delta_next(&d, r) != NULL);
	free(r);
	a[2] = 6;
	r = next_record(1, 5, a, last_a, words, &delta);
	stack_delta(r)->changed = 1000;
	CHECK(delta && launch_delta_next(&d, r) == NULL);
	free(r);
	r = whole_record(1, 6, a, words);
	CHECK(launch_delta_next(&d, r) != NULL);
	free(r);
	a[3] = 7;
	r = next_record(1, 7, a, last_a, words, &delta);
	stack_delta(r)->words = (uint32_t)words + 8;
	CHECK(delta && launch_delta_next(&d, r) == NULL);
	free(r);
	launch_delta_release(&d);
}

/* A spool written before RECORD_LAUNCH_DELTA: differences as a whole sample (every
 * register) followed by the stack's (SAMPLE_STACK_DELTA), still rebuilt, and the two
 * kinds of difference rebuild on each other. */
static void test_older_spools(void)
{
	size_t words = 40;
	uint64_t now[MOST_WORDS], last[MOST_WORDS];
	static unsigned char out[MOST_WORDS * 8];
	for (size_t w = 0; w < words; w++)
		now[w] = 0x5000 + w;
	struct launch_delta d = { 0 };
	struct record_header *r = whole_record(4, 1, now, words);
	memcpy(last, now, sizeof(now));
	CHECK(same_stack(launch_delta_next(&d, r), now, words, 1));
	free(r);
	int all_right = 1;
	for (uint16_t n = 2; n < 40; n++) {
		now[n % words] ^= n;
		struct record_header *h;
		if (n % 2) { /* the older kind */
			size_t size = recorder_launch_stack_delta(out, sizeof(out), now, last, words);
			CHECK(size != 0);
			struct record_launch_stack *old = make_record(4, n, 0x7ffd0000, now, words, out, size);
			old->sample.registers[16] = 0x401000 + n;
			h = &old->header;
			last_registers[4][16] = 0x401000 + n; /* as the newer kind goes on from it */
		} else {
			int delta;
			h = next_record(4, n, now, last, words, &delta);
			all_right &= delta && h->type == RECORD_LAUNCH_DELTA;
		}
		all_right &= same_stack(launch_delta_next(&d, h), now, words, n);
		free(h);
	}
	CHECK(all_right);
	launch_delta_release(&d);
}

/* The recorder compares with AVX-512 where the machine has it, else with SSE2: both
 * ways give the same bytes and leave the same last stack, whatever changed and whether
 * the changed words fit the room or not. */
static void test_both_ways(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f")) {
		printf("test-launch-delta: both_ways skipped: this machine has no AVX-512\n");
		return;
	}
	static const size_t sizes[] = { 8, 9, 37, 272, 762, MOST_WORDS };
	static uint64_t now[MOST_WORDS], last_a[MOST_WORDS], last_b[MOST_WORDS];
	static unsigned char out_a[MOST_WORDS * 8 + 64], out_b[MOST_WORDS * 8 + 64];
	srand(11);
	int same = 1, deltas = 0, refused = 0;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t words = sizes[k];
		for (size_t w = 0; w < words; w++)
			now[w] = ((uint64_t)rand() << 32) | (uint64_t)rand();
		memcpy(last_a, now, sizeof(now));
		memcpy(last_b, now, sizeof(now));
		for (int n = 0; n < 300; n++) {
			size_t changes = n % 60 == 0 ? words : (size_t)rand() % 48;
			for (size_t c = 0; c < changes; c++)
				now[changes == words ? c : (size_t)rand() % words] ^= (uint64_t)rand() + 1;
			/* a room that holds the map and 16 changed words, or every word */
			size_t map_bytes = ((words + 7) / 8 + 7) & ~(size_t)7;
			size_t room = n % 3 ? sizeof(out_a) : 8 + map_bytes + 16 * 8;
			recorder_launch_delta_use_sse2(0);
			size_t a = recorder_launch_stack_delta(out_a, room, now, last_a, words);
			recorder_launch_delta_use_sse2(1);
			size_t b = recorder_launch_stack_delta(out_b, room, now, last_b, words);
			same &= a == b && !memcmp(out_a, out_b, a) &&
				!memcmp(last_a, last_b, words * 8);
			deltas += a != 0;
			refused += a == 0;
			if (!a) { /* whole, as the recorder then makes last */
				memcpy(last_a, now, words * 8);
				memcpy(last_b, now, words * 8);
			}
		}
	}
	recorder_launch_delta_use_sse2(0);
	CHECK(same);
	CHECK(deltas > 1000 && refused > 100); /* both kinds met */
#endif
}

int main(int argc, char **argv)
{
	static const struct check_test tests[] = {
		CHECK_TEST(roundtrip), CHECK_TEST(short_tails), CHECK_TEST(missing_base), CHECK_TEST(threads_and_corruption),
		CHECK_TEST(older_spools), CHECK_TEST(both_ways),
	};
	return check_main(argc, argv, "test-launch-delta", tests, sizeof(tests) / sizeof(tests[0]));
}
