/* A stand-in for NCCL's libnccl.so.2 (none is installed here, and it needs a GPU): the
 * functions gpuprof's NCCL interposer wraps, doing nothing but handing out a
 * communicator, so that --nccl-trace's records are tested on the CPU. */
#include <stdlib.h>

typedef struct nccl_comm *ncclComm_t;
typedef struct {
	char internal[128];
} ncclUniqueId;

int ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	*comm = malloc(16);
	return *comm ? 0 : 1;
}

int ncclCommDestroy(ncclComm_t comm)
{
	free(comm);
	return 0;
}

int ncclAllReduce(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, void *st)
{
	return 0;
}

int ncclBroadcast(const void *s, void *r, size_t n, int t, int root, ncclComm_t c, void *st)
{
	return 0;
}

int ncclAllGather(const void *s, void *r, size_t n, int t, ncclComm_t c, void *st)
{
	return 0;
}

int ncclReduceScatter(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, void *st)
{
	return 0;
}

int ncclSend(const void *s, size_t n, int t, int peer, ncclComm_t c, void *st)
{
	return 0;
}

int ncclRecv(void *r, size_t n, int t, int peer, ncclComm_t c, void *st)
{
	return 0;
}

int ncclGroupStart(void)
{
	return 0;
}

int ncclGroupEnd(void)
{
	return 0;
}
