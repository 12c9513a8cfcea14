/* gpuprof summary's tables of device memory (see memory-summary.h). */
#include "writer/memory-summary.h"

#include <string.h>

static int devices_table(FILE *out, enum table_format format, const struct memory_report *r,
			 struct error *err)
{
	const char *names[] = { "Input", "Pid", "Device", "Allocations", "Frees",
				"Peak (bytes)", "Peak at (s)", "Held at end (bytes)",
				"Freed within 1 ms", "Frees of earlier memory" };
	struct table *t = table_begin(out, format, "memory",
				      "MEMORY (device memory held: its peak, first reached at the "
				      "time given from the process's start, and what was never "
				      "freed)", 10, names);
	for (size_t i = 0; i < r->count; i++) {
		const struct memory_device *d = &r->devices[i];
		table_int(t, d->input);
		table_int(t, d->pid);
		table_text(t, d->device);
		table_int(t, (int64_t)d->allocations);
		table_int(t, (int64_t)d->frees);
		table_int(t, (int64_t)d->peak_bytes);
		table_double(t, (double)d->peak_ns / 1e9, 6);
		table_int(t, (int64_t)d->end_bytes);
		table_int(t, (int64_t)d->churn);
		table_int(t, (int64_t)d->unmatched_frees);
	}
	return table_end(t, err);
}

/* What held each device's memory: by site at the peak or at the end, or by marker range
 * at the peak; the most bytes first. */
enum holders { AT_PEAK, AT_END, AT_PEAK_BY_RANGE };

static int holders_table(FILE *out, enum table_format format, const struct memory_report *r,
			 enum holders which, struct error *err)
{
	size_t rows = 0;
	for (size_t i = 0; i < r->count; i++)
		rows += which == AT_END ? r->devices[i].at_end_count
			: which == AT_PEAK ? r->devices[i].at_peak_count
					   : r->devices[i].at_peak_range_count;
	if (!rows)
		return 0;
	static const struct {
		const char *key, *title;
	} tables[] = {
		{ "memory_at_peak", "MEMORY AT THE PEAK (what held it, by allocation site: the "
				    "innermost frame of the user's code)" },
		{ "memory_never_freed", "MEMORY NEVER FREED (held when the recording ended, by "
					"allocation site: the innermost frame of the user's code)" },
		{ "memory_at_peak_by_range", "MEMORY AT THE PEAK BY RANGE (what held it, by the "
					     "innermost marker range open on the allocating thread: "
					     "a PyTorch operator under --torch-trace)" },
	};
	const char *names[] = { "Input", "Pid", "Device", which == AT_PEAK_BY_RANGE ? "Range" : "Site",
				"Where", "Allocations", "Bytes", "Pct" };
	struct table *t = table_begin(out, format, tables[which].key, tables[which].title, 8, names);
	for (size_t i = 0; i < r->count; i++) {
		const struct memory_device *d = &r->devices[i];
		const struct memory_site *sites = which == AT_END ? d->at_end
						  : which == AT_PEAK ? d->at_peak : d->at_peak_ranges;
		size_t count = which == AT_END ? d->at_end_count
			       : which == AT_PEAK ? d->at_peak_count : d->at_peak_range_count;
		uint64_t whole = which == AT_END ? d->end_bytes : d->peak_bytes;
		for (size_t k = 0; k < count; k++) {
			table_int(t, d->input);
			table_int(t, d->pid);
			table_text(t, d->device);
			table_text(t, sites[k].function);
			table_text(t, sites[k].where);
			table_int(t, (int64_t)sites[k].allocations);
			table_int(t, (int64_t)sites[k].bytes);
			table_double(t, whole ? 100.0 * (double)sites[k].bytes / (double)whole : 0, 2);
		}
	}
	return table_end(t, err);
}

int memory_summary_tables(FILE *out, enum table_format format, const struct memory_report *r,
			  struct error *err)
{
	if (!r->count)
		return 0;
	return devices_table(out, format, r, err) || holders_table(out, format, r, AT_PEAK, err) ||
	       holders_table(out, format, r, AT_PEAK_BY_RANGE, err) ||
	       holders_table(out, format, r, AT_END, err) ? -1 : 0;
}
