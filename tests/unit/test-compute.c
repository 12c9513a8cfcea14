/* gpuprof compute's pieces that need no GPU: the catalog's expressions. */
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compute/catalog.h"
#include "compute/expr.h"
#include "compute/torch-ops.h"
#include "roofline/roofline.h"
#include "store/schema.h"
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

/* Loads text as a block file; the error message, or "" when it loads. */
static const char *load_text(const char *text, struct catalog *c)
{
	static struct error err;
	char path[] = "/tmp/gpuprof-catalog-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	int rc = catalog_load_file(path, c, &err);
	unlink(path);
	if (rc == 0)
		return "";
	const char *at = strchr(err.message, ':'); /* the path left out */
	return at ? at + 1 : err.message;
}

#define BLOCK_HEAD "block: 9\ntitle: T\nalias: [t]\ntables:\n  - id: 9.1\n    title: U\n" \
		   "    metrics:\n"
#define METRIC(id, expr) "      - id: " id "\n        name: N\n        expr: " expr "\n" \
			  "        unit: u\n        description: d\n"

static void test_catalog(void)
{
	struct catalog c;
	struct error err;
	CHECK(catalog_load("catalog", &c, &err) == 0);
	int metrics = 0;
	for (size_t b = 0; b < c.count; b++)
		for (size_t t = 0; t < c.blocks[b].count; t++)
			metrics += (int)c.blocks[b].tables[t].count;
	CHECK(catalog_select(&c, "18", NULL, NULL) == 4);
	CHECK(catalog_select(&c, "dram", NULL, NULL) == 4);
	CHECK(catalog_select(&c, "7.2", NULL, NULL) == 3);
	CHECK(catalog_select(&c, "2.1.5", NULL, NULL) == 1);
	CHECK(catalog_select(&c, "2.1.99", NULL, NULL) == -1);
	CHECK(catalog_select(&c, "nothing", NULL, NULL) == -1);
	struct strbuf names = STRBUF_INIT;
	int found = 0;
	for (size_t t = 0; t < c.count; t++)
		if (c.blocks[t].id == 18)
			for (size_t i = 0; i < c.blocks[t].tables[0].count; i++, found++)
				catalog_cupti_names(&c.blocks[t].tables[0].metrics[i], &names);
	CHECK(found == 4);
	CHECK_STR(names.buf, "dram__bytes_read.sum\ndram__bytes_write.sum\ngpu__time_duration.sum\n"
			     "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed\n");
	strbuf_release(&names);
	CHECK(c.count == 12 && c.blocks[0].id == 2 && c.blocks[1].id == 3 &&
	      c.blocks[c.count - 1].id == 22);
	CHECK(metrics == 228);
	int placed = 0; /* the roofline's counts: 7 data types, 4 memory levels */
	for (size_t b = 0; b < c.count; b++)
		for (size_t t = 0; t < c.blocks[b].count; t++)
			for (size_t i = 0; i < c.blocks[b].tables[t].count; i++)
				placed += c.blocks[b].tables[t].metrics[i].ceiling >= 0;
	CHECK(placed == 13);
	CHECK(c.set_count == 14);
	CHECK(catalog_set(&c, "dram") && catalog_set(&c, "dram")->single_pass);
	/* rocprof-compute's sets, by the names its users type */
	const struct catalog_set *util = catalog_set(&c, "compute_thruput_util");
	CHECK(util && !strcmp(util->name, "pipe-utilization") && util->single_pass);
	CHECK(catalog_set_named(util, "pipe-utilization") == 1);
	CHECK(catalog_set_named(util, "compute_thruput_util") == 2);
	CHECK(catalog_set(&c, "launch_stats") == catalog_set(&c, "launch"));
	CHECK(catalog_set(&c, "mem_thruput") == catalog_set(&c, "memory-throughput"));
	CHECK(catalog_set(&c, "compute_thruput_flops") == catalog_set(&c, "flops"));
	struct strbuf note = STRBUF_INIT;
	CHECK(catalog_set_note(util, "pipe-utilization", &note) == 0 && note.len == 0);
	CHECK(catalog_set_note(util, "compute_thruput_util", &note) == 1);
	CHECK(strstr(note.buf, "'compute_thruput_util' is rocprof-compute's set (AMD's counters): "
			       "its nearest here, 'pipe-utilization', is collected: ") == note.buf);
	strbuf_release(&note);
	CHECK(catalog_set(&c, "speed-of-light") && !catalog_set(&c, "speed-of-light")->single_pass);
	CHECK(catalog_set(&c, "nope") == NULL);
	catalog_release(&c);

	memset(&c, 0, sizeof(c));
	CHECK_STR(load_text(BLOCK_HEAD METRIC("9.1.0", "a.sum + 2"), &c), "");
	CHECK(c.count == 1 && c.blocks[0].tables[0].count == 1);
	CHECK(strstr(load_text(BLOCK_HEAD METRIC("9.1.0", "a.sum"), &c), " block 9 is also in /tmp/"));
	catalog_release(&c);
	CHECK_STR(load_text(BLOCK_HEAD METRIC("9.1.0", "a.sum +"), &c),
		  "10: 'a.sum +': unexpected end at column 8");
	CHECK_STR(load_text(BLOCK_HEAD METRIC("9.2.0", "a"), &c),
		  "8: a metric's id is its table's id and a number (2.1.0)");
	CHECK_STR(load_text(BLOCK_HEAD METRIC("9.1.0", "launch.nonsense * 2"), &c),
		  "8: launch.nonsense: gpuprof derives no such value");
	CHECK_STR(load_text(BLOCK_HEAD METRIC("9.1.0", "a / roofline.HBMBw"), &c), "");
	catalog_release(&c);
	CHECK_STR(load_text(BLOCK_HEAD METRIC("9.1.0", "roofline.HBM"), &c),
		  "8: roofline.HBM: gpuprof derives no such value");
	CHECK_STR(load_text(BLOCK_HEAD METRIC("9.1.0", "a") "        ceiling: HBM\n", &c),
		  "13: a ceiling is a column of roofline.csv (HBMBw, FP32Flops...)");
	CHECK_STR(load_text(BLOCK_HEAD METRIC("9.1.0", "a") "        ceiling: HBMBw\n", &c),
		  "13: a metric set against a bandwidth counts bytes, one set against a "
		  "throughput counts FLOP or OP");
	CHECK_STR(load_text(BLOCK_HEAD METRIC("9.1.0", "a") METRIC("9.1.0", "b"), &c),
		  "13: a metric id twice");
	CHECK_STR(load_text(BLOCK_HEAD "      - id: 9.1.0\n        name: N\n        colour: red\n", &c),
		  "10: unknown key of a metric");
	CHECK_STR(load_text(BLOCK_HEAD "      - id: 9.1.0\n        name: N\n", &c),
		  "8: a metric needs an id, a name, an expr, a unit and a description");
	CHECK_STR(load_text("block: 100\ntitle: T\ntables: []\n", &c),
		  "1: a block is a number from 0 to 99");
	CHECK_STR(load_text("block: 3\ntitle: T\n", &c),
		  "1: a block needs a block number, a title and tables");
	CHECK_STR(load_text("[1, 2]", &c),
		  "1: a block file is a mapping of block, title, alias and tables");
	CHECK_STR(load_text("block: [", &c), "2: did not find expected node content");
	CHECK(c.count == 0);
	CHECK(catalog_load("/nonexistent", &c, &err) == -1);
	CHECK(strstr(err.message, "cannot read the metric catalog /nonexistent") != NULL);
}

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-12 * fabs(b);
}

