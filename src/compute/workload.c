/* Workload directories of gpuprof compute (see workload.h). */
#include "compute/workload.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compute/catalog.h"
#include "store/store.h"
#include "util/csv.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/strbuf.h"

/* The rows of a file's text, or -1 with err naming where a quote was left open. */
static int read_rows(const char *name, const char *text, size_t size, struct csv_row **rows,
		     size_t *count, struct error *err)
{
	int bad = 0;
	if (csv_parse(text, size, rows, count, &bad))
		return error_set(err, "%s:%d: a quoted field is not closed where it should be",
				 name, bad);
	return 0;
}

/* ---- pmc_perf.csv ---------------------------------------------------------------------- */

static const char *const fixed_columns[] = {
	"Dispatch_ID", "GPU_ID", "Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup",
	"Scratch_Per_Workitem", "Registers_Per_Thread", "Kernel_Name", "Start_Timestamp",
	"End_Timestamp",
};
#define FIXED_COLUMNS (sizeof(fixed_columns) / sizeof(fixed_columns[0]))

/* A number of a cell: 0 and *out, or -1 when it is not one (empty: NAN, 0). */
static int number(const char *text, double *out)
{
	if (!*text) {
		*out = NAN;
		return 0;
	}
	char *end;
	errno = 0;
	*out = strtod(text, &end);
	return *end || errno || !isfinite(*out) ? -1 : 0;
}

struct id_line {
	long long id;
	int line;
};

static int by_id(const void *a, const void *b)
{
	const struct id_line *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->line - y->line;
}

/* 0, or -1 with err naming the second row of a Dispatch_ID given twice (rows: those of
 * w's dispatches, in order). */
static int unique_ids(const char *name, const struct workload *w, const struct csv_row *rows,
		      struct error *err)
{
	struct id_line *ids = xcalloc(w->count, sizeof(*ids));
	for (size_t i = 0; i < w->count; i++)
		ids[i] = (struct id_line){ w->dispatches[i].dispatch_id, rows[i].line };
	sort_array(ids, w->count, sizeof(*ids), by_id);
	int rc = 0;
	for (size_t i = 1; i < w->count && rc == 0; i++)
		if (ids[i].id == ids[i - 1].id)
			rc = error_set(err, "%s:%d: Dispatch_ID %lld again (line %d has it: a "
					    "dispatch has one row)", name, ids[i].line, ids[i].id,
				       ids[i - 1].line);
	free(ids);
	return rc;
}

