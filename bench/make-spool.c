/* make-spool: writes a synthetic spool for the post-processing benchmark, with the
 * record mix of a busy traced program: per launch one API call and one kernel, and
 * one transfer with its API call every fourth launch.
 *
 *   make-spool PATH RECORDS */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool-writer.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: make-spool PATH RECORDS\n");
		return 2;
	}
	long long records = atoll(argv[2]);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || spool_write_header(fd, NULL) < 0) {
		perror(argv[1]);
		return 1;
	}
	static const char *names[] = { "", "bench-host", "make-spool", "clEnqueueNDRangeKernel",
				       "clEnqueueWriteBuffer", "gemm_tile", "softmax", "reduce",
				       "layer_norm", "bench device" };
	for (uint32_t i = 1; i < sizeof(names) / sizeof(names[0]); i++)
		put_string(fd, i, names[i]);
	struct record_process p = { { sizeof(p), RECORD_PROCESS, 0 }, 4242, 1, 1000, 2000, 1, 2, -1, -1 };
	put(fd, &p);
	struct record_agent a = { .header = { sizeof(a), RECORD_AGENT, 0 }, .id = 1, .type = AGENT_GPU,
				  .name_id = 9, .vendor_name_id = 9, .driver_version_id = 9 };
	put(fd, &a);
	uint64_t t = 1000000, corr = 0;
	for (long long made = 0; made < records;) {
		struct record_api_call api = { { sizeof(api), RECORD_API_CALL, 0 }, DOMAIN_OPENCL_API,
					       3, 4243, 0, ++corr, t, t + 900 };
		struct record_kernel k = { .header = { sizeof(k), RECORD_KERNEL, 0 }, .tid = 4243,
					   .agent_id = 1, .queue_id = 1, .name_id = 5 + (uint32_t)(corr % 4),
					   .correlation_id = corr, .dispatch_id = corr,
					   .start_ns = t + 1000, .end_ns = t + 5000 + corr % 977,
					   .grid = { 65536, 1, 1 }, .workgroup = { 256, 1, 1 } };
		put(fd, &api);
		put(fd, &k);
		made += 2;
		if (corr % 4 == 0 && made < records) {
			struct record_memory_copy c = { .header = { sizeof(c), RECORD_MEMORY_COPY, 0 },
							.tid = 4243, .queue_id = 1, .dst_agent_id = 1,
							.operation = COPY_OPERATION_COPY,
							.direction = COPY_HOST_TO_DEVICE, .function_id = 4,
							.bytes = 1 << 20, .correlation_id = ++corr,
							.start_ns = t + 6000, .end_ns = t + 9000 };
			api.function_id = 4;
			api.correlation_id = corr;
			put(fd, &api);
			put(fd, &c);
			made += 2;
		}
		t += 10000;
	}
	struct record_process_end end = { { sizeof(end), RECORD_PROCESS_END, 0 }, t };
	put(fd, &end);
	put_end(fd);
	return close(fd) < 0;
}
