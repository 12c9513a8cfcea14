/* gpuprof compute's pieces that need no GPU: the catalog's expressions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compute/expr.h"
#include "util/strbuf.h"

/* Names and values for the expressions below; "missing" has none. */
static int lookup(const char *name, double *value, void *arg)
{
	(void)arg;
	static const struct { const char *name; double value; } values[] = {
		{ "dram__bytes_read.sum", 8e6 }, { "dram__bytes_write.sum", 4e6 },
		{ "gpu__time_duration.sum", 2000 }, { "device.sm_count", 132 }, { "zero", 0 },
		{ "sm__cycles_active.avg", 750 }, { "gpc__cycles_elapsed.max", 1000 },
		{ "huge", 1e308 },
	};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (!strcmp(values[i].name, name)) {
			*value = values[i].value;
			return 0;
		}
	return -1;
}

/* The value of text, or NAN when it is N/A; -INFINITY when it does not parse. */
static double value_of(const char *text)
{
	struct error err;
	struct expr *e = expr_parse(text, &err);
	if (!e)
		return -INFINITY;
	double v;
	int rc = expr_eval(e, lookup, NULL, &v);
	expr_free(e);
	return rc ? NAN : v;
}

static void collect(const char *name, void *arg)
{
	struct strbuf *out = arg;
	strbuf_addf(out, "%s,", name);
}

static void test_values(void)
{
	CHECK(value_of("1 + 2 * 3") == 7);
	CHECK(value_of("(1 + 2) * 3") == 9);
	CHECK(value_of("10 - 4 - 3") == 3);          /* left to right */
	CHECK(value_of("100 / 10 / 5") == 2);
	CHECK(value_of("-2 * -3") == 6);
	CHECK(value_of("1.5e3") == 1500);
	CHECK(value_of(".5 + .25") == 0.75);
	CHECK(value_of("dram__bytes_read.sum + dram__bytes_write.sum") == 12e6);
	/* bytes per second: 12 MB in 2000 ns */
	CHECK(value_of("(dram__bytes_read.sum + dram__bytes_write.sum) / (gpu__time_duration.sum "
		       "/ 1e9)") == 6e12);
	CHECK(value_of("100 * sm__cycles_active.avg / gpc__cycles_elapsed.max") == 75);
	CHECK(value_of("min(device.sm_count, 100) + max(1, 2)") == 102);
	CHECK(value_of("max(-1, -(2))") == -1);
}

static void test_not_available(void)
{
	CHECK(isnan(value_of("missing")));
	CHECK(isnan(value_of("1 + missing * 0")));   /* N/A spreads, even times zero */
	CHECK(isnan(value_of("1 / zero")));          /* never infinity */
	CHECK(isnan(value_of("huge * huge")));       /* not finite */
	CHECK(isnan(value_of("min(missing, 1)")));
	CHECK(value_of("zero / 1") == 0);
}

static void test_errors(void)
{
	const char *bad[] = { "", "1 +", "(1", "1)", "1 2", "a..", "sum.", "min(1)", "max(1,",
			      "* 3", "1 # 2", "min(1, 2", "3 + ()" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(value_of(bad[i]) == -INFINITY);
	struct error err;
	CHECK(!expr_parse("1 + * 2", &err));
	CHECK(strstr(err.message, "at column 5") != NULL);
	struct strbuf deep = STRBUF_INIT;
	for (int i = 0; i < EXPR_MAX_DEPTH + 1; i++)
		strbuf_addch(&deep, '(');
	strbuf_addch(&deep, '1');
	for (int i = 0; i < EXPR_MAX_DEPTH + 1; i++)
		strbuf_addch(&deep, ')');
	CHECK(!expr_parse(deep.buf, &err) && strstr(err.message, "nested too deeply"));
	strbuf_release(&deep);
}

static void test_names(void)
{
	struct error err;
	struct expr *e = expr_parse("a.sum + b.max * a.sum / min(c, b.max)", &err);
	struct strbuf names = STRBUF_INIT;
	expr_names(e, collect, &names);
	CHECK_STR(names.buf, "a.sum,b.max,c,");
	strbuf_release(&names);
	expr_free(e);
}

int main(void)
{
	test_values();
	test_not_available();
	test_errors();
	test_names();
	return check_summary("compute");
}