int workload_parse_dispatches(const char *name, const char *text, size_t size,
			      struct workload *w, struct error *err)
{
	struct csv_row *rows;
	size_t count;
	if (read_rows(name, text, size, &rows, &count, err))
		return -1;
	int rc = 0;
	if (!count || rows[0].count < FIXED_COLUMNS) {
		rc = error_set(err, "%s:1: the header must begin with the %zu columns of a dispatch "
				    "(Dispatch_ID, ..., End_Timestamp)", name, FIXED_COLUMNS);
		goto done;
	}
	for (size_t c = 0; c < FIXED_COLUMNS; c++)
		if (strcmp(rows[0].fields[c], fixed_columns[c])) {
			rc = error_set(err, "%s:1: column %zu is '%s', not %s", name, c + 1,
				       rows[0].fields[c], fixed_columns[c]);
			goto done;
		}
	w->column_count = rows[0].count - FIXED_COLUMNS;
	w->columns = xcalloc(w->column_count ? w->column_count : 1, sizeof(char *));
	for (size_t c = 0; c < w->column_count; c++) {
		w->columns[c] = xstrdup(rows[0].fields[FIXED_COLUMNS + c]);
		if (!*w->columns[c]) {
			rc = error_set(err, "%s:1: column %zu has no name", name, FIXED_COLUMNS + c + 1);
			goto done;
		}
	}
	w->dispatches = xcalloc(count, sizeof(*w->dispatches));
	for (size_t r = 1; r < count; r++) {
		const struct csv_row *row = &rows[r];
		if (row->count != rows[0].count) {
			rc = error_set(err, "%s:%d: %zu fields, the header has %zu", name, row->line,
				       row->count, rows[0].count);
			goto done;
		}
		struct workload_dispatch *d = &w->dispatches[w->count++];
		double id, gpu;
		d->values = xcalloc(w->column_count ? w->column_count : 1, sizeof(double));
		d->kernel = xstrdup(row->fields[7]);
		if (number(row->fields[0], &id) || isnan(id) || id < 1 || id != floor(id) ||
		    id > 9e15 || number(row->fields[1], &gpu) || isnan(gpu) || gpu < 0 ||
		    gpu > 9e15 || gpu != floor(gpu) ||
		    number(row->fields[2], &d->grid_threads) ||
		    number(row->fields[3], &d->block_threads) ||
		    number(row->fields[4], &d->shared_per_block) ||
		    number(row->fields[5], &d->scratch_per_thread) ||
		    number(row->fields[6], &d->registers) || number(row->fields[8], &d->start) ||
		    number(row->fields[9], &d->end)) {
			rc = error_set(err, "%s:%d: a dispatch's columns are numbers (its id a "
				       "whole number from 1, its GPU one from 0)",
				       name, row->line);
			goto done;
		}
		d->dispatch_id = (long long)id;
		d->gpu_id = (long long)gpu;
		const double sizes[] = { d->grid_threads, d->block_threads, d->shared_per_block,
					 d->scratch_per_thread, d->registers, d->start, d->end };
		for (size_t c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++)
			if (sizes[c] < 0) {
				rc = error_set(err, "%s:%d: %s is %s: sizes and times are not negative",
					       name, row->line, fixed_columns[c < 5 ? c + 2 : c + 3],
					       row->fields[c < 5 ? c + 2 : c + 3]);
				goto done;
			}
		if (d->end < d->start) {
			rc = error_set(err, "%s:%d: End_Timestamp %s is before Start_Timestamp %s",
				       name, row->line, row->fields[9], row->fields[8]);
			goto done;
		}
		for (size_t c = 0; c < w->column_count; c++) {
			if (number(row->fields[FIXED_COLUMNS + c], &d->values[c])) {
				rc = error_set(err, "%s:%d: %s: '%s' is not a number", name, row->line,
					       w->columns[c], row->fields[FIXED_COLUMNS + c]);
				goto done;
			}
			if (d->values[c] < 0) { /* no counter, ratio or duration is */
				rc = error_set(err, "%s:%d: %s: %s is negative", name, row->line,
					       w->columns[c], row->fields[FIXED_COLUMNS + c]);
				goto done;
			}
		}
	}
	if (!w->count)
		rc = error_set(err, "%s: no dispatches (a header and no rows)", name);
	else
		rc = unique_ids(name, w, rows + 1, err);
done:
	csv_rows_release(rows, count);
	return rc ? -1 : 0;
}

/* ---- sysinfo.csv ----------------------------------------------------------------------- */

int workload_parse_facts(const char *name, const char *text, size_t size, struct workload *w,
			 struct error *err)
{
	struct csv_row *rows;
	size_t count;
	if (read_rows(name, text, size, &rows, &count, err))
		return -1;
	int rc = 0;
	if (count != 2 || rows[0].count != rows[1].count)
		rc = error_set(err, "%s: a header and one row of as many fields are expected", name);
	for (size_t c = 0; rc == 0 && c < rows[0].count; c++) {
		w->facts = xrealloc(w->facts, (w->fact_count + 1) * sizeof(char *));
		w->fact_values = xrealloc(w->fact_values, (w->fact_count + 1) * sizeof(char *));
		w->facts[w->fact_count] = xstrdup(rows[0].fields[c]);
		w->fact_values[w->fact_count++] = xstrdup(rows[1].fields[c]);
	}
	csv_rows_release(rows, count);
	return rc ? -1 : 0;
}

const char *workload_fact(const struct workload *w, const char *name)
{
	for (size_t i = 0; i < w->fact_count; i++)
		if (!strcmp(w->facts[i], name))
			return w->fact_values[i];
	return NULL;
}

