/* The tables of gpuprof summary over one or more databases: per-domain tables (kernels
 * by name, copies by direction, allocations, API calls by function, marker ranges), the
 * share of each domain, GPU time per marker range, how busy each device was and the gaps
 * it sat idle, one row per process, the hot functions, launch sites and findings. A
 * writer (gather) takes every database's events, then the tables are printed. */
#include "writer/run-summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/domain-stats.h"
#include "analysis/insight.h"
#include "analysis/profile.h"
#include "store/store.h"
#include "store/store-job.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/strbuf.h"
#include "util/table.h"
#include "writer/communication-summary.h"
#include "writer/memory-summary.h"
#include "writer/mpi-summary.h"
#include "writer/writer.h"

/* One device of one process: its activity merged into busy intervals. */
struct device {
	int64_t input, process_id, agent;
	char *label;
	uint64_t window_ns;           /* its process's duration */
	int64_t start, end;           /* the busy interval being extended; start < 0: none */
	uint64_t busy_ns, idle_ns, longest_gap_ns; /* sums wrap on corrupt times, never trap */
	int64_t gaps, longest_gap_at_ns, first_ns;
};

struct process {
	int64_t input, process_id, pid, rank, start_ns, end_ns;
	int64_t recording_start_ns; /* start_ns is the process's, this the recording's */
	char *host, *command;
	int64_t kernels, copies, api_calls;
	uint64_t kernel_ns, copy_bytes, api_ns;
};

/* A marker range of the input being read, for attributing kernels to ranges. */
struct range {
	int64_t process_id, range_id, parent_id;
	const char *name;             /* valid while the input is read */
	const char *module;           /* its module path, "" when none; likewise */
};

struct summary {
	int64_t input;                /* the database being read */
	struct domain_stats stats;
	struct stats_table range_kernels; /* kernel time by enclosing range name */
	struct range *ranges;         /* open addressing on (process_id, range_id) */
	size_t range_slots, range_count;
	struct device *devices;
	size_t device_count;
	struct process *processes;
	size_t process_count;
	struct {                      /* agent names of the input being read */
		int64_t process_id, index;
		char *label;
	} *agents;
	size_t agent_count;
	struct metric_range {         /* each metric series: its range of values */
		int64_t input, process_id, series, device, pid, first;
		char *source, *name, *unit;
		double low, high, sum;
		int64_t count;
	} *metrics;
	size_t metric_count;
	struct profile_tree samples;  /* call-stack samples, every input */
	struct profile_tree launches; /* launches with a call stack, every input */
	struct mpi_ranks *mpi;        /* the MPI analysis of each input */
	int64_t *mpi_inputs;
	size_t mpi_count;
	struct memory_report memory;  /* device memory, every input */
	struct communication_report communication; /* every input */
	struct findings findings;     /* gpuprof advise's, every input */
	int64_t *finding_inputs;      /* the input of each finding */
};

static void metric_range(struct summary *s, const struct event *e)
{
	struct metric_range *m = NULL;
	for (size_t i = s->metric_count; i-- > 0 && !m;) /* series are few */
		if (s->metrics[i].input == s->input && s->metrics[i].process_id == e->process_id &&
		    s->metrics[i].series == e->metric.series)
			m = &s->metrics[i];
	if (!m) {
		s->metrics = xrealloc(s->metrics, (s->metric_count + 1) * sizeof(*s->metrics));
		m = &s->metrics[s->metric_count++];
		*m = (struct metric_range){ .input = s->input, .process_id = e->process_id,
					    .series = e->metric.series, .device = e->metric.device,
					    .pid = e->metric.pid, .source = xstrdup(e->metric.source),
					    .name = xstrdup(e->name), .unit = xstrdup(e->metric.unit),
					    .low = e->metric.value, .high = e->metric.value,
					    .first = e->start_ns };
	}
	if (e->metric.value < m->low)
		m->low = e->metric.value;
	if (e->metric.value > m->high)
		m->high = e->metric.value;
	m->sum += e->metric.value;
	m->count++;
}

