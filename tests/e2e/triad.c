/* A plain C triad (a[i] = b[i] + s * c[i]) on every CPU of the machine, one thread per
 * CPU on its own share: the memory bandwidth a program reaches, the peer the tests hold
 * gpuprof roofline's device-memory figure against on the CPU. Prints GB/s counted as
 * rocprof-compute and STREAM count (3 arrays of 8-byte values per element), the mean
 * of the timed repetitions after a warm-up. usage: triad [MiB per array] [repetitions] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct share {
	double *a, *b, *c;
	size_t first, end;
};

static pthread_barrier_t start, finish;
static int repetitions;

static void *worker(void *arg)
{
	struct share *s = arg;
	for (size_t i = s->first; i < s->end; i++) { /* pages placed by the thread that uses them */
		s->a[i] = 0;
		s->b[i] = 1;
		s->c[i] = 2;
	}
	for (int r = 0; r <= repetitions; r++) {
		pthread_barrier_wait(&start);
		for (size_t i = s->first; i < s->end; i++)
			s->a[i] = s->b[i] + 3.0 * s->c[i];
		pthread_barrier_wait(&finish);
	}
	return NULL;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 512;
	repetitions = argc > 2 ? atoi(argv[2]) : 10;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		cpus = 1;
	size_t n = mib * 1048576 / sizeof(double);
	double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
	double *c = malloc(n * sizeof(double));
	if (!a || !b || !c || repetitions < 1) {
		fprintf(stderr, "triad: cannot allocate 3 x %zu MiB\n", mib);
		return 1;
	}
	pthread_barrier_init(&start, NULL, (unsigned)cpus + 1);
	pthread_barrier_init(&finish, NULL, (unsigned)cpus + 1);
	pthread_t *threads = calloc((size_t)cpus, sizeof(*threads));
	struct share *shares = calloc((size_t)cpus, sizeof(*shares));
	for (long t = 0; t < cpus; t++) {
		shares[t] = (struct share){ a, b, c, n * t / cpus, n * (t + 1) / cpus };
		pthread_create(&threads[t], NULL, worker, &shares[t]);
	}
	double total = 0;
	for (int r = 0; r <= repetitions; r++) { /* the first is the warm-up */
		pthread_barrier_wait(&start);
		double t0 = now();
		pthread_barrier_wait(&finish);
		if (r)
			total += now() - t0;
	}
	for (long t = 0; t < cpus; t++)
		pthread_join(threads[t], NULL);
	double check = 0;
	for (size_t i = 0; i < n; i += 4096)
		check += a[i];
	printf("%.3f\n", 3.0 * n * sizeof(double) * repetitions / total / 1e9);
	free(threads);
	free(shares);
	free(a);
	free(b);
	free(c);
	return check == 7.0 * ((n + 4095) / 4096) ? 0 : 1;
}