/* Kernels placed on a roofline of 1000 GB/s and 10000 GFLOP/s: the knee at 10 FLOP/byte. */
static void test_placement(void)
{
	struct roofline r = { 0 };
	r.values[ROOF_HBM] = (struct roofline_value){ 1000, 990, 1010, 1 };
	r.values[ROOF_FP32] = (struct roofline_value){ 10000, 9900, 10100, 1 };
	struct roofline_placement p;
	roofline_place(&r, ROOF_HBM, ROOF_FP32, 1e6, 1e6, 1e-5, &p); /* 1 FLOP/byte, 100 G/s */
	CHECK(p.intensity == 1 && near(p.rate, 100) && p.knee == 10 && p.ceiling == 1000);
	CHECK(near(p.percent, 10) && p.bound == BOUND_MEMORY);
	roofline_place(&r, ROOF_HBM, ROOF_FP32, 1e7, 1e6, 1e-5, &p); /* at the knee: compute */
	CHECK(p.intensity == 10 && p.ceiling == 10000 && p.bound == BOUND_COMPUTE);
	roofline_place(&r, ROOF_HBM, ROOF_FP32, 1e6, 0, 1e-5, &p); /* no bytes at the level */
	CHECK(isnan(p.intensity) && near(p.rate, 100) && isnan(p.ceiling) && p.bound == BOUND_UNKNOWN);
	roofline_place(&r, ROOF_HBM, ROOF_FP32, 0, 1e6, 1e-5, &p); /* no work */
	CHECK(p.intensity == 0 && isnan(p.percent) && p.bound == BOUND_UNKNOWN);
	roofline_place(&r, ROOF_L2, ROOF_FP32, 1e6, 1e6, 1e-5, &p); /* L2 not measured */
	CHECK(p.intensity == 1 && isnan(p.knee) && isnan(p.ceiling) && p.bound == BOUND_UNKNOWN);
	roofline_place(NULL, ROOF_HBM, ROOF_FP32, 1e6, 1e6, 0, &p); /* no roofline, no time */
	CHECK(p.intensity == 1 && isnan(p.rate) && p.bound == BOUND_UNKNOWN);
	int vector, matrix;
	CHECK(roofline_data_type("bf16", &vector, &matrix) == 0 && vector == -1 &&
	      matrix == ROOF_MFMA_BF16);
	CHECK(roofline_data_type("FP32", &vector, &matrix) == 0 && vector == ROOF_FP32 &&
	      matrix == ROOF_MFMA_F32);
	CHECK(roofline_data_type("FP4", &vector, &matrix) == -1);
	CHECK(roofline_level("vL1D") == ROOF_L1 && roofline_level("hbm") == ROOF_HBM);
	CHECK(roofline_level("HBMRead") == -1 && roofline_level("FP32") == -1);
	CHECK_STR(roofline_level_name(ROOF_LDS), "LDS");
}

