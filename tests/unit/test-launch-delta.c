/* Unit tests of launch stacks given as their difference from the thread's previous one:
 * the recorder's encoding (recorder_launch_stack_delta, runtime/launch-stack.c) read back
 * by the converter's (launch_delta_next, core/launch-delta.c) gives every stack byte for
 * byte, whatever changed; a stack whose base is missing (a record lost, a number out of
 * order, another stack pointer or size) or whose map or counts are corrupt is refused, and so is
 * every delta after it until a whole stack; threads are rebuilt apart. */
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

/* The record of `now` after `last` (which becomes now), as the recorder writes it. */
static struct record_launch_stack *next_record(uint32_t tid, uint16_t number, const uint64_t *now,
					       uint64_t *last, size_t words, int *delta)
{
	static unsigned char out[MOST_WORDS * 8];
	size_t size = recorder_launch_stack_delta(out, sizeof(out), now, last, words);
	if (!size)
		memcpy(last, now, words * 8);
	*delta = size != 0;
	return make_record(tid, number, 0x7ffd0000, now, words, size ? out : NULL, size);
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
	struct record_launch_stack *r = make_record(1, 1, 0x7ffd0000, now, words, NULL, 0);
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
		all_right &= same_stack(launch_delta_next(&d, r), now, words, n);
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
	CHECK(delta && r->sample.header.size == sizeof(r->sample) + 8 + 40 + 8);
	CHECK(same_stack(launch_delta_next(&d, r), now, words, 400));
	free(r);
	r = next_record(1, 401, now, last, words, &delta);
	CHECK(delta && r->sample.header.size == sizeof(r->sample) + 8 + 40);
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
		struct record_launch_stack *r = make_record(3, 1, 0x7ffd0000, now, words, NULL, 0);
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
	struct record_launch_stack *r = make_record(5, 1, 0x7ffd0000, now, words, NULL, 0);
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
	r = make_record(5, 5, 0x7ffd0000, now, words, NULL, 0); /* whole again */
	memcpy(last, now, sizeof(now));
	CHECK(same_stack(launch_delta_next(&d, r), now, words, 5));
	free(r);
	now[6] = 12;
	r = next_record(5, 6, now, last, words, &delta);
	CHECK(delta && same_stack(launch_delta_next(&d, r), now, words, 6));
	/* the same delta at another stack pointer, or of another size: refused */
	r->header.flags = 7;
	r->sample.registers[7] += 16;
	CHECK(launch_delta_next(&d, r) == NULL);
	free(r);
	launch_delta_release(&d);
	/* numbers wrap from 65535 to 1 (0: none) */
	memset(&d, 0, sizeof(d));
	r = make_record(6, 65535, 0x7ffd0000, now, words, NULL, 0);
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
	struct record_launch_stack *r = make_record(1, 1, 0x7ffd0000, a, words, NULL, 0);
	CHECK(launch_delta_next(&d, r) != NULL);
	free(r);
	r = make_record(2, 1, 0x7ffd0000, b, words, NULL, 0);
	CHECK(launch_delta_next(&d, r) != NULL);
	free(r);
	int delta;
	a[0] = 77, b[31] = 88; /* each thread's delta on its own last stack */
	struct record_launch_stack *rb = next_record(2, 2, b, last_b, words, &delta);
	struct record_launch_stack *ra = next_record(1, 2, a, last_a, words, &delta);
	CHECK(same_stack(launch_delta_next(&d, rb), b, words, 2));
	CHECK(same_stack(launch_delta_next(&d, ra), a, words, 2));
	free(ra);
	free(rb);
	/* a map with more bits than words follow, a count of words past the record, a
	 * count of words not the stack's: refused */
	a[1] = 5;
	r = next_record(1, 3, a, last_a, words, &delta);
	unsigned char *map = (unsigned char *)((struct launch_stack_delta *)(r + 1) + 1);
	map[3] |= 0x80;
	CHECK(delta && launch_delta_next(&d, r) == NULL);
	free(r);
	r = make_record(1, 4, 0x7ffd0000, a, words, NULL, 0);
	memcpy(last_a, a, sizeof(a));
	CHECK(launch_delta_next(&d, r) != NULL);
	free(r);
	a[2] = 6;
	r = next_record(1, 5, a, last_a, words, &delta);
	((struct launch_stack_delta *)(r + 1))->changed = 1000;
	CHECK(delta && launch_delta_next(&d, r) == NULL);
	free(r);
	r = make_record(1, 6, 0x7ffd0000, a, words, NULL, 0);
	CHECK(launch_delta_next(&d, r) != NULL);
	free(r);
	a[3] = 7;
	r = next_record(1, 7, a, last_a, words, &delta);
	((struct launch_stack_delta *)(r + 1))->words = (uint32_t)words + 8;
	CHECK(delta && launch_delta_next(&d, r) == NULL);
	free(r);
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
		CHECK_TEST(both_ways),
	};
	return check_main(argc, argv, "test-launch-delta", tests, sizeof(tests) / sizeof(tests[0]));
}
