/* Libraries already loaded, found by name (see loaded.h). */
#include "loaded.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

struct search {
	loaded_wanted wanted;
	const char *symbol;
	void *handle, *address;
};

static int search_library(struct dl_phdr_info *info, size_t size, void *data)
{
	struct search *s = data;
	if (!info->dlpi_name || !*info->dlpi_name)
		return 0;
	const char *base = strrchr(info->dlpi_name, '/');
	if (!s->wanted(base ? base + 1 : info->dlpi_name))
		return 0;
	void *handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!handle)
		return 0;
	void *address = s->symbol ? dlsym(handle, s->symbol) : handle;
	if (!address) {
		dlclose(handle);
		return 0;
	}
	s->handle = handle;
	s->address = address;
	return 1;
}

void *loaded_find(loaded_wanted wanted, const char *symbol, void **address)
{
	struct search s = { wanted, symbol, NULL, NULL };
	dl_iterate_phdr(search_library, &s);
	if (address)
		*address = s.address;
	return s.handle;
}

void *loaded_next(loaded_wanted wanted, const char *name)
{
	void *next = dlsym(RTLD_NEXT, name);
	if (!next)
		loaded_find(wanted, name, &next);
	return next;
}
