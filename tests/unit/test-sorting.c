/* Unit tests of the sorts for data that grows with a run: the temporary record files and
 * the external sort (src/util/extsort.c): exact order and every record once, in memory
 * and through many runs on disk, the errors of an unusable temporary directory and of a
 * file that cannot grow; the in-place sort of pointers (src/util/sort.c) against qsort
 * on sorted, reversed, repeated and random keys. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "util/extsort.h"
#include "util/sort.h"

struct rec {
	uint32_t key;
	uint32_t pad;
	uint64_t seq;
	uint64_t payload;
};

static int by_key(const void *a, const void *b, void *arg)
{
	const struct rec *x = a, *y = b;
	(*(int *)arg)++;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* n records with keys from a small range (many equal), sorted with memory bytes: in
 * order of (key, seq), each once with its payload, after `passes` merge passes. */
static void sort_records(size_t n, size_t memory, unsigned passes)
{
	int compares = 0;
	struct extsort *s = extsort_begin(sizeof(struct rec), memory, by_key, &compares);
	struct error err = { "" };
	uint32_t state = 12345;
	int added = 0;
	for (size_t i = 0; i < n; i++) {
		state = state * 1103515245 + 12345;
		struct rec r = { (state >> 8) % 1000, 0, i, i * 7 + 3 };
		added += extsort_add(s, &r, &err) == 0;
	}
	CHECK(added == (int)n);
	CHECK(extsort_count(s) == n);
	CHECK(extsort_sorted(s, &err) == 0);
	unsigned char *seen = calloc(n ? n : 1, 1);
	const void *v;
	struct rec last = { 0, 0, 0, 0 };
	size_t count = 0, ordered = 0, right = 0, once = 0;
	int got;
	while ((got = extsort_next(s, &v, &err)) > 0) {
		const struct rec *r = v;
		ordered += !count || r->key > last.key || (r->key == last.key && r->seq > last.seq);
		right += r->seq < n && r->payload == r->seq * 7 + 3;
		if (r->seq < n && !seen[r->seq]++)
			once++;
		last = *r;
		count++;
	}
	CHECK(got == 0);
	CHECK(count == n);
	CHECK(ordered == n);
	CHECK(right == n);
	CHECK(once == n);
	CHECK(extsort_next(s, &v, &err) == 0); /* stays at the end */
	CHECK(extsort_merge_passes(s) == passes);
	free(seen);
	extsort_free(s);
}

static void test_sorts(void)
{
	sort_records(0, 1 << 20, 0);
	sort_records(1, 1 << 20, 0);
	sort_records(5000, 1 << 20, 0);     /* in memory */
	sort_records(200000, 4 << 20, 0);   /* 2 runs of 131,072: merged at once */
	/* 98 runs of 2,048, a buffer of 16 KiB each: 4 merged at a time, 98 -> 25 -> 7 -> 2 */
	sort_records(200000, 64 << 10, 3);
	/* runs of the smallest size, 16 records: 6,250 of them, 2 at a time (12 passes) */
	sort_records(100000, 1, 12);
}

static void test_records(void)
{
	struct tempfile t;
	struct error err = { "" };
	CHECK(tempfile_open(&t, &err) == 0);
	struct record_writer w;
	record_writer_begin(&w, &t, sizeof(uint64_t), 100); /* a buffer of 12 records */
	int ok = 0;
	for (uint64_t i = 0; i < 1000; i++)
		ok += record_writer_add(&w, &i, &err) == 0;
	CHECK(ok == 1000);
	CHECK(record_writer_end(&w, &err) == 0);
	CHECK(t.size == 8000);
	/* a range read back through a small buffer, with one record rewritten in place */
	uint64_t patched = 999999;
	CHECK(tempfile_pwrite(&t, 500 * 8, &patched, 8, &err) == 0);
	struct record_reader r;
	record_reader_begin(&r, &t, sizeof(uint64_t), 490, 510, 24);
	const void *v;
	uint64_t expect = 490, right = 0, count = 0;
	while (record_reader_next(&r, &v, &err) > 0) {
		uint64_t x = *(const uint64_t *)v;
		right += x == (expect == 500 ? patched : expect);
		expect++, count++;
	}
	record_reader_end(&r);
	CHECK(count == 20 && right == 20);
	tempfile_close(&t);
	CHECK(t.fd == -1);
}