static int read_file(const char *dir, const char *file, struct strbuf *out, struct error *err)
{
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s/%s", dir, file);
	FILE *f = fopen(path.buf, "rb");
	if (!f) {
		error_set(err, "%s: %s (not a gpuprof compute workload?)", path.buf, strerror(errno));
		strbuf_release(&path);
		return -1;
	}
	int failed = strbuf_add_stream(out, f);
	fclose(f);
	if (failed)
		error_set(err, "%s: cannot be read", path.buf);
	strbuf_release(&path);
	return failed ? -1 : 0;
}

/* The workload of a database: its files written to memory and read back as they would
 * be from a directory. */
static int read_database(const char *path, struct workload *w, struct error *err)
{
	sqlite3 *db;
	if (store_open(path, &db, err))
		return -1;
	char *dispatches = NULL, *facts = NULL;
	size_t dispatches_size = 0, facts_size = 0, rows = 0;
	FILE *d = open_memstream(&dispatches, &dispatches_size);
	FILE *f = open_memstream(&facts, &facts_size);
	int rc = d && f ? 0 : error_set(err, "out of memory");
	if (rc == 0)
		rc = workload_write_dispatches(db, d, &rows, err);
	if (rc == 0)
		rc = workload_write_facts(db, f, err);
	if (d)
		fclose(d);
	if (f)
		fclose(f);
	sqlite3_close(db);
	if (rc == 0 && !rows)
		rc = error_set(err, "'%s' has no kernels", path);
	if (rc == 0)
		rc = workload_parse_dispatches(path, dispatches, dispatches_size, w, err);
	if (rc == 0)
		rc = workload_parse_facts(path, facts, facts_size, w, err);
	free(dispatches);
	free(facts);
	return rc;
}

int workload_read(const char *dir, struct workload *w, struct error *err)
{
	memset(w, 0, sizeof(*w));
	w->dir = xstrdup(dir);
	struct stat st;
	if (stat(dir, &st) == 0 && S_ISREG(st.st_mode)) {
		int rc = read_database(dir, w, err);
		if (rc)
			workload_release(w);
		return rc;
	}
	struct strbuf text = STRBUF_INIT, name = STRBUF_INIT;
	int rc = read_file(dir, "pmc_perf.csv", &text, err);
	strbuf_addf(&name, "%s/pmc_perf.csv", dir);
	if (rc == 0)
		rc = workload_parse_dispatches(name.buf, text.buf, text.len, w, err);
	strbuf_reset(&text);
	strbuf_reset(&name);
	strbuf_addf(&name, "%s/sysinfo.csv", dir);
	if (rc == 0)
		rc = read_file(dir, "sysinfo.csv", &text, err);
	if (rc == 0)
		rc = workload_parse_facts(name.buf, text.buf, text.len, w, err);
	strbuf_reset(&name);
	strbuf_addf(&name, "%s/roofline.csv", dir);
	if (rc == 0 && access(name.buf, F_OK) == 0) {
		w->roofline = xcalloc(1, sizeof(*w->roofline));
		rc = roofline_read_csv(name.buf, w->roofline, err);
	}
	strbuf_reset(&text);
	strbuf_reset(&name);
	strbuf_addf(&name, "%s/profiling_config.yaml", dir);
	if (rc == 0 && access(name.buf, F_OK) == 0 &&
	    (rc = read_file(dir, "profiling_config.yaml", &text, err)) == 0 &&
	    (rc = workload_parse_config(name.buf, text.buf, w, err)) == 0)
		workload_multiplex(w);
	strbuf_release(&text);
	strbuf_release(&name);
	if (rc)
		workload_release(w);
	return rc ? -1 : 0;
}