/* Whether series i is the copy of an earlier one: the machine's and the GPUs' series are
 * copied into each process of a run, so a merged database has them once per process, the
 * same series from the same first time. */
static int metric_copy(const struct summary *s, size_t i)
{
	const struct metric_range *m = &s->metrics[i];
	if (!strcmp(m->source, "PROCESS"))
		return 0;
	for (size_t j = 0; j < i; j++) {
		const struct metric_range *o = &s->metrics[j];
		if (o->input == m->input && o->device == m->device && o->first == m->first &&
		    !strcmp(o->source, m->source) && !strcmp(o->name, m->name))
			return 1;
	}
	return 0;
}

static struct process *process_of(struct summary *s, int64_t process_id)
{
	for (size_t i = s->process_count; i-- > 0;)
		if (s->processes[i].input == s->input && s->processes[i].process_id == process_id)
			return &s->processes[i];
	return NULL;
}

static struct device *device_of(struct summary *s, int64_t process_id, int64_t agent)
{
	for (size_t i = 0; i < s->device_count; i++) {
		struct device *d = &s->devices[i];
		if (d->input == s->input && d->process_id == process_id && d->agent == agent)
			return d;
	}
	s->devices = xrealloc(s->devices, (s->device_count + 1) * sizeof(*s->devices));
	struct device *d = &s->devices[s->device_count++];
	memset(d, 0, sizeof(*d));
	d->input = s->input;
	d->process_id = process_id;
	d->agent = agent;
	d->start = -1;
	const char *label = NULL;
	for (size_t i = 0; i < s->agent_count; i++)
		if (s->agents[i].process_id == process_id && s->agents[i].index == agent)
			label = s->agents[i].label;
	struct strbuf name = STRBUF_INIT;
	if (label)
		strbuf_addstr(&name, label);
	else
		strbuf_addf(&name, "agent %lld", (long long)agent);
	d->label = strbuf_detach(&name);
	struct process *p = process_of(s, process_id);
	d->window_ns = p ? duration_ns(p->start_ns, p->end_ns) : 0;
	return d;
}

/* Device work arrives in start order: extend the busy interval or close it. */
static void device_activity(struct summary *s, const struct event *e, int64_t agent)
{
	struct device *d = device_of(s, e->process_id, agent);
	int64_t end = e->end_ns > e->start_ns ? e->end_ns : e->start_ns;
	if (d->start < 0) {
		d->start = e->start_ns;
		d->end = end;
		d->first_ns = e->start_ns;
		return;
	}
	if (e->start_ns > d->end) {
		uint64_t gap = duration_ns(d->end, e->start_ns);
		d->busy_ns += duration_ns(d->start, d->end);
		d->idle_ns += gap;
		d->gaps++;
		if (gap > d->longest_gap_ns) {
			d->longest_gap_ns = gap;
			d->longest_gap_at_ns = d->end;
		}
		d->start = e->start_ns;
		d->end = end;
	} else if (end > d->end) {
		d->end = end;
	}
}

static size_t range_slot(const struct summary *s, int64_t process_id, int64_t range_id)
{
	size_t mask = s->range_slots - 1;
	size_t i = (size_t)hash_int((uint64_t)range_id ^ hash_int((uint64_t)process_id)) & mask;
	while (s->ranges[i].range_id &&
	       (s->ranges[i].range_id != range_id || s->ranges[i].process_id != process_id))
		i = (i + 1) & mask;
	return i;
}

static void remember_range(struct summary *s, const struct event *e)
{
	if (2 * (s->range_count + 1) > s->range_slots) {
		struct range *old = s->ranges;
		size_t old_slots = s->range_slots;
		s->range_slots = old_slots ? 2 * old_slots : 1024;
		s->ranges = xcalloc(s->range_slots, sizeof(*s->ranges));
		for (size_t i = 0; i < old_slots; i++)
			if (old[i].range_id)
				s->ranges[range_slot(s, old[i].process_id, old[i].range_id)] = old[i];
		free(old);
	}
	size_t i = range_slot(s, e->process_id, e->marker.range_id);
	if (!s->ranges[i].range_id)
		s->range_count++;
	s->ranges[i] = (struct range){ e->process_id, e->marker.range_id, e->marker.parent_id,
				       e->name, e->marker.module ? e->marker.module : "" };
}

