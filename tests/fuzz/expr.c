/* Fuzz target: the metric catalog's expressions (gpuprof compute). The input is parsed;
 * what parses is evaluated with every name given a value from the input's bytes, one
 * name without a value, and its names listed. */
#include <stdlib.h>
#include <string.h>

#include "compute/expr.h"
#include "fuzz.h"

static int lookup(const char *name, double *value, void *arg)
{
	(void)arg;
	size_t n = strlen(name);
	if (name[n - 1] == 'x') /* a name without a value */
		return -1;
	*value = (double)((unsigned char)name[0] * 7 + n) / 3.0 - 40;
	return 0;
}

static void count(const char *name, void *arg)
{
	(void)name;
	(*(int *)arg)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	struct error err;
	struct expr *e = expr_parse(text, &err);
	if (e) {
		double value;
		int names = 0;
		expr_eval(e, lookup, NULL, &value);
		expr_names(e, count, &names);
		expr_free(e);
	}
	free(text);
	return 0;
}
