/* The recorder's names (see string-table.h). */
#include "runtime/string-table.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

uint32_t string_table_id(struct string_table *t, const char *text, int *added)
{
	*added = 0;
	if (t->count * 2 >= t->capacity) {
		size_t capacity = t->capacity ? t->capacity * 2 : 256;
		struct string_entry *slots = calloc(capacity, sizeof(*slots));
		if (!slots)
			return 0;
		for (size_t i = 0; i < t->capacity; i++) {
			if (!t->slots[i].text)
				continue;
			size_t j = hash_string(t->slots[i].text) & (capacity - 1);
			while (slots[j].text)
				j = (j + 1) & (capacity - 1);
			slots[j] = t->slots[i];
		}
		free(t->slots);
		t->slots = slots;
		t->capacity = capacity;
	}
	size_t j = hash_string(text) & (t->capacity - 1);
	for (; t->slots[j].text; j = (j + 1) & (t->capacity - 1))
		if (!strcmp(t->slots[j].text, text))
			return t->slots[j].id;
	char *copy = strdup(text);
	if (!copy)
		return 0;
	t->slots[j] = (struct string_entry){ copy, (uint32_t)++t->count };
	*added = 1;
	return t->slots[j].id;
}