/* Adds a kernel's time to each range it was launched in (each name once: a range
 * nested in one of the same name does not count it twice). A range with a module path
 * is named with it beside: "nn.Module.Net.forward/nn.Module.Linear.forward [Net.fc1]". */
static void attribute_kernel(struct summary *s, const struct event *e, uint64_t duration)
{
	const struct range *seen[RECORD_RANGE_DEPTH];
	int count = 0;
	int64_t id = e->kernel.range_id;
	struct strbuf label = STRBUF_INIT;
	for (int depth = 0; id && s->range_slots && depth < RECORD_RANGE_DEPTH; depth++) {
		const struct range *r = &s->ranges[range_slot(s, e->process_id, id)];
		if (!r->range_id)
			break;
		int repeated = 0;
		for (int i = 0; i < count; i++)
			repeated |= !strcmp(seen[i]->name, r->name) && !strcmp(seen[i]->module, r->module);
		if (!repeated) {
			seen[count++] = r;
			if (*r->module) {
				strbuf_reset(&label);
				strbuf_addf(&label, "%s [%s]", r->name, r->module);
			}
			stats_add(&s->range_kernels, *r->module ? label.buf : r->name, duration);
		}
		id = r->parent_id;
	}
	strbuf_release(&label);
}

static int summary_begin(void **state, const struct output_options *options,
			 struct error *err)
{
	*state = options->context;
	return 0;
}

static int summary_event(void *state, const struct event *e, struct error *err)
{
	struct summary *s = state;
	uint64_t duration = duration_ns(e->start_ns, e->end_ns);
	struct process *p = e->kind == EVENT_PROCESS ? NULL : process_of(s, e->process_id);
	switch (e->kind) {
	case EVENT_PROCESS:
		s->processes = xrealloc(s->processes,
					(s->process_count + 1) * sizeof(*s->processes));
		p = &s->processes[s->process_count++];
		memset(p, 0, sizeof(*p));
		p->input = s->input;
		p->process_id = e->process_id;
		p->pid = e->pid;
		p->rank = e->process.rank;
		p->start_ns = e->start_ns;
		p->end_ns = e->end_ns;
		p->recording_start_ns = e->process.recording_start_ns;
		p->host = xstrdup(e->process.hostname);
		p->command = xstrdup(e->process.command);
		return 0;
	case EVENT_AGENT: {
		struct strbuf label = STRBUF_INIT;
		strbuf_addf(&label, "%s %lld %s", e->agent.type_name, (long long)e->agent.index,
			    e->name);
		s->agents = xrealloc(s->agents, (s->agent_count + 1) * sizeof(*s->agents));
		s->agents[s->agent_count].process_id = e->process_id;
		s->agents[s->agent_count].index = e->agent.index;
		s->agents[s->agent_count++].label = strbuf_detach(&label);
		return 0;
	}
	case EVENT_KERNEL:
		device_activity(s, e, e->kernel.agent);
		attribute_kernel(s, e, duration);
		if (p) {
			p->kernels++;
			p->kernel_ns += duration;
		}
		break;
	case EVENT_MEMORY_COPY:
		device_activity(s, e, e->copy.dst_agent ? e->copy.dst_agent : e->copy.src_agent);
		if (p) {
			p->copies++;
			p->copy_bytes += e->copy.bytes;
		}
		break;
	case EVENT_API_CALL:
		if (p) {
			p->api_calls++;
			p->api_ns += duration;
		}
		break;
	case EVENT_MARKER:
		if (e->marker.kind != MARKER_MARK)
			remember_range(s, e);
		break;
	case EVENT_METRIC:
		metric_range(s, e);
		break;
	case EVENT_SAMPLE: /* the hot functions come from the database's tables */
	case EVENT_MEMORY_ALLOCATION:
	case EVENT_THREAD:
		break;
	}
	domain_stats_add(&s->stats, e);
	return 0;
}