int workload_parse_config(const char *name, const char *text, struct workload *w,
			  struct error *err)
{
	for (const char *line = text; *line;) {
		size_t n = strcspn(line, "\n");
		static const char mode[] = "iteration_multiplexing: ", groups[] = "multiplex_groups: ";
		char value[32] = "";
		if (!strncmp(line, mode, sizeof(mode) - 1) || !strncmp(line, groups, sizeof(groups) - 1)) {
			const char *v = line + strcspn(line, " ") + 1;
			size_t len = (size_t)(line + n - v);
			if (len < sizeof(value))
				memcpy(value, v, len), value[len] = '\0';
		}
		if (!strncmp(line, mode, sizeof(mode) - 1)) {
			if (!strcmp(value, "kernel"))
				w->multiplex = MULTIPLEX_KERNEL;
			else if (!strcmp(value, "kernel_launch_params"))
				w->multiplex = MULTIPLEX_LAUNCH;
			else if (strcmp(value, "none"))
				return error_set(err, "%s: iteration_multiplexing is kernel, "
						      "kernel_launch_params or none, not '%.*s'", name,
						 (int)(n - (sizeof(mode) - 1)), line + sizeof(mode) - 1);
		} else if (!strncmp(line, groups, sizeof(groups) - 1)) {
			char *end;
			errno = 0;
			long g = strtol(value, &end, 10);
			if (!*value || *end || errno || g < 1)
				return error_set(err, "%s: multiplex_groups is a count, not '%.*s'", name,
						 (int)(n - (sizeof(groups) - 1)), line + sizeof(groups) - 1);
			w->groups = g;
		}
		line += n + (line[n] == '\n');
	}
	if (w->multiplex != MULTIPLEX_NONE && w->groups < 1)
		return error_set(err, "%s: iteration_multiplexing without multiplex_groups", name);
	return 0;
}

/* The bits of a number for hashing: equal for equal numbers (0 and -0, every NAN). */
static uint64_t double_bits(double x)
{
	uint64_t bits = 0;
	if (!isnan(x) && x != 0)
		memcpy(&bits, &x, sizeof(bits));
	return bits;
}

/* Whether two dispatches are of one kernel for multiplexing. */
static int same_kernel(const struct workload *w, const struct workload_dispatch *a,
		       const struct workload_dispatch *b)
{
	if (strcmp(a->kernel, b->kernel))
		return 0;
	if (w->multiplex != MULTIPLEX_LAUNCH)
		return 1;
	/* NAN (an empty field) equals only NAN */
	const double x[] = { a->grid_threads, a->block_threads, a->shared_per_block },
		     y[] = { b->grid_threads, b->block_threads, b->shared_per_block };
	for (int i = 0; i < 3; i++)
		if (x[i] != y[i] && !(isnan(x[i]) && isnan(y[i])))
			return 0;
	return 1;
}

void workload_multiplex(struct workload *w)
{
	if (w->multiplex == MULTIPLEX_NONE || !w->column_count)
		return;
	/* each dispatch's kernel: the index of its first dispatch, found through a table of
	 * first dispatches (open addressing, index + 1, 0 empty) */
	size_t *kernel = xcalloc(w->count ? w->count : 1, sizeof(*kernel));
	size_t slots = 64;
	while (slots < 2 * w->count)
		slots *= 2;
	size_t *first = xcalloc(slots, sizeof(*first));
	for (size_t i = 0; i < w->count; i++) {
		const struct workload_dispatch *d = &w->dispatches[i];
		uint64_t h = hash_string(d->kernel);
		if (w->multiplex == MULTIPLEX_LAUNCH)
			h ^= hash_int(double_bits(d->grid_threads) ^ hash_int(double_bits(d->block_threads)));
		size_t j = h & (slots - 1);
		while (first[j] && !same_kernel(w, &w->dispatches[first[j] - 1], d))
			j = (j + 1) & (slots - 1);
		if (!first[j])
			first[j] = i + 1;
		kernel[i] = first[j] - 1;
	}
	free(first);
	double *sum = xcalloc(w->column_count, sizeof(*sum));
	size_t *n = xcalloc(w->column_count, sizeof(*n));
	for (size_t k = 0; k < w->count; k++) {
		if (kernel[k] != k)
			continue;
		memset(sum, 0, w->column_count * sizeof(*sum));
		memset(n, 0, w->column_count * sizeof(*n));
		long measured = 0;
		for (size_t i = k; i < w->count; i++) {
			if (kernel[i] != k)
				continue;
			int any = 0;
			for (size_t c = 0; c < w->column_count; c++) {
				double v = w->dispatches[i].values[c];
				if (!isnan(v))
					sum[c] += v, n[c]++, any = 1;
			}
			measured += any;
		}
		if (!measured)
			continue; /* not measured at all (the kernel filters) */
		int complete = measured >= w->groups;
		if (!complete) {
			struct strbuf what = STRBUF_INIT;
			strbuf_addf(&what, "%s (measured %ld time%s", w->dispatches[k].kernel, measured,
				    measured == 1 ? "" : "s");
			if (w->multiplex == MULTIPLEX_LAUNCH)
				strbuf_addf(&what, " with %.0f threads in blocks of %.0f",
					    w->dispatches[k].grid_threads,
					    w->dispatches[k].block_threads);
			strbuf_addch(&what, ')');
			w->incomplete = xrealloc(w->incomplete,
						 (w->incomplete_count + 1) * sizeof(*w->incomplete));
			w->incomplete[w->incomplete_count++] = strbuf_detach(&what);
		}
		for (size_t i = k; i < w->count; i++) {
			if (kernel[i] != k)
				continue;
			for (size_t c = 0; c < w->column_count; c++) {
				double *v = &w->dispatches[i].values[c];
				if (!complete)
					*v = NAN;
				else if (isnan(*v) && n[c])
					*v = sum[c] / (double)n[c];
			}
		}
	}
	free(n);
	free(sum);
	free(kernel);
}

