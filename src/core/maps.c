/* The ELF files a process maps (see maps.h). */
#include "core/maps.h"

#include <stdio.h>
#include <string.h>

int maps_modules(const char *maps_path, maps_module_fn each, void *arg)
{
	FILE *f = fopen(maps_path, "re");
	if (!f)
		return -1;
	char line[4352], path[4096], last[4096] = "";
	uint64_t first = 0, high = 0, first_offset = 0;
	int open_module = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, offset;
		char perms[8];
		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms,
			   &offset, path) < 4)
			continue;
		if (!strcmp(path, "[vdso]")) { /* no file: its build-id names the image */
			each(arg, start, end, 0, path);
			continue;
		}
		if (path[0] != '/')
			continue;
		if (open_module && !strcmp(path, last)) {
			high = end; /* the same file's next mapping */
			continue;
		}
		if (open_module)
			each(arg, first, high, first_offset, last);
		snprintf(last, sizeof(last), "%s", path);
		first = start;
		high = end;
		first_offset = offset;
		open_module = 1;
	}
	if (open_module)
		each(arg, first, high, first_offset, last);
	fclose(f);
	return 0;
}
