/* A minimal test harness for the C unit tests: CHECK() counts and reports, and
 * check_summary() prints the closing "N passed, N failed" line. A program's tests are
 * registered by name in a table (CHECK_TEST) and run by check_main(): all of them, or
 * those named on the command line ("build/tests/test-core spool stats"), or their names
 * with --list. */
#ifndef GPUPROF_TESTS_CHECK_H
#define GPUPROF_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond) \
	do { \
		if (cond) { \
			check_passed++; \
		} else { \
			check_failed++; \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		} \
	} while (0)

#define CHECK_STR(a, b) \
	do { \
		const char *a_ = (a), *b_ = (b); \
		if (a_ && b_ && !strcmp(a_, b_)) { \
			check_passed++; \
		} else { \
			check_failed++; \
			fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\"\n", __FILE__, __LINE__, \
				b_ ? b_ : "(null)", a_ ? a_ : "(null)"); \
		} \
	} while (0)

static inline int check_summary(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
	return check_failed ? 1 : 0;
}

struct check_test {
	const char *name;
	void (*run)(void);
};

/* { "spool", test_spool } for a function test_spool */
#define CHECK_TEST(name) { #name, test_##name }

/* Runs the tests named in argv (every one when none is), or lists them (--list); a name
 * that is no test is an error. Returns the exit status (check_summary()'s). */
static inline int check_main(int argc, char **argv, const char *program,
			     const struct check_test *tests, size_t count)
{
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < count; i++)
			printf("%s\n", tests[i].name);
		return 0;
	}
	for (int a = 1; a < argc; a++) {
		size_t i = 0;
		while (i < count && strcmp(tests[i].name, argv[a]))
			i++;
		if (i == count) {
			fprintf(stderr, "%s: no test is named '%s' (--list lists them)\n", program,
				argv[a]);
			return 2;
		}
	}
	for (size_t i = 0; i < count; i++) {
		int asked = argc == 1;
		for (int a = 1; a < argc && !asked; a++)
			asked = !strcmp(tests[i].name, argv[a]);
		if (asked)
			tests[i].run();
	}
	return check_summary(program);
}

#endif