/* torch_trace/consolidated.csv from a database: an operator's kernels with each counter,
 * a kernel without counters once, kernels outside a torch range left out; quoting; the
 * operator's module path last. */
static void test_torch_operators(void)
{
	sqlite3 *db;
	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, store_schema_sql, NULL, NULL, NULL) == SQLITE_OK);
	CHECK(sqlite3_exec(db,
		"INSERT INTO gpuprof_string VALUES (1, 'torch'), (2, 'nn.Module.Net.forward/\"q\"'), "
		"(3, 'gemm'), (4, 'sm__inst'), (5, 'dram__bytes'), (6, 'user'), (7, 'epoch'), "
		"(8, 'Net.fc1');"
		"INSERT INTO gpuprof_marker (process_id, tid, kind, domain_id, name_id, range_id, "
		"start, end, module_id) VALUES (1, 9, 1, 1, 2, 1, 100, 900, 8), "
		"(1, 9, 1, 6, 7, 2, 1000, 2000, 0);"
		"INSERT INTO gpuprof_kernel (id, process_id, name_id, correlation_id, start, end, "
		"context_id, range_id) VALUES (1, 1, 3, 11, 200, 300, 5, 1), (2, 1, 3, 12, 400, "
		"450, 5, 1), (3, 1, 3, 13, 1100, 1200, 5, 2), (4, 1, 3, 14, 950, 960, 5, 0);"
		"INSERT INTO gpuprof_counter (process_id, correlation_id, name_id, value) VALUES "
		"(1, 11, 4, 10), (1, 11, 5, 2.5), (1, 13, 4, 1), (1, 14, 4, 1);",
		NULL, NULL, NULL) == SQLITE_OK);
	char *text = NULL;
	size_t size = 0, rows = 0;
	FILE *out = open_memstream(&text, &size);
	struct error err;
	CHECK(torch_ops_write(db, out, &rows, &err) == 0);
	fclose(out);
	CHECK(rows == 3);
	CHECK_STR(text,
		  "\"Operator_Name\",\"Context_Id\",\"Kernel_Name\",\"Counter_Name\","
		  "\"Counter_Value\",\"Start_Timestamp_function\",\"End_Timestamp_function\","
		  "\"Start_Timestamp_kernel\",\"End_Timestamp_kernel\",\"Module_Path\"\n"
		  "\"nn.Module.Net.forward/\"\"q\"\"\",5,\"gemm\",\"dram__bytes\",2.5,100,900,200,300,"
		  "\"Net.fc1\"\n"
		  "\"nn.Module.Net.forward/\"\"q\"\"\",5,\"gemm\",\"sm__inst\",10,100,900,200,300,"
		  "\"Net.fc1\"\n"
		  "\"nn.Module.Net.forward/\"\"q\"\"\",5,\"gemm\",\"\",,100,900,400,450,\"Net.fc1\"\n");
	free(text);
	sqlite3_close(db);
	/* --torch-operator's matching: the seed's globs from the right, levels, module paths */
	const char *op = "nn.Module.Net.forward/nn.Module.Linear.forward/torch.nn.functional.linear";
	CHECK(torch_ops_matches(op, "Net.fc1", "*/nn.Module.Linear.forward/*"));
	CHECK(torch_ops_matches(op, "Net.fc1", "*linear"));
	CHECK(torch_ops_matches(op, "Net.fc1", "*/*linear"));
	CHECK(torch_ops_matches(op, "Net.fc1", "torch.nn.functional.linear"));
	CHECK(torch_ops_matches(op, "Net.fc1", "**") && torch_ops_matches(op, NULL, "all"));
	CHECK(!torch_ops_matches(op, "Net.fc1", "*/*/*/*"));
	CHECK(!torch_ops_matches(op, "Net.fc1", "*/nn.Module.Linear.forward"));
	CHECK(torch_ops_matches(op, "Net.fc1", "nn.Module.Linear.forward")); /* a level on */
	CHECK(torch_ops_matches(op, "Net.fc1", "Net.fc1") && torch_ops_matches(op, "Net.fc1", "Net"));
	CHECK(torch_ops_matches(op, "Net.fc1", "Net.fc?"));
	CHECK(!torch_ops_matches(op, "Net.fc1", "Net.fc") && !torch_ops_matches(op, "", "Net.fc1"));
	CHECK(!torch_ops_matches(op, "Net.fc10", "Net.fc1"));
}

int main(int argc, char **argv)
{
	static const struct check_test tests[] = {
		CHECK_TEST(torch_operators), CHECK_TEST(catalog), CHECK_TEST(placement),
		CHECK_TEST(values), CHECK_TEST(not_available), CHECK_TEST(errors),
		CHECK_TEST(names),
	};
	return check_main(argc, argv, "compute", tests, sizeof(tests) / sizeof(tests[0]));
}
