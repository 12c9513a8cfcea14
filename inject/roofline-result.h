/* The statistics and the result line of the roofline helpers (inject/opencl/roofline.c,
 * inject/cuda/roofline.cu; the line protocol is described in the first): the mean of the
 * experiments' rates and its 95 % confidence interval by Student's t. */
#ifndef GPUPROF_ROOFLINE_RESULT_H
#define GPUPROF_ROOFLINE_RESULT_H

#include <math.h>
#include <stdio.h>

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