static int summary_end(void *state, int failed, struct strbuf *written, struct error *err)
{
	struct summary *s = state;
	for (size_t i = 0; i < s->device_count; i++) { /* close the open busy intervals */
		struct device *d = &s->devices[i];
		if (d->input == s->input && d->start >= 0) {
			d->busy_ns += duration_ns(d->start, d->end);
			d->start = -1;
		}
	}
	for (size_t i = 0; i < s->agent_count; i++)
		free(s->agents[i].label);
	s->agent_count = 0;
	free(s->ranges); /* their names belong to this input */
	s->ranges = NULL;
	s->range_slots = s->range_count = 0;
	return failed ? -1 : 0;
}

static const struct writer_ops gather = {
	.format = "summary",
	.begin = summary_begin,
	.event = summary_event,
	.end = summary_end,
};

/* ---- printing ---------------------------------------------------------------------- */

struct printer {
	enum table_format format;
	double divisor;     /* ns per unit */
	const char *units;
	int decimals;
};

static int stats_table(const struct printer *pr, const char *key, const char *title,
		       const struct stats_table *st, struct error *err)
{
	if (!st->count)
		return 0;
	/* nested ranges: their self time after the total, the percentage of it */
	char columns[6][32];
	const char *plain[8] = { "Name", "Calls", columns[0], columns[1], "Percentage",
				 columns[2], columns[3], columns[4] };
	const char *nested[9] = { "Name", "Calls", columns[0], columns[5], columns[1],
				  "Self %", columns[2], columns[3], columns[4] };
	snprintf(columns[0], sizeof(columns[0]), "Total (%s)", pr->units);
	snprintf(columns[1], sizeof(columns[1]), "Average (%s)", pr->units);
	snprintf(columns[2], sizeof(columns[2]), "Min (%s)", pr->units);
	snprintf(columns[3], sizeof(columns[3]), "Max (%s)", pr->units);
	snprintf(columns[4], sizeof(columns[4]), "StdDev (%s)", pr->units);
	snprintf(columns[5], sizeof(columns[5]), "Self (%s)", pr->units);
	struct table *t = table_begin(stdout, pr->format, key, title, st->nested ? 9 : 8,
				      st->nested ? nested : plain);
	for (size_t i = 0; i < st->count; i++) {
		const struct stats_row *r = &st->rows[i];
		table_text(t, r->name);
		table_int(t, (int64_t)r->calls);
		table_double(t, (double)r->total_ns / pr->divisor, pr->decimals);
		if (st->nested)
			table_double(t, (double)r->self_ns / pr->divisor, pr->decimals);
		table_double(t, r->mean_ns / pr->divisor, pr->decimals);
		table_double(t, r->percentage, 2);
		table_double(t, (double)r->min_ns / pr->divisor, pr->decimals);
		table_double(t, (double)r->max_ns / pr->divisor, pr->decimals);
		table_double(t, r->stddev_ns / pr->divisor, pr->decimals);
	}
	return table_end(t, err);
}

static int ranges_table(const struct printer *pr, const struct summary *s, struct error *err)
{
	const struct stats_table *st = &s->range_kernels;
	if (!st->count)
		return 0;
	uint64_t all = 0; /* all kernel time, ranges or not */
	for (size_t i = 0; i < s->stats.kernels.count; i++)
		all += s->stats.kernels.rows[i].total_ns;
	char c[2][32];
	snprintf(c[0], sizeof(c[0]), "GPU time (%s)", pr->units);
	snprintf(c[1], sizeof(c[1]), "Average (%s)", pr->units);
	const char *names[] = { "Range", "Kernels", c[0], c[1], "% of kernel time" };
	struct table *t = table_begin(stdout, pr->format, "ranges",
				      "GPU TIME PER MARKER RANGE (kernels launched inside it or in "
				      "ranges nested in it)", 5, names);
	for (size_t i = 0; i < st->count; i++) {
		const struct stats_row *r = &st->rows[i];
		table_text(t, r->name);
		table_int(t, (int64_t)r->calls);
		table_double(t, (double)r->total_ns / pr->divisor, pr->decimals);
		table_double(t, r->mean_ns / pr->divisor, pr->decimals);
		table_double(t, all ? 100.0 * (double)r->total_ns / (double)all : 0, 2);
	}
	return table_end(t, err);
}

