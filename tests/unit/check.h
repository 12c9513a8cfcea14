/* A minimal test harness for the C unit tests: CHECK() counts and reports, and
 * check_summary() prints the closing "N passed, N failed" line. */
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

#endif
