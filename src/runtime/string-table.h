/* The recorder's names: each text once, with an id from 1 in the order first met
 * (RECORD_STRING's id). Open addressing by hash; not thread-safe: the recorder holds its
 * metadata lock around it. */
#ifndef GPUPROF_RUNTIME_STRING_TABLE_H
#define GPUPROF_RUNTIME_STRING_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct string_table {
	struct string_entry {
		char *text;  /* NULL: an empty slot */
		uint32_t id;
	} *slots;
	size_t capacity, count;
};

/* The id of text, added when new (*added set then): 0 without memory. */
uint32_t string_table_id(struct string_table *t, const char *text, int *added);

#endif
