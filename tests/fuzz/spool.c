/* Fuzz target: the spool reader and everything made from what it read. The input is a
 * spool file; it becomes every output `gpuprof trace` writes (the database, CSV, JSON,
 * pftrace, the summary), with kernels renamed after their marker ranges. Each chunk's
 * checksum is set right first: a mutation would otherwise almost never get past it
 * (the end-to-end tests cover checksums that do not match). */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/spool.h"
#include "fuzz.h"
#include "commands/output.h"

static void fix_checksums(uint8_t *data, size_t size)
{
	struct spool_file_header header;
	if (size < sizeof(header))
		return;
	memcpy(&header, data, sizeof(header));
	size_t at = header.header_size;
	struct spool_chunk_header chunk;
	while (at <= size && size - at >= sizeof(chunk)) {
		memcpy(&chunk, data + at, sizeof(chunk));
		if (chunk.magic != SPOOL_CHUNK_MAGIC || chunk.payload_size > size - at - sizeof(chunk))
			return;
		chunk.crc32 = spool_crc32(data + at + sizeof(chunk), chunk.payload_size);
		memcpy(data + at, &chunk, sizeof(chunk));
		at += sizeof(chunk) + chunk.payload_size;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	fix_checksums(copy, size);
	const char *spool = fuzz_file("input.spool", copy, size);
	free(copy);
	char prefix[4096];
	snprintf(prefix, sizeof(prefix), "%s/out", fuzz_directory());
	struct output_request request = {
		.formats = FORMAT_CSV | FORMAT_SQLITE | FORMAT_JSON | FORMAT_PFTRACE,
		.summary = 1,
		.options = { .rename_kernels = 1, .stats = 1, .summary_units = "usec" },
	};
	struct error err;
	output_from_spool(spool, prefix, &request, 1, &err);
	return 0;
}