void workload_warn_incomplete(const char *command, const struct workload *w)
{
	if (!w->incomplete_count)
		return;
	struct strbuf list = STRBUF_INIT;
	for (size_t i = 0; i < w->incomplete_count && i < 5; i++)
		strbuf_addf(&list, "%s%s", i ? "; " : "", w->incomplete[i]);
	if (w->incomplete_count > 5)
		strbuf_addf(&list, "; and %zu more", w->incomplete_count - 5);
	warn("%s: %s: %zu kernel%s dispatched fewer times than the %ld groups of metrics get no "
	     "metrics: %s", command, w->dir, w->incomplete_count,
	     w->incomplete_count == 1 ? "" : "s", w->groups, list.buf);
	strbuf_release(&list);
}

void workload_release(struct workload *w)
{
	for (size_t i = 0; i < w->incomplete_count; i++)
		free(w->incomplete[i]);
	free(w->incomplete);
	for (size_t i = 0; i < w->count; i++) {
		free(w->dispatches[i].kernel);
		free(w->dispatches[i].values);
	}
	for (size_t i = 0; i < w->column_count; i++)
		free(w->columns[i]);
	for (size_t i = 0; i < w->fact_count; i++) {
		free(w->facts[i]);
		free(w->fact_values[i]);
	}
	free(w->dispatches), free(w->columns), free(w->facts), free(w->fact_values), free(w->dir);
	free(w->roofline);
	memset(w, 0, sizeof(*w));
}

/* ---- values for the catalog's expressions ------------------------------------------ */

static int device_value(const struct workload *w, const char *name, double *value)
{
	const char *text = workload_fact(w, name);
	return text && number(text, value) == 0 && !isnan(*value) ? 0 : -1;
}

/* The blocks an SM holds at once for this launch by each CUDA occupancy rule: its warp
 * slots, its block slots, its registers (allocated per warp in units of
 * register_allocation_unit) and its shared memory (per block in units of
 * shared_memory_allocation_unit, plus what the system reserves per block; a launch
 * without registers or shared memory has no limit there: INFINITY); and the warps of a
 * block. 0, or -1 when the device facts are not known. */
struct occupancy {
	double warps, blocks, registers, shared_memory, block_warps;
};

static int occupancy_limits(const struct workload *w, const struct workload_dispatch *d,
			    struct occupancy *o)
{
	double warp_size, max_warps, max_blocks, registers, register_unit, shared, reserved,
		shared_unit;
	if (device_value(w, "warp_size", &warp_size) || device_value(w, "max_warps_per_sm", &max_warps) ||
	    device_value(w, "max_blocks_per_sm", &max_blocks) ||
	    device_value(w, "registers_per_sm", &registers) ||
	    device_value(w, "register_allocation_unit", &register_unit) ||
	    device_value(w, "shared_memory_per_sm", &shared) ||
	    device_value(w, "shared_memory_reserved_per_block", &reserved) ||
	    device_value(w, "shared_memory_allocation_unit", &shared_unit) ||
	    isnan(d->block_threads) || d->block_threads < 1 || warp_size < 1 ||
	    register_unit < 1 || shared_unit < 1)
		return -1;
	o->block_warps = ceil(d->block_threads / warp_size);
	o->warps = floor(max_warps / o->block_warps);
	o->blocks = max_blocks;
	o->registers = INFINITY;
	if (!isnan(d->registers) && d->registers > 0) {
		double per_warp = ceil(d->registers * warp_size / register_unit) * register_unit;
		o->registers = floor(floor(registers / per_warp) / o->block_warps);
	}
	double per_block = (isnan(d->shared_per_block) ? 0 : d->shared_per_block);
	per_block = ceil((per_block + reserved) / shared_unit) * shared_unit;
	o->shared_memory = per_block > 0 ? floor(shared / per_block) : INFINITY;
	return 0;
}

