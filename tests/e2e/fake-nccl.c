/* A stand-in for NCCL's libnccl.so.2 (none is installed here, and it needs a GPU): the
 * functions gpuprof's NCCL interposer wraps, doing nothing but handing out a
 * communicator, so that --nccl-trace's records are tested on the CPU. Where NCCL would
 * launch its kernels (an all-reduce outside a group, the outermost ncclGroupEnd) it calls
 * fake_nccl_launch when a test has set it (tests/e2e/cupti-replay.c replays a launch). */
#include <stdlib.h>

void (*fake_nccl_launch)(void);
static __thread int group_depth;

static void launch(void)
{
	if (fake_nccl_launch && !group_depth)
		fake_nccl_launch();
}

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
	launch();
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
	group_depth++;
	return 0;
}

int ncclGroupEnd(void)
{
	if (group_depth > 0 && --group_depth == 0)
		launch();
	return 0;
}
