/* Which frames are the user's code (see user-code.h). */
#include "analysis/user-code.h"

#include <stdlib.h>
#include <string.h>

/* Whether path starts with one of the ':'-separated prefixes of the variable. */
static int under(const char *path, const char *variable)
{
	const char *list = getenv(variable);
	while (list && *list) {
		size_t n = strcspn(list, ":");
		if (n && !strncmp(path, list, n))
			return 1;
		list += n + (list[n] == ':');
	}
	return 0;
}

/* A directory lib/python3.N/ (or lib64/) on the path: Python's own library, and the
 * packages installed beside it. */
static int python_library(const char *path)
{
	for (const char *at = strstr(path, "/python"); at; at = strstr(at + 1, "/python")) {
		size_t dir = (size_t)(at - path);
		int lib = (dir >= 4 && !strncmp(at - 4, "/lib", 4)) ||
			  (dir >= 6 && !strncmp(at - 6, "/lib64", 6));
		const char *version = at + 7;
		if (lib && version[0] >= '2' && version[0] <= '9' && version[1] == '.' &&
		    strchr(version, '/'))
			return 1;
	}
	return 0;
}

int user_code(const char *module)
{
	if (!module || !*module || module[0] == '[')
		return 0;
	/* Python code without a file: what `python3 -c` or stdin gave is the user's; what a
	 * library made at run time ("<pyopencl invoker for 'f'>") or froze is not */
	if (module[0] == '<')
		return !strcmp(module, "<string>") || !strcmp(module, "<stdin>");
	if (under(module, "GPUPROF_USER_CODE"))
		return 1;
	if (under(module, "GPUPROF_LIBRARY_CODE"))
		return 0;
	if (strstr(module, "/site-packages/") || strstr(module, "/dist-packages/") ||
	    python_library(module))
		return 0;
	const char *base = strrchr(module, '/');
	base = base ? base + 1 : module;
	size_t n = strlen(base);
	if (n > 3 && !strcmp(base + n - 3, ".py"))
		return 1;
	if (!strncmp(base, "python", 6) || !strncmp(base, "libpython", 9))
		return 0;
	return strstr(base, ".so") == NULL;
}