static int devices_table(const struct printer *pr, const struct summary *s, struct error *err)
{
	if (!s->device_count)
		return 0;
	char c[4][32];
	snprintf(c[0], sizeof(c[0]), "Busy (%s)", pr->units);
	snprintf(c[1], sizeof(c[1]), "Idle (%s)", pr->units);
	snprintf(c[2], sizeof(c[2]), "Longest gap (%s)", pr->units);
	snprintf(c[3], sizeof(c[3]), "Longest gap at (%s)", pr->units);
	const char *names[] = { "Input", "Pid", "Device", c[0], "Busy %", "Idle gaps", c[1],
				c[2], c[3] };
	struct table *t = table_begin(stdout, pr->format, "devices",
				      "DEVICE BUSY AND IDLE GAPS (gap times from the process "
				      "start)", 9, names);
	for (size_t i = 0; i < s->device_count; i++) {
		const struct device *d = &s->devices[i];
		const struct process *p = NULL;
		for (size_t j = 0; j < s->process_count; j++)
			if (s->processes[j].input == d->input &&
			    s->processes[j].process_id == d->process_id)
				p = &s->processes[j];
		table_int(t, d->input);
		table_int(t, p ? p->pid : 0);
		table_text(t, d->label);
		table_double(t, (double)d->busy_ns / pr->divisor, pr->decimals);
		if (d->window_ns)
			table_double(t, 100.0 * (double)d->busy_ns / (double)d->window_ns, 2);
		else
			table_null(t);
		table_int(t, d->gaps);
		table_double(t, (double)d->idle_ns / pr->divisor, pr->decimals);
		table_double(t, (double)d->longest_gap_ns / pr->divisor, pr->decimals);
		if (d->gaps && p)
			table_double(t, ((double)d->longest_gap_at_ns - (double)p->start_ns) / pr->divisor,
				     pr->decimals);
		else
			table_null(t);
	}
	return table_end(t, err);
}

static int processes_table(const struct printer *pr, const struct summary *s,
			   struct error *err)
{
	/* the process's life, and the part of it recorded (from the recorder's start: the
	 * first GPU API call under trace, the start under sys) */
	char c[4][32];
	snprintf(c[0], sizeof(c[0]), "Duration (%s)", pr->units);
	snprintf(c[1], sizeof(c[1]), "Kernel time (%s)", pr->units);
	snprintf(c[2], sizeof(c[2]), "API time (%s)", pr->units);
	snprintf(c[3], sizeof(c[3]), "Recorded (%s)", pr->units);
	const char *names[] = { "Input", "Host", "Pid", "Rank", "Command", c[0], c[3], "Kernels",
				c[1], "Copies", "Bytes copied", "API calls", c[2] };
	struct table *t = table_begin(stdout, pr->format, "processes", "PROCESSES AND RANKS",
				      13, names);
	for (size_t i = 0; i < s->process_count; i++) {
		const struct process *p = &s->processes[i];
		table_int(t, p->input);
		table_text(t, p->host);
		table_int(t, p->pid);
		if (p->rank >= 0)
			table_int(t, p->rank);
		else
			table_null(t);
		table_text(t, p->command);
		table_double(t, (double)duration_ns(p->start_ns, p->end_ns) / pr->divisor, pr->decimals);
		table_double(t, (double)duration_ns(p->recording_start_ns, p->end_ns) / pr->divisor,
			     pr->decimals);
		table_int(t, p->kernels);
		table_double(t, (double)p->kernel_ns / pr->divisor, pr->decimals);
		table_int(t, p->copies);
		table_int(t, (int64_t)p->copy_bytes);
		table_int(t, p->api_calls);
		table_double(t, (double)p->api_ns / pr->divisor, pr->decimals);
	}
	return table_end(t, err);
}