static void test_errors(void)
{
	struct error err = { "" };
	char *saved = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	setenv("TMPDIR", "/nonexistent-gpuprof-dir", 1);
	int compares = 0;
	struct extsort *s = extsort_begin(sizeof(struct rec), 1, by_key, &compares);
	int rc = 0;
	for (uint64_t i = 0; rc == 0 && i < 100; i++) {
		struct rec r = { (uint32_t)(100 - i), 0, i, 0 };
		rc = extsort_add(s, &r, &err);
	}
	CHECK(rc == -1);
	CHECK(strstr(err.message, "/nonexistent-gpuprof-dir") != NULL);
	CHECK(strstr(err.message, "TMPDIR") != NULL);
	extsort_free(s);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
	/* a file that cannot grow (as on a full disk): the spill fails with the reason */
	pid_t child = fork();
	if (child == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit limit = { 64 << 10, 64 << 10 };
		setrlimit(RLIMIT_FSIZE, &limit);
		struct extsort *big = extsort_begin(sizeof(struct rec), 32 << 10, by_key, &compares);
		struct error e = { "" };
		int failed = 0;
		for (uint64_t i = 0; !failed && i < 100000; i++) {
			struct rec r = { (uint32_t)i, 0, i, 0 };
			failed = extsort_add(big, &r, &e) != 0;
		}
		int sorted = failed || extsort_sorted(big, &e) != 0;
		extsort_free(big);
		_exit(sorted && strstr(e.message, "cannot write a temporary file") &&
		      strstr(e.message, "File too large") ? 0 : 1);
	}
	int status = -1;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Keys through pointers, ties broken by address: a total order, as the callers' are. */
static int by_pointed(const void *a, const void *b)
{
	const uint32_t *x = *(const uint32_t *const *)a, *y = *(const uint32_t *const *)b;
	if (*x != *y)
		return *x < *y ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void test_sort_pointers(void)
{
	enum { N = 20000 };
	static uint32_t keys[N];
	static const void *items[N], *expect[N];
	for (int pattern = 0; pattern < 5; pattern++) {
		uint32_t state = 7;
		for (size_t n = 0; n <= N; n = n ? n * 3 : 1) {
			for (size_t i = 0; i < n; i++) {
				state = state * 1103515245 + 12345;
				keys[i] = pattern == 0 ? (uint32_t)i             /* sorted */
					: pattern == 1 ? (uint32_t)(n - i)       /* reversed */
					: pattern == 2 ? 5                       /* all equal */
					: pattern == 3 ? (uint32_t)(i % 7)       /* few values */
					: state >> 4;                            /* random */
				items[i] = expect[i] = &keys[i];
			}
			/* a scrambled start, the same for both */
			for (size_t i = n; i > 1; i--) {
				state = state * 1103515245 + 12345;
				size_t j = (state >> 8) % i;
				const void *t = items[i - 1];
				items[i - 1] = items[j];
				items[j] = t;
				expect[i - 1] = items[i - 1];
				expect[j] = items[j];
			}
			sort_array(expect, n, sizeof(*expect), by_pointed);
			sort_pointers(items, n, by_pointed);
			CHECK(!memcmp(items, expect, n * sizeof(*items)));
		}
	}
}

int main(int argc, char **argv)
{
	static const struct check_test tests[] = {
		CHECK_TEST(sort_pointers), CHECK_TEST(sorts), CHECK_TEST(records), CHECK_TEST(errors),
	};
	return check_main(argc, argv, "test-sorting", tests, sizeof(tests) / sizeof(tests[0]));
}
