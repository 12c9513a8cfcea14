/* The empirical roofline: the ceilings a device reaches, measured by microbenchmarks
 * (gpuprof roofline), kept as roofline.csv in rocprof-compute's column scheme (one row
 * per device; for each ceiling its mean, <name>Low and <name>High: the 95 % confidence
 * interval; empty where it was not measured), and kernels placed against them. */
#ifndef GPUPROF_ROOFLINE_ROOFLINE_H
#define GPUPROF_ROOFLINE_ROOFLINE_H

#include <stddef.h>
#include <stdio.h>

#include "util/error.h"
#include "util/strbuf.h"

/* The ceilings, in the order of roofline.csv's columns. Bandwidths are in GB/s (1e9
 * bytes per second), throughputs in GFLOP/s or GOP/s (1e9 per second). */
enum roofline_ceiling {
	ROOF_HBM,      /* device memory, copy */
	ROOF_HBM_READ, /* device memory, read only */
	ROOF_L2,       /* a working set that fits the second-level (GPU: last-level) cache */
	ROOF_L1,       /* one that fits the first level */
	ROOF_LDS,      /* local (shared) memory */
	ROOF_FP64,
	ROOF_FP32,
	ROOF_FP16,
	ROOF_I32,
	ROOF_MFMA_F64, /* matrix units (NVIDIA: tensor cores): FP64 */
	ROOF_MFMA_F32, /* TF32 on NVIDIA */
	ROOF_MFMA_F16,
	ROOF_MFMA_BF16,
	ROOF_MFMA_F8,
	ROOF_MFMA_I8,
	ROOF_COUNT
};

struct roofline_value {
	double mean, low, high;
	int measured; /* 0: not measurable on this device (an empty cell) */
};

struct roofline {
	int device;          /* the device's index among the backend's devices */
	char device_name[256];
	char backend[16];    /* opencl, cuda */
	int experiments;     /* timed runs behind each value */
	struct roofline_value values[ROOF_COUNT];
};

/* The column name of a ceiling ("HBMBw", "FP32Flops"...), whether it is a bandwidth,
 * and its unit in roofline.csv (GB/s, GFLOP/s, GOP/s for integers). */
const char *roofline_column(enum roofline_ceiling c);
int roofline_is_bandwidth(enum roofline_ceiling c);
const char *roofline_unit(enum roofline_ceiling c);
/* The ceiling named by a column, or -1. */
int roofline_find(const char *column);

/* The number of cache-level ceilings measured below a farther level's (L1, L2, HBM from
 * the nearest: a nearer level is never slower, so such a ceiling was disturbed or missed
 * its peak), each named in a sentence appended to out. */
int roofline_check_order(const struct roofline *r, struct strbuf *out);

/* roofline.csv: a header and one row. */
void roofline_write_csv(FILE *out, const struct roofline *r);
/* Reads the first row of a roofline.csv; the columns may come in any order, unknown
 * ones are ignored. 0, or -1 with err (the file, and what is wrong). */
int roofline_read_csv(const char *path, struct roofline *r, struct error *err);
/* The same from the text of the file (path: for messages). */
int roofline_parse_csv(const char *path, const char *text, size_t size, struct roofline *r,
		       struct error *err);

/* The data types of the plot (rocprof-compute's -R names: FP64, FP32, FP16, BF16, FP8,
 * I8, I32): the ceiling of the vector units and that of the matrix units (tensor
 * cores), -1 where the type has none. 0, or -1 for a name not known. */
int roofline_data_type(const char *name, int *vector, int *matrix);
/* The memory levels (-m: HBM, L2, L1 or vL1D, LDS): the bandwidth ceiling, or -1. */
int roofline_level(const char *name);
/* The short name of a bandwidth ceiling: HBM, L2, L1, LDS. */
const char *roofline_level_name(enum roofline_ceiling c);

/* Work (FLOP or OP) that moved bytes through one memory level in seconds, set against a
 * bandwidth ceiling and a compute ceiling of r. */
enum roofline_bound { BOUND_UNKNOWN, BOUND_MEMORY, BOUND_COMPUTE };
struct roofline_placement {
	double intensity; /* work per byte; NAN without bytes */
	double rate;      /* work per second, in G/s; NAN without time */
	double knee;      /* the intensity where the bandwidth meets the compute ceiling */
	double ceiling;   /* what the roofline allows at this intensity, in G/s */
	double percent;   /* rate in % of that ceiling */
	enum roofline_bound bound; /* below the knee: memory; at or above: compute */
};
/* Leaves what cannot be known NAN (and the bound unknown): a ceiling not measured, no
 * bytes, no work. */
void roofline_place(const struct roofline *r, int level, int compute, double work, double bytes,
		    double seconds, struct roofline_placement *p);

/* A kernel placed on the roofline. */
struct roofline_point {
	const char *label;
	int level;           /* the memory level of its intensity (a bandwidth ceiling) */
	double flops;        /* per second, of the data type plotted */
	double intensity;    /* FLOP per byte of the memory level plotted */
};

/* The plot: a self-contained HTML page holding an SVG (log-log: arithmetic intensity in
 * FLOP/byte against GFLOP/s), one bandwidth ceiling per memory level measured up to its
 * knee, one flat ceiling per data type measured, the points labelled, and a note under
 * it (why there are no points, say). shown: which ceilings to draw (NULL: every one
 * measured). Writes nothing from the network, no script. */
void roofline_plot_html(FILE *out, const struct roofline *r, const int shown[ROOF_COUNT],
			const struct roofline_point *points, size_t count, const char *title,
			const char *note);
/* The same figure without its page (the SVG, the note and the ceilings' source), for a
 * page of its own (gpuprof report). */
void roofline_plot_figure(FILE *out, const struct roofline *r, const int shown[ROOF_COUNT],
			  const struct roofline_point *points, size_t count, const char *note);

#endif