static int metrics_table(const struct printer *pr, const struct summary *s, struct error *err)
{
	if (!s->metric_count)
		return 0;
	const char *names[] = { "Input", "Source", "Device", "Pid", "Name", "Unit", "Samples",
				"Min", "Avg", "Max" };
	struct table *t = table_begin(stdout, pr->format, "metrics",
				      "METRICS (gpuprof sys: range of each series)", 10, names);
	for (size_t i = 0; i < s->metric_count; i++) {
		const struct metric_range *m = &s->metrics[i];
		if (metric_copy(s, i))
			continue;
		table_int(t, m->input);
		table_text(t, m->source);
		if (m->device >= 0)
			table_int(t, m->device);
		else
			table_null(t);
		if (!strcmp(m->source, "PROCESS"))
			table_int(t, m->pid);
		else
			table_null(t);
		table_text(t, m->name);
		table_text(t, m->unit);
		table_int(t, m->count);
		table_double(t, m->low, 2);
		table_double(t, m->sum / (double)m->count, 2);
		table_double(t, m->high, 2);
	}
	return table_end(t, err);
}

#define HOT_FUNCTIONS 30

static int hot_functions_table(const struct printer *pr, const struct summary *s,
			       struct error *err)
{
	if (!s->samples.samples)
		return 0;
	struct strbuf title = STRBUF_INIT;
	strbuf_addstr(&title, "HOT FUNCTIONS (");
	profile_count_text(&s->samples, &title);
	strbuf_addf(&title, "; the %d most often running)", HOT_FUNCTIONS);
	int rc = profile_flat_table(&s->samples, PROFILE_SORT_SELF, pr->format, "hot_functions",
				    title.buf, HOT_FUNCTIONS, err);
	strbuf_release(&title);
	return rc;
}

#define LAUNCH_SITES 20

/* Where the most device time was launched from in the user's code (trace
 * --launch-stacks). */
static int launch_sites_table(const struct printer *pr, const struct summary *s,
			      struct error *err)
{
	if (!s->launches.samples)
		return 0;
	struct strbuf title = STRBUF_INIT;
	strbuf_addf(&title, "LAUNCH SITES (device time of %llu launches with a call stack: "
			    "%.*f %s; by the innermost frame of the user's code on the path, then "
			    "the frame it went through; the %d that launched the most)",
		    (unsigned long long)s->launches.launches, pr->decimals,
		    (double)s->launches.samples / pr->divisor, pr->units, LAUNCH_SITES);
	int rc = profile_launch_sites_table(&s->launches, pr->format, "launch_sites", title.buf,
					    LAUNCH_SITES, pr->divisor, pr->decimals, pr->units, err);
	strbuf_release(&title);
	return rc;
}

/* gpuprof advise's findings over one input, and the analysis across its MPI ranks. */
static int gather_findings(sqlite3 *db, const char *path, struct summary *s, struct error *err)
{
	size_t first = s->findings.count;
	struct mpi_ranks ranks = { 0 };
	int rc = insight_check_ranks(db, path, NULL, &s->findings, &ranks, err);
	s->finding_inputs = xrealloc(s->finding_inputs,
				     (s->findings.count ? s->findings.count : 1) *
				     sizeof(*s->finding_inputs));
	for (size_t i = first; i < s->findings.count; i++)
		s->finding_inputs[i] = s->input;
	if (rc == 0 && ranks.rank_count) {
		s->mpi = xrealloc(s->mpi, (s->mpi_count + 1) * sizeof(*s->mpi));
		s->mpi_inputs = xrealloc(s->mpi_inputs, (s->mpi_count + 1) * sizeof(*s->mpi_inputs));
		s->mpi[s->mpi_count] = ranks;
		s->mpi_inputs[s->mpi_count++] = s->input;
	} else {
		mpi_ranks_release(&ranks);
	}
	return rc;
}

