/* A program that calls NCCL as a data-parallel trainer does, for --nccl-trace against
 * the stand-in library (fake-nccl.c):
 *   nccl-app RANK NRANKS STEPS
 * joins the communicator of a fixed unique id as RANK of NRANKS, then per step an
 * all-reduce of 1024 floats; then a broadcast of 256 int32 from rank 0, a grouped
 * send/recv of 100 doubles around the ring, an all-gather of 64 float16 per rank and a
 * reduce-scatter of 32 bfloat16 per rank.
 *
 * Built three ways: the program linked with NCCL (as a C++ trainer is); with
 * NCCL_APP_LIBRARY, a library linked with NCCL that exports nccl_app_run; with
 * NCCL_APP_LOADER, a program that loads that library privately (RTLD_LOCAL, as Python
 * loads PyTorch and PyTorch its NCCL) and runs it: NCCL is then outside the global scope
 * that dlsym(RTLD_NEXT) searches. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct nccl_comm *ncclComm_t;
typedef struct {
	char internal[128];
} ncclUniqueId;

int ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
int ncclCommDestroy(ncclComm_t comm);
int ncclAllReduce(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, void *st);
int ncclBroadcast(const void *s, void *r, size_t n, int t, int root, ncclComm_t c, void *st);
int ncclAllGather(const void *s, void *r, size_t n, int t, ncclComm_t c, void *st);
int ncclReduceScatter(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, void *st);
int ncclSend(const void *s, size_t n, int t, int peer, ncclComm_t c, void *st);
int ncclRecv(void *r, size_t n, int t, int peer, ncclComm_t c, void *st);
int ncclGroupStart(void);
int ncclGroupEnd(void);

enum { INT32 = 2, FLOAT16 = 6, FLOAT32 = 7, FLOAT64 = 8, BFLOAT16 = 9, SUM = 0 };

#ifdef NCCL_APP_LOADER
int main(int argc, char **argv)
{
	/* by its path beside this program (a sanitizer's runtime intercepts dlopen(), which
	 * then does not search this program's run path) */
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
	if (n <= 0)
		return 2;
	path[n] = '\0';
	strcpy(strrchr(path, '/') + 1, NCCL_APP_LOADER);
	void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*run)(int, char **) = library ? (int (*)(int, char **))dlsym(library, "nccl_app_run")
					   : NULL;
	if (!run) {
		fprintf(stderr, "nccl-app: %s\n", dlerror());
		return 2;
	}
	return run(argc, argv);
}
#else
#ifdef NCCL_APP_LIBRARY
__attribute__((visibility("default"))) int nccl_app_run(int argc, char **argv)
#else
int main(int argc, char **argv)
#endif
{
	if (argc != 4)
		return 2;
	int rank = atoi(argv[1]), n = atoi(argv[2]), steps = atoi(argv[3]);
	ncclUniqueId id;
	memset(&id, 0, sizeof(id));
	strcpy(id.internal, "gpuprof-test-unique-id");
	ncclComm_t comm;
	if (ncclCommInitRank(&comm, n, id, rank))
		return 1;
	static char buffer[1 << 16];
	for (int s = 0; s < steps; s++)
		ncclAllReduce(buffer, buffer, 1024, FLOAT32, SUM, comm, NULL);
	ncclBroadcast(buffer, buffer, 256, INT32, 0, comm, NULL);
	ncclGroupStart();
	ncclSend(buffer, 100, FLOAT64, (rank + 1) % n, comm, NULL);
	ncclRecv(buffer, 100, FLOAT64, (rank + n - 1) % n, comm, NULL);
	ncclGroupEnd();
	ncclAllGather(buffer, buffer, 64, FLOAT16, comm, NULL);
	ncclReduceScatter(buffer, buffer, 32, BFLOAT16, SUM, comm, NULL);
	ncclCommDestroy(comm);
	printf("rank %d of %d: %d steps\n", rank, n, steps);
	return 0;
}
#endif
