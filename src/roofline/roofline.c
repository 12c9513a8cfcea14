/* roofline.csv (see roofline.h). */
#include "roofline/roofline.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/csv.h"
#include "util/strbuf.h"

static const char *const columns[ROOF_COUNT] = {
	[ROOF_HBM] = "HBMBw",          [ROOF_HBM_READ] = "HBMReadBw",
	[ROOF_L2] = "L2Bw",            [ROOF_L1] = "L1Bw",
	[ROOF_LDS] = "LDSBw",          [ROOF_FP64] = "FP64Flops",
	[ROOF_FP32] = "FP32Flops",     [ROOF_FP16] = "FP16Flops",
	[ROOF_I32] = "I32Ops",         [ROOF_MFMA_F64] = "MFMAF64Flops",
	[ROOF_MFMA_F32] = "MFMAF32Flops", [ROOF_MFMA_F16] = "MFMAF16Flops",
	[ROOF_MFMA_BF16] = "MFMABF16Flops", [ROOF_MFMA_F8] = "MFMAF8Flops",
	[ROOF_MFMA_I8] = "MFMAI8Ops",
};

const char *roofline_column(enum roofline_ceiling c)
{
	return c < ROOF_COUNT ? columns[c] : "";
}

int roofline_is_bandwidth(enum roofline_ceiling c)
{
	return c <= ROOF_LDS;
}

const char *roofline_unit(enum roofline_ceiling c)
{
	return roofline_is_bandwidth(c) ? "GB/s" : c == ROOF_I32 || c == ROOF_MFMA_I8 ? "GOP/s"
		: "GFLOP/s";
}

int roofline_find(const char *column)
{
	for (int c = 0; c < ROOF_COUNT; c++)
		if (!strcmp(columns[c], column))
			return c;
	return -1;
}

int roofline_data_type(const char *name, int *vector, int *matrix)
{
	static const struct {
		const char *name;
		int vector, matrix;
	} types[] = {
		{ "FP64", ROOF_FP64, ROOF_MFMA_F64 }, { "FP32", ROOF_FP32, ROOF_MFMA_F32 },
		{ "FP16", ROOF_FP16, ROOF_MFMA_F16 }, { "BF16", -1, ROOF_MFMA_BF16 },
		{ "FP8", -1, ROOF_MFMA_F8 },          { "I8", -1, ROOF_MFMA_I8 },
		{ "I32", ROOF_I32, -1 },
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcasecmp(name, types[i].name)) {
			*vector = types[i].vector, *matrix = types[i].matrix;
			return 0;
		}
	return -1;
}

static const char *const level_names[] = {
	[ROOF_HBM] = "HBM", [ROOF_HBM_READ] = "HBM", [ROOF_L2] = "L2", [ROOF_L1] = "L1",
	[ROOF_LDS] = "LDS",
};

int roofline_level(const char *name)
{
	if (!strcasecmp(name, "vL1D")) /* rocprof-compute's name of the first level */
		return ROOF_L1;
	for (int c = ROOF_HBM; c <= ROOF_LDS; c++)
		if (c != ROOF_HBM_READ && !strcasecmp(name, level_names[c]))
			return c;
	return -1;
}

const char *roofline_level_name(enum roofline_ceiling c)
{
	return roofline_is_bandwidth(c) ? level_names[c] : "";
}

void roofline_place(const struct roofline *r, int level, int compute, double work, double bytes,
		    double seconds, struct roofline_placement *p)
{
	p->intensity = bytes > 0 && work >= 0 ? work / bytes : NAN;
	p->rate = seconds > 0 && work >= 0 ? work / seconds / 1e9 : NAN;
	p->knee = p->ceiling = p->percent = NAN;
	p->bound = BOUND_UNKNOWN;
	const struct roofline_value *bw = level >= 0 && r ? &r->values[level] : NULL;
	const struct roofline_value *peak = compute >= 0 && r ? &r->values[compute] : NULL;
	if (!bw || !peak || !bw->measured || !peak->measured || !(bw->mean > 0) ||
	    !(peak->mean > 0))
		return;
	p->knee = peak->mean / bw->mean;
	if (!(p->intensity > 0) || isnan(p->rate))
		return; /* no work, or no traffic at this level: no point on the plot */
	p->ceiling = fmin(peak->mean, p->intensity * bw->mean);
	p->percent = 100 * p->rate / p->ceiling;
	p->bound = p->intensity < p->knee ? BOUND_MEMORY : BOUND_COMPUTE;
}

static void csv_field(FILE *out, const char *text)
{
	fputc('"', out);
	for (; *text; text++) {
		if (*text == '"')
			fputc('"', out);
		fputc(*text, out);
	}
	fputc('"', out);
}

void roofline_write_csv(FILE *out, const struct roofline *r)
{
	fputs("device,device_name,backend,experiments", out);
	for (int c = 0; c < ROOF_COUNT; c++)
		fprintf(out, ",%s,%sLow,%sHigh", columns[c], columns[c], columns[c]);
	fprintf(out, "\n%d,", r->device);
	csv_field(out, r->device_name);
	fprintf(out, ",%s,%d", r->backend, r->experiments);
	for (int c = 0; c < ROOF_COUNT; c++) {
		const struct roofline_value *v = &r->values[c];
		if (v->measured)
			fprintf(out, ",%.6f,%.6f,%.6f", v->mean, v->low, v->high);
		else
			fputs(",,,", out); /* not measurable here: empty, never 0 */
	}
	fputc('\n', out);
}