struct findings_job {
	struct summary *s;
	const char *path;
};

static int findings_job_run(sqlite3 *db, void *arg, struct error *err)
{
	struct findings_job *j = arg;
	return gather_findings(db, j->path, j->s, err);
}

/* The tables' pass over db and the findings of path side by side, the findings over a
 * connection of their own (store-job.h): the two share no part of the summary. */
static int gather_input(sqlite3 *db, const char *path, struct summary *s,
			const struct output_options *options, struct strbuf *written,
			struct error *err)
{
	const struct writer_ops *writer = &gather;
	struct profile_filter all = PROFILE_ALL;
	struct findings_job findings = { s, path };
	struct store_job job;
	store_job_start(&job, db, findings_job_run, &findings);
	int rc = export_database(db, &writer, 1, options, written, err) ||
		 profile_gather(db, &all, &s->samples, err) ||
		 profile_gather_launches(db, &all, &s->launches, err) ||
		 memory_gather(db, (int)s->input, MEMORY_BY_RANGE, &s->memory, err) ||
		 communication_gather(db, (int)s->input, &s->communication, err);
	struct error job_err;
	if (store_job_finish(&job, &job_err) && !rc) {
		*err = job_err;
		rc = -1;
	}
	return rc;
}

static int findings_table(const struct printer *pr, const struct summary *s,
			  struct error *err)
{
	if (!s->findings.count)
		return 0;
	struct strbuf cost = STRBUF_INIT;
	strbuf_addf(&cost, "Cost (%s)", pr->units);
	const char *names[] = { "Input", "Pid", "Rule", "Device", cost.buf, "Cost %", "Finding",
				"Cost % of" };
	struct table *t = table_begin(stdout, pr->format, "findings",
				      "FINDINGS (gpuprof advise gives their evidence and what to "
				      "change)", 8, names);
	for (size_t i = 0; i < s->findings.count; i++) {
		const struct finding *f = &s->findings.items[i];
		table_int(t, s->finding_inputs[i]);
		table_int(t, f->pid);
		table_text(t, f->rule);
		if (f->device)
			table_text(t, f->device);
		else
			table_null(t);
		table_double(t, (double)f->cost_ns / pr->divisor, pr->decimals);
		table_double(t, f->cost_pct, 2);
		table_text(t, f->what.buf);
		table_text(t, finding_share_of(f));
	}
	strbuf_release(&cost);
	return table_end(t, err);
}

static int print_summary(const struct printer *pr, struct summary *s, struct error *err)
{
	struct domain_stats *ds = &s->stats;
	domain_stats_finish(ds);
	stats_finish(&s->range_kernels);
	table_output_begin(stdout, pr->format);
	int rc = stats_table(pr, "kernels", "KERNEL_DISPATCH", &ds->kernels, err) ||
		 stats_table(pr, "memory_copies", "MEMORY_COPY", &ds->copies, err) ||
		 stats_table(pr, "memory_allocations", "MEMORY_ALLOCATION", &ds->allocations,
			     err) ||
		 stats_table(pr, "markers", "MARKER_API", &ds->markers, err);
	for (int i = 0; !rc && i < ds->api_count; i++)
		rc = stats_table(pr, ds->apis[i].domain, ds->apis[i].domain, &ds->apis[i].table,
				 err);
	rc = rc || stats_table(pr, "domains", "DOMAINS", &ds->domains, err) ||
	     ranges_table(pr, s, err) || devices_table(pr, s, err) ||
	     processes_table(pr, s, err) || metrics_table(pr, s, err) ||
	     hot_functions_table(pr, s, err) || launch_sites_table(pr, s, err);
	struct mpi_summary_units units = mpi_summary_units_of(pr->units);
	rc = rc || memory_summary_tables(stdout, pr->format, &s->memory, err) ||
	     communication_summary_table(stdout, pr->format, &units, &s->communication, err) ||
	     mpi_summary_tables(stdout, pr->format, &units, s->mpi, s->mpi_inputs,
				s->mpi_count, err) ||
	     findings_table(pr, s, err);
	table_output_end(stdout, pr->format);
	return rc;
}

