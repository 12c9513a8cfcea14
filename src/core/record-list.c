/* Lists and blocks of records that outgrow memory (see struct record_list and struct
 * record_block in recording.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/recording.h"
#include "util/extsort.h"
#include "util/strbuf.h"

/* The list's pointers in a temporary file of bytes, mapped: 0, or -1 where the file
 * cannot be had or grown (the list stays in memory). */
static int list_map(struct record_list *list, size_t bytes)
{
	if (!list->mapped) {
		struct tempfile t;
		if (tempfile_open(&t, NULL))
			return -1;
		list->fd = t.fd;
	}
	void *map = MAP_FAILED;
	if (ftruncate(list->fd, (off_t)bytes) == 0)
		map = list->mapped ? mremap(list->items, list->alloc * sizeof(*list->items), bytes,
					    MREMAP_MAYMOVE)
				   : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, list->fd, 0);
	if (map == MAP_FAILED) {
		if (!list->mapped)
			close(list->fd);
		return -1;
	}
	if (!list->mapped) {
		memcpy(map, list->items, list->count * sizeof(*list->items));
		free(list->items);
		list->mapped = 1;
	}
	list->items = map;
	return 0;
}

void record_list_add(struct record_list *list, const struct record_header *h)
{
	if (list->count == list->alloc) {
		size_t alloc = list->alloc ? list->alloc * 2 : 1024;
		size_t bytes = alloc * sizeof(*list->items);
		if (list->mapped || bytes > RECORD_LIST_IN_MEMORY) {
			if (list_map(list, bytes) && list->mapped) {
				/* a file that cannot grow: its pages copied back to memory */
				const struct record_header **copy = xcalloc(alloc, sizeof(*copy));
				memcpy(copy, list->items, list->count * sizeof(*copy));
				munmap(list->items, list->alloc * sizeof(*list->items));
				close(list->fd);
				list->mapped = 0;
				list->items = copy;
			} else if (!list->mapped) {
				list->items = xrealloc(list->items, bytes);
			}
		} else {
			list->items = xrealloc(list->items, bytes);
		}
		list->alloc = alloc;
	}
	list->items[list->count++] = h;
}

void record_list_release(struct record_list *list)
{
	if (list->mapped) {
		munmap(list->items, list->alloc * sizeof(*list->items));
		close(list->fd);
	} else {
		free(list->items);
	}
	memset(list, 0, sizeof(*list));
}

void *record_block_alloc(struct record_block *b, size_t bytes)
{
	memset(b, 0, sizeof(*b));
	if (!bytes)
		return NULL;
	b->bytes = bytes;
	if (bytes > RECORD_LIST_IN_MEMORY) {
		struct tempfile t;
		if (tempfile_open(&t, NULL) == 0) {
			void *map = ftruncate(t.fd, (off_t)bytes) == 0
				    ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, t.fd, 0)
				    : MAP_FAILED;
			tempfile_close(&t); /* the mapping keeps the file */
			if (map != MAP_FAILED) {
				b->mapped = 1;
				return b->data = map;
			}
		}
	}
	return b->data = xcalloc(1, bytes);
}

void record_block_free(struct record_block *b)
{
	if (b->mapped)
		munmap(b->data, b->bytes);
	else
		free(b->data);
	memset(b, 0, sizeof(*b));
}