/* A number of a cell; -1 when it is not one. */
static int parse_number(const char *text, double *value)
{
	char *end;
	errno = 0;
	*value = strtod(text, &end);
	return *text && !*end && !errno && isfinite(*value) ? 0 : -1;
}

int roofline_read_csv(const char *path, struct roofline *r, struct error *err)
{
	memset(r, 0, sizeof(*r));
	FILE *f = fopen(path, "rb");
	if (!f)
		return error_set(err, "cannot open '%s': %s", path, strerror(errno));
	struct strbuf text = STRBUF_INIT;
	int read_failed = strbuf_add_stream(&text, f);
	fclose(f);
	int rc = read_failed ? error_set(err, "cannot read '%s'", path)
		 : roofline_parse_csv(path, text.buf, text.len, r, err);
	strbuf_release(&text);
	return rc;
}

int roofline_parse_csv(const char *path, const char *text, size_t size, struct roofline *r,
		       struct error *err)
{
	memset(r, 0, sizeof(*r));
	struct csv_row *rows = NULL;
	size_t count = 0;
	int bad = 0, rc = 0;
	if (csv_parse(text, size, &rows, &count, &bad))
		return error_set(err, "'%s': line %d: a quote is not closed", path, bad);
	if (count < 2) {
		rc = error_set(err, "'%s': no device row", path);
		goto out;
	}
	const struct csv_row *head = &rows[0], *row = &rows[1];
	if (row->count != head->count) {
		rc = error_set(err, "'%s': line %d: %zu fields, the header has %zu", path, row->line,
			       row->count, head->count);
		goto out;
	}
	int have_device = 0;
	for (size_t i = 0; i < head->count && rc == 0; i++) {
		const char *name = head->fields[i], *cell = row->fields[i];
		double value = 0;
		if (!strcmp(name, "device_name")) {
			snprintf(r->device_name, sizeof(r->device_name), "%s", cell);
			continue;
		}
		if (!strcmp(name, "backend")) {
			snprintf(r->backend, sizeof(r->backend), "%s", cell);
			continue;
		}
		size_t len = strlen(name);
		int part = 0; /* 0 mean, 1 low, 2 high */
		char base[64];
		if (len > 4 && !strcmp(name + len - 4, "High"))
			part = 2, len -= 4;
		else if (len > 3 && !strcmp(name + len - 3, "Low"))
			part = 1, len -= 3;
		snprintf(base, sizeof(base), "%.*s", (int)(len < 63 ? len : 63), name);
		int c = roofline_find(base);
		int known = c >= 0 || !strcmp(name, "device") || !strcmp(name, "experiments");
		if (!known || (!*cell && c >= 0))
			continue; /* a column of another version; an empty cell: not measured */
		int whole = c < 0; /* device, experiments: whole numbers */
		if (parse_number(cell, &value) || (c >= 0 && part == 0 && value < 0) ||
		    (whole && (value < 0 || value > 1e6 || value != floor(value)))) {
			rc = error_set(err, "'%s': line %d: %s is '%s', not %s", path, row->line,
				       name, cell, whole ? "a whole number from 0" : "a number");
		} else if (!strcmp(name, "device")) {
			r->device = (int)value;
			have_device = 1;
		} else if (!strcmp(name, "experiments")) {
			r->experiments = (int)value;
		} else {
			double *slot[3] = { &r->values[c].mean, &r->values[c].low, &r->values[c].high };
			*slot[part] = value;
			r->values[c].measured |= part == 0;
		}
	}
	if (rc == 0 && !have_device)
		rc = error_set(err, "'%s': no device column", path);
out:
	csv_rows_release(rows, count);
	return rc;
}

int roofline_check_order(const struct roofline *r, struct strbuf *out)
{
	/* the cache hierarchy from the nearest level to the farthest (shared memory is beside
	 * it, not in it: it may be slower than L1 where its banks or the benchmark's pattern
	 * limit it) */
	static const int levels[] = { ROOF_L1, ROOF_L2, ROOF_HBM };
	const size_t n = sizeof(levels) / sizeof(levels[0]);
	int found = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			const struct roofline_value *near = &r->values[levels[i]],
						    *far = &r->values[levels[j]];
			if (!near->measured || !far->measured || !(near->mean > 0) ||
			    near->mean >= far->mean)
				continue;
			strbuf_addf(out, "%sThe %s ceiling (%.6g GB/s) was measured below the %s ceiling "
					 "(%.6g GB/s), which a nearer level never is: its measurement was "
					 "disturbed or did not reach the level's peak; measure again "
					 "(gpuprof roofline) before reading kernels against it.",
				    found++ ? " " : "", roofline_column(levels[i]), near->mean,
				    roofline_column(levels[j]), far->mean);
		}
	return found;
}