/* How many of the recordings in db (a process: host, pid, real start time) are already
 * in seen, a list of such identities each ended by a NUL; the new ones are added. */
static int repeated_recordings(sqlite3 *db, struct strbuf *seen, int *total, struct error *err)
{
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT " STORE_RECORDING_KEY("p") " FROM gpuprof_process p", &s,
			  err))
		return -1;
	int repeated = 0;
	size_t known = seen->len; /* a database's own processes are never repeats of each other */
	*total = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(s, 0);
		if (!key)
			continue;
		++*total;
		int found = 0;
		for (size_t at = 0; at < known && !found; at += strlen(seen->buf + at) + 1)
			found = !strcmp(seen->buf + at, key);
		if (found)
			repeated++;
		else
			strbuf_add(seen, key, strlen(key) + 1);
	}
	sqlite3_finalize(s);
	return repeated;
}

int run_summary_print(char *const *inputs, int count, const char *format,
		      const char *units, struct error *err)
{
	struct summary s;
	memset(&s, 0, sizeof(s));
	domain_stats_init(&s.stats);
	stats_init(&s.range_kernels);
	profile_init(&s.samples);
	profile_init(&s.launches);
	struct output_options options = { .prefix = "", .context = &s };
	struct strbuf written = STRBUF_INIT;
	int rc = 0;
	struct strbuf seen = STRBUF_INIT;
	for (int i = 0; rc == 0 && i < count; i++) {
		sqlite3 *db;
		s.input = i;
		rc = store_open(inputs[i], &db, err);
		if (rc)
			break;
		int total = 0, repeated = repeated_recordings(db, &seen, &total, err);
		if (repeated < 0) {
			rc = -1;
		} else if (repeated && repeated == total) {
			fprintf(stderr, "gpuprof: summary: '%s' holds only recordings of an earlier "
					"input (the same run given twice?): left out\n", inputs[i]);
		} else if (repeated) {
			rc = error_set(err, "'%s' shares %d of its %d recordings with an earlier input, "
					    "which would count them twice: merge them first ('gpuprof "
					    "merge' keeps each recording once)", inputs[i], repeated, total);
		} else {
			rc = gather_input(db, inputs[i], &s, &options, &written, err);
		}
		sqlite3_close(db);
	}
	strbuf_release(&seen);
	struct mpi_summary_units u = mpi_summary_units_of(units);
	struct printer pr = { .format = (enum table_format)table_parse_format(format),
			      .units = units, .divisor = u.divisor, .decimals = u.decimals };
	if (rc == 0)
		rc = print_summary(&pr, &s, err);
	domain_stats_release(&s.stats);
	stats_release(&s.range_kernels);
	free(s.ranges);
	for (size_t i = 0; i < s.device_count; i++)
		free(s.devices[i].label);
	for (size_t i = 0; i < s.process_count; i++) {
		free(s.processes[i].host);
		free(s.processes[i].command);
	}
	for (size_t i = 0; i < s.mpi_count; i++)
		mpi_ranks_release(&s.mpi[i]);
	free(s.mpi);
	free(s.mpi_inputs);
	for (size_t i = 0; i < s.metric_count; i++) {
		free(s.metrics[i].source);
		free(s.metrics[i].name);
		free(s.metrics[i].unit);
	}
	free(s.metrics);
	profile_release(&s.samples);
	profile_release(&s.launches);
	findings_release(&s.findings);
	free(s.finding_inputs);
	memory_release(&s.memory);
	communication_release(&s.communication);
	free(s.devices);
	free(s.processes);
	free(s.agents);
	strbuf_release(&written);
	return rc;
}