/* The warps an SM holds at once for this launch: the fewest blocks the limits allow,
 * times the warps of a block. */
static int occupancy_warps(const struct workload *w, const struct workload_dispatch *d,
			   double *out)
{
	struct occupancy o;
	if (occupancy_limits(w, d, &o))
		return -1;
	*out = fmin(fmin(o.warps, o.blocks), fmin(o.registers, o.shared_memory)) * o.block_warps;
	return 0;
}

int workload_duration(const struct workload *w, const struct workload_dispatch *d,
		      double *value)
{
	for (size_t i = 0; i < w->column_count; i++)
		if (!strcmp(w->columns[i], CATALOG_DURATION) && !isnan(d->values[i])) {
			*value = d->values[i];
			return *value > 0 ? 0 : -1;
		}
	*value = d->end - d->start;
	return *value > 0 ? 0 : -1;
}

int workload_lookup(const char *name, double *value, void *context)
{
	const struct workload_context *c = context;
	const struct workload *w = c->w;
	const struct workload_dispatch *d = c->d;
	if (!strncmp(name, "device.", 7))
		return device_value(w, name + 7, value);
	if (!strncmp(name, "roofline.", 9)) {
		int ceiling = roofline_find(name + 9);
		if (!w->roofline || ceiling < 0 || !w->roofline->values[ceiling].measured)
			return -1;
		*value = w->roofline->values[ceiling].mean;
		return *value > 0 ? 0 : -1; /* rocprof-compute writes 0 for what it did not measure */
	}
	if (!strncmp(name, "launch.", 7)) {
		const char *what = name + 7;
		if (!strcmp(what, "grid_size"))
			*value = d->grid_threads / d->block_threads;
		else if (!strcmp(what, "block_size"))
			*value = d->block_threads;
		else if (!strcmp(what, "registers_per_thread"))
			*value = d->registers;
		else if (!strcmp(what, "shared_memory_per_block"))
			*value = d->shared_per_block;
		else if (!strcmp(what, "duration"))
			return workload_duration(w, d, value);
		else if (!strcmp(what, "occupancy_warps"))
			return occupancy_warps(w, d, value);
		else if (!strncmp(what, "occupancy_limit_", 16)) {
			struct occupancy o;
			if (occupancy_limits(w, d, &o))
				return -1;
			const char *limit = what + 16;
			*value = !strcmp(limit, "warps") ? o.warps : !strcmp(limit, "blocks") ? o.blocks
				 : !strcmp(limit, "registers") ? o.registers
				 : !strcmp(limit, "shared_memory") ? o.shared_memory : NAN;
		}
		else if (!strcmp(what, "waves_per_sm")) {
			double warps, sms, warp_size;
			if (occupancy_warps(w, d, &warps) || device_value(w, "sm_count", &sms) ||
			    device_value(w, "warp_size", &warp_size) || warps <= 0 || sms <= 0)
				return -1;
			double blocks_per_sm = warps / ceil(d->block_threads / warp_size);
			*value = d->grid_threads / d->block_threads / (blocks_per_sm * sms);
		} else {
			return -1;
		}
		return isfinite(*value) ? 0 : -1;
	}
	for (size_t i = 0; i < w->column_count; i++)
		if (!strcmp(w->columns[i], name)) {
			*value = d->values[i];
			return isnan(*value) ? -1 : 0;
		}
	return -1;
}
