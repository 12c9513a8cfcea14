/* What the roofline helpers (inject/opencl/roofline.c, inject/cuda/roofline.cu; the line
 * protocol is described in the first) share: their command line, and the mean of the
 * experiments' rates with its 95 % confidence interval by Student's t. */
#ifndef GPUPROF_ROOFLINE_RESULT_H
#define GPUPROF_ROOFLINE_RESULT_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "NAME --list" or "NAME --device N [--experiments N] [--target-ms MS]": 0, or 2 after
 * the usage on stderr. */
static int roofline_arguments(int argc, char **argv, const char *name, int *list, int *index,
			      int *experiments, double *target_ms)
{
	*list = 0, *index = -1, *experiments = 100, *target_ms = 5;
	int bad = 0;
	for (int i = 1; i < argc && !bad; i++) {
		if (!strcmp(argv[i], "--list"))
			*list = 1;
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			*index = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--experiments") && i + 1 < argc)
			*experiments = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--target-ms") && i + 1 < argc)
			*target_ms = atof(argv[++i]);
		else
			bad = 1;
	}
	if (!bad && (*list || *index >= 0) && *experiments >= 2 && *target_ms > 0)
		return 0;
	fprintf(stderr, "usage: %s --list\n"
			"       %s --device N [--experiments N] [--target-ms MS]\n", name, name);
	return 2;
}

/* The two-sided 95 % quantile of Student's t with df degrees of freedom. */
static double roofline_t95(int df)
{
	static const double table[] = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
					2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
					2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
					2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
					2.045, 2.042 };
	if (df < 1)
		return NAN;
	if (df <= 30)
		return table[df - 1];
	return 1.960 + 2.4 / df; /* within 0.3 % of the exact value beyond 30 */
}

/* Prints "result COLUMN MEAN LOW HIGH" from the sum and the sum of squares of n rates. */
static void roofline_result(const char *column, double sum, double sum2, int n)
{
	double mean = sum / n;
	double variance = n > 1 ? (sum2 - n * mean * mean) / (n - 1) : 0;
	double half = n > 1 ? roofline_t95(n - 1) * sqrt(variance > 0 ? variance : 0) / sqrt(n)
			    : 0;
	printf("result\t%s\t%.9g\t%.9g\t%.9g\n", column, mean, mean - half, mean + half);
	fflush(stdout);
}

#endif
