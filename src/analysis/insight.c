/* Findings over a recorded run (see insight.h): the database read into per-process
 * arrays, the helpers the rules share, and the table of rules. */
#include "analysis/insight.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/hash.h"
#include "util/sort.h"

/* ---- the rules: one file each under rules/, one line here ----------------------------- */

void rule_device_idle(const struct insight_process *p, struct findings *out);
void rule_sync_per_launch(const struct insight_process *p, struct findings *out);
void rule_launch_bound(const struct insight_process *p, struct findings *out);
void rule_small_copies(const struct insight_process *p, struct findings *out);
void rule_pageable_copies(const struct insight_process *p, struct findings *out);
void rule_copy_kernel_serial(const struct insight_process *p, struct findings *out);
void rule_one_queue(const struct insight_process *p, struct findings *out);
void rule_latency_bound(const struct insight_process *p, struct findings *out);

const struct insight_rule insight_rules[] = {
	{ "device-idle", "the device sat idle between its work", rule_device_idle },
	{ "sync-per-launch", "the host waited for the device after every launch",
	  rule_sync_per_launch },
	{ "launch-bound", "kernels shorter than the time it takes to launch them",
	  rule_launch_bound },
	{ "small-copies", "many small copies", rule_small_copies },
	{ "pageable-copies", "copies from or to pageable host memory", rule_pageable_copies },
	{ "copy-kernel-serial", "copies and kernels serialised on one queue",
	  rule_copy_kernel_serial },
	{ "one-queue", "several threads' work serialised on one queue", rule_one_queue },
	{ "latency-bound", "kernels whose SMs and memory both stay far below their peak "
			   "(speed-of-light counters)", rule_latency_bound },
};
const size_t insight_rule_count = sizeof(insight_rules) / sizeof(insight_rules[0]);

/* ---- reading ---------------------------------------------------------------------------- */

/* Times a record may have: a record outside (a corrupt database) is left out, so that
 * no difference or sum of the rules' can overflow. */
#define TIME_MAX ((int64_t)1 << 62)  /* ns */
#define DURATION_MAX ((int64_t)1 << 50) /* ns: 13 days */

static int valid_times(int64_t start, int64_t end)
{
	return start >= 0 && end >= start && end <= TIME_MAX && end - start <= DURATION_MAX;
}

static int64_t clamp_time(int64_t t)
{
	return t < 0 ? 0 : t > TIME_MAX ? TIME_MAX : t;
}

static const char *text_or_empty(const unsigned char *text)
{
	return text ? (const char *)text : "";
}

static const char *keep_string(struct insight_run *run, const unsigned char *text)
{
	run->strings = xrealloc(run->strings, (run->string_count + 1) * sizeof(*run->strings));
	return run->strings[run->string_count++] = xstrdup(text ? (const char *)text : "");
}

/* Names repeat (a kernel launched a million times): one copy each, found by hash. */
struct names {
	const char **slots;
	size_t size, used;
};

static const char *intern(struct insight_run *run, struct names *n, const unsigned char *text)
{
	const char *s = text ? (const char *)text : "";
	if (2 * (n->used + 1) > n->size) {
		size_t size = n->size ? 2 * n->size : 256;
		const char **grown = xcalloc(size, sizeof(*grown));
		for (size_t i = 0; i < n->size; i++) {
			if (!n->slots[i])
				continue;
			size_t j = hash_string(n->slots[i]) & (size - 1);
			while (grown[j])
				j = (j + 1) & (size - 1);
			grown[j] = n->slots[i];
		}
		free(n->slots);
		n->slots = grown;
		n->size = size;
	}
	size_t j = hash_string(s) & (n->size - 1);
	while (n->slots[j] && strcmp(n->slots[j], s))
		j = (j + 1) & (n->size - 1);
	if (!n->slots[j]) {
		n->slots[j] = keep_string(run, (const unsigned char *)s);
		n->used++;
	}
	return n->slots[j];
}

/* An array of count items of size bytes, with room for one more: it doubles when count
 * reaches a power of two, so that a million rows cost some twenty copies. Its room is
 * implied by its count: an array cut by fit() never grows again. */
static void *grow(void *items, size_t count, size_t size)
{
	if (count & (count - 1))
		return items; /* room left since the last doubling */
	return xrealloc(items, (count ? 2 * count : 1) * size);
}

/* The array of grow() cut to its count (NULL stays NULL). */
static void *fit(void *items, size_t count, size_t size)
{
	return items ? xrealloc(items, (count ? count : 1) * size) : NULL;
}

static struct insight_process *process_of(struct insight_run *run, int64_t id)
{
	for (size_t i = 0; i < run->process_count; i++)
		if (run->processes[i].id == id)
			return &run->processes[i];
	return NULL;
}

static struct insight_device *device_of(struct insight_process *p, int64_t agent)
{
	for (size_t i = 0; i < p->device_count; i++)
		if (p->devices[i].agent == agent)
			return &p->devices[i];
	p->devices = xrealloc(p->devices, (p->device_count + 1) * sizeof(*p->devices));
	struct insight_device *d = &p->devices[p->device_count++];
	memset(d, 0, sizeof(*d));
	d->agent = agent;
	struct strbuf label = STRBUF_INIT;
	strbuf_addf(&label, "device %" PRId64, agent);
	d->label = strbuf_detach(&label);
	return d;
}

static int by_start(const void *a, const void *b)
{
	const struct insight_activity *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

/* The busy intervals of a device: its items merged where they overlap or touch. */
static void merge_busy(struct insight_device *d)
{
	sort_array(d->items, d->count, sizeof(*d->items), by_start);
	d->busy = xcalloc(d->count ? d->count : 1, sizeof(*d->busy));
	for (size_t i = 0; i < d->count; i++) {
		const struct insight_activity *a = &d->items[i];
		if (a->end < a->start)
			continue; /* a corrupt record: not counted */
		struct insight_interval *last = d->busy_count ? &d->busy[d->busy_count - 1] : NULL;
		if (last && a->start <= last->end) {
			if (a->end > last->end)
				last->end = a->end;
		} else {
			d->busy[d->busy_count++] = (struct insight_interval){ a->start, a->end };
		}
	}
	d->busy = fit(d->busy, d->busy_count, sizeof(*d->busy));
	for (size_t i = 0; i < d->busy_count; i++) {
		d->busy_ns += d->busy[i].end - d->busy[i].start;
		if (i)
			d->idle_ns += d->busy[i].start - d->busy[i - 1].end;
	}
}

static void link_call(struct insight_process *p, int64_t correlation_id, size_t call)
{
	if (!correlation_id)
		return;
	size_t j = hash_int((uint64_t)correlation_id) & (p->link_slots - 1);
	while (p->links[j].call && p->links[j].correlation_id != correlation_id)
		j = (j + 1) & (p->link_slots - 1);
	p->links[j] = (struct insight_link){ correlation_id, call + 1 };
}

static int read_calls(sqlite3 *db, struct insight_run *run, struct names *names,
		      struct error *err)
{
	sqlite3_stmt *s;
	/* each process's table of links: twice its calls, a power of two */
	if (store_prepare(db, "SELECT process_id, COUNT(*) FROM gpuprof_api_call "
			  "GROUP BY process_id", &s, err))
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		struct insight_process *p = process_of(run, sqlite3_column_int64(s, 0));
		size_t calls = (size_t)sqlite3_column_int64(s, 1);
		if (p)
			while (p->link_slots < 2 * calls)
				p->link_slots = p->link_slots ? 2 * p->link_slots : 64;
	}
	sqlite3_finalize(s);
	for (size_t i = 0; i < run->process_count; i++) {
		struct insight_process *p = &run->processes[i];
		if (!p->link_slots)
			p->link_slots = 64;
		p->links = xcalloc(p->link_slots, sizeof(*p->links));
	}
	/* enclosing calls before the calls they made: by start, the longer first */
	if (store_prepare(db, "SELECT c.process_id, c.tid, c.start, c.end, c.correlation_id, "
			  "s.string FROM gpuprof_api_call c LEFT JOIN gpuprof_string s "
			  "ON s.id = c.function_id ORDER BY c.process_id, c.tid, c.start, "
			  "c.end DESC", &s, err))
		return -1;
	struct insight_process *p = NULL;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		if (!p || p->id != id)
			p = process_of(run, id);
		if (!p || !valid_times(sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3)))
			continue;
		p->has_calls = 1;
		struct insight_call c = {
			.tid = sqlite3_column_int64(s, 1), .start = sqlite3_column_int64(s, 2),
			.end = sqlite3_column_int64(s, 3), .correlation_id = sqlite3_column_int64(s, 4),
		};
		struct insight_call *top = p->call_count ? &p->calls[p->call_count - 1] : NULL;
		if (top && top->tid == c.tid && c.start >= top->start && c.end <= top->end) {
			link_call(p, c.correlation_id, p->call_count - 1); /* made by top */
			continue;
		}
		c.name = intern(run, names, sqlite3_column_text(s, 5));
		p->calls = grow(p->calls, p->call_count, sizeof(*p->calls));
		p->calls[p->call_count] = c;
		link_call(p, c.correlation_id, p->call_count);
		p->call_count++;
	}
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return error_set(err, "cannot read '%s': %s", run->path, sqlite3_errmsg(db));
	return 0;
}

static int read_samples(sqlite3 *db, struct insight_run *run, struct names *names,
			struct error *err)
{
	if (!store_has_table(db, "gpuprof_sample"))
		return 0;
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT s.process_id, s.tid, s.time, f.function FROM gpuprof_sample s "
			  "LEFT JOIN gpuprof_stack k ON k.process_id = s.process_id "
			  "AND k.stack_id = s.stack_id LEFT JOIN gpuprof_frame f "
			  "ON f.process_id = k.process_id AND f.frame_id = k.frame_id "
			  "ORDER BY s.process_id, s.time", &s, err))
		return -1;
	struct insight_process *p = NULL;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		if (!p || p->id != id)
			p = process_of(run, id);
		if (!p)
			continue;
		p->has_samples = 1;
		p->samples = grow(p->samples, p->sample_count, sizeof(*p->samples));
		p->samples[p->sample_count++] = (struct insight_sample){
			sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
			intern(run, names, sqlite3_column_text(s, 3)) };
	}
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return error_set(err, "cannot read '%s': %s", run->path, sqlite3_errmsg(db));
	return 0;
}

/* Kernels and memory commands, each onto its device: a kernel's agent; a memory
 * command's queue's agent, else the device end of its direction. */
static int read_activities(sqlite3 *db, struct insight_run *run, struct names *names,
			   struct error *err)
{
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT k.process_id, k.agent_index, k.queue_index, s.string, "
			  "k.start, k.end, k.correlation_id, k.tid, 0, 0, 0, 0, 0 "
			  "FROM gpuprof_kernel k LEFT JOIN gpuprof_string s ON s.id = k.name_id "
			  "UNION ALL SELECT c.process_id, COALESCE(q.agent_index, CASE c.direction "
			  "WHEN 2 THEN c.src_agent_index ELSE c.dst_agent_index END), c.queue_index, "
			  "s.string, c.start, c.end, c.correlation_id, c.tid, c.bytes, c.direction, "
			  "c.src_memory_kind, c.dst_memory_kind, c.operation FROM gpuprof_memory_copy c "
			  "LEFT JOIN gpuprof_string s ON s.id = c.function_id "
			  "LEFT JOIN gpuprof_queue q ON q.process_id = c.process_id "
			  "AND q.queue_index = c.queue_index", &s, err))
		return -1;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct insight_process *p = process_of(run, sqlite3_column_int64(s, 0));
		if (!p || !valid_times(sqlite3_column_int64(s, 4), sqlite3_column_int64(s, 5)))
			continue;
		struct insight_device *d = device_of(p, sqlite3_column_int64(s, 1));
		int operation = sqlite3_column_int(s, 12);
		struct insight_activity a = {
			.queue = sqlite3_column_type(s, 2) == SQLITE_NULL ? -1
								       : sqlite3_column_int64(s, 2),
			.name = intern(run, names, sqlite3_column_text(s, 3)),
			.start = sqlite3_column_int64(s, 4), .end = sqlite3_column_int64(s, 5),
			.correlation_id = sqlite3_column_int64(s, 6), .tid = sqlite3_column_int64(s, 7),
			.bytes = sqlite3_column_int64(s, 8), .direction = sqlite3_column_int(s, 9),
			.src_memory_kind = sqlite3_column_int(s, 10),
			.dst_memory_kind = sqlite3_column_int(s, 11),
			.kind = operation == 0 ? INSIGHT_KERNEL
				: operation == 1 ? INSIGHT_COPY : INSIGHT_OTHER_MEMORY,
			.sm_pct = NAN, .memory_pct = NAN,
		};
		d->items = grow(d->items, d->count, sizeof(*d->items));
		d->items[d->count++] = a;
	}
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return error_set(err, "cannot read '%s': %s", run->path, sqlite3_errmsg(db));
	/* device labels: "GPU 1 (name)" */
	if (store_prepare(db, "SELECT a.process_id, a.agent_index, a.type, s.string "
			  "FROM gpuprof_agent a LEFT JOIN gpuprof_string s ON s.id = a.name_id", &s,
			  err))
		return -1;
	static const char *const types[] = { "agent", "CPU", "GPU", "accelerator" };
	while (sqlite3_step(s) == SQLITE_ROW) {
		struct insight_process *p = process_of(run, sqlite3_column_int64(s, 0));
		int64_t agent = sqlite3_column_int64(s, 1);
		for (size_t i = 0; p && i < p->device_count; i++) {
			if (p->devices[i].agent != agent)
				continue;
			int type = sqlite3_column_int(s, 2);
			const unsigned char *name = sqlite3_column_text(s, 3);
			struct strbuf label = STRBUF_INIT;
			strbuf_addf(&label, "%s %" PRId64 " (%s)", types[type >= 1 && type <= 3 ? type : 0],
				    agent, name ? (const char *)name : "");
			free(p->devices[i].label);
			p->devices[i].label = strbuf_detach(&label);
		}
	}
	sqlite3_finalize(s);
	return 0;
}

/* The speed-of-light counters of the kernels that have them, by (process, correlation
 * id): a table of the kernels first. */
static int read_counters(sqlite3 *db, struct insight_run *run, struct error *err)
{
	if (!store_has_table(db, "gpuprof_counter"))
		return 0;
	sqlite3_stmt *any;
	if (store_prepare(db, "SELECT 1 FROM gpuprof_counter LIMIT 1", &any, err))
		return -1;
	int none = sqlite3_step(any) != SQLITE_ROW; /* no table of the kernels to build */
	sqlite3_finalize(any);
	if (none)
		return 0;
	struct slot {
		int64_t process_id, correlation_id;
		struct insight_activity *kernel;
	} *slots;
	size_t kernels = 0, size = 64;
	for (size_t i = 0; i < run->process_count; i++)
		for (size_t d = 0; d < run->processes[i].device_count; d++)
			kernels += run->processes[i].devices[d].count;
	while (size < 2 * kernels)
		size *= 2;
	slots = xcalloc(size, sizeof(*slots));
	for (size_t i = 0; i < run->process_count; i++)
		for (size_t d = 0; d < run->processes[i].device_count; d++)
			for (size_t k = 0; k < run->processes[i].devices[d].count; k++) {
				struct insight_activity *a = &run->processes[i].devices[d].items[k];
				if (a->kind != INSIGHT_KERNEL || !a->correlation_id)
					continue;
				size_t j = hash_int((uint64_t)a->correlation_id ^
						    hash_int((uint64_t)run->processes[i].id)) & (size - 1);
				while (slots[j].kernel)
					j = (j + 1) & (size - 1);
				slots[j] = (struct slot){ run->processes[i].id, a->correlation_id, a };
			}
	sqlite3_stmt *s;
	int rc = store_prepare(db, "SELECT c.process_id, c.correlation_id, n.string, c.value "
			       "FROM gpuprof_counter c JOIN gpuprof_string n ON n.id = c.name_id "
			       "WHERE n.string IN ('sm__throughput.avg.pct_of_peak_sustained_elapsed', "
			       "'gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed') "
			       "AND c.value IS NOT NULL", &s, err);
	while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
		int64_t process_id = sqlite3_column_int64(s, 0), corr = sqlite3_column_int64(s, 1);
		size_t j = hash_int((uint64_t)corr ^ hash_int((uint64_t)process_id)) & (size - 1);
		while (slots[j].kernel && (slots[j].process_id != process_id ||
					   slots[j].correlation_id != corr))
			j = (j + 1) & (size - 1);
		if (!slots[j].kernel)
			continue;
		double value = sqlite3_column_double(s, 3);
		if (!strncmp(text_or_empty(sqlite3_column_text(s, 2)), "sm__", 4))
			slots[j].kernel->sm_pct = value;
		else
			slots[j].kernel->memory_pct = value;
	}
	if (rc == 0)
		sqlite3_finalize(s);
	free(slots);
	return rc;
}

/* Which calls launched a kernel or made a blocking copy, and which launches their thread
 * waited for before launching again. */
static void mark_launches(struct insight_process *p)
{
	for (size_t i = 0; i < p->device_count; i++)
		for (size_t k = 0; k < p->devices[i].count; k++) {
			const struct insight_activity *a = &p->devices[i].items[k];
			struct insight_call *c = (struct insight_call *)insight_call_of(p, a);
			if (c && a->kind == INSIGHT_KERNEL)
				c->launch = 1;
			else if (c && a->kind == INSIGHT_COPY && c->end >= a->end)
				c->blocking = 1;
		}
	struct insight_call *pending = NULL;
	for (size_t i = 0; i < p->call_count; i++) {
		struct insight_call *c = &p->calls[i];
		if (pending && pending->tid != c->tid)
			pending = NULL;
		if (c->launch)
			pending = c;
		else if (pending && (c->blocking || insight_is_wait(c->name))) {
			pending->waited = 1;
			pending = NULL;
		}
	}
}

/* The arrays the readers grew, cut to their counts. */
static void fit_arrays(struct insight_run *run)
{
	for (size_t i = 0; i < run->process_count; i++) {
		struct insight_process *p = &run->processes[i];
		p->calls = fit(p->calls, p->call_count, sizeof(*p->calls));
		p->samples = fit(p->samples, p->sample_count, sizeof(*p->samples));
		for (size_t d = 0; d < p->device_count; d++)
			p->devices[d].items = fit(p->devices[d].items, p->devices[d].count,
						  sizeof(*p->devices[d].items));
	}
}

int insight_read(sqlite3 *db, const char *path, struct insight_run *run, struct error *err)
{
	memset(run, 0, sizeof(*run));
	run->path = xstrdup(path);
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT id, pid, hostname, start, end FROM gpuprof_process "
			  "ORDER BY id", &s, err))
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		run->processes = xrealloc(run->processes,
					  (run->process_count + 1) * sizeof(*run->processes));
		struct insight_process *p = &run->processes[run->process_count++];
		memset(p, 0, sizeof(*p));
		p->id = sqlite3_column_int64(s, 0);
		p->pid = sqlite3_column_int64(s, 1);
		const unsigned char *host = sqlite3_column_text(s, 2);
		p->host = xstrdup(host ? (const char *)host : "");
		p->start = clamp_time(sqlite3_column_int64(s, 3));
		p->end = clamp_time(sqlite3_column_int64(s, 4));
		if (p->end < p->start)
			p->end = p->start;
	}
	sqlite3_finalize(s);
	struct names names = { NULL, 0, 0 };
	int rc = read_activities(db, run, &names, err);
	fit_arrays(run); /* before the next reader's arrays grow */
	rc = rc || read_calls(db, run, &names, err);
	fit_arrays(run);
	rc = rc || read_samples(db, run, &names, err);
	fit_arrays(run);
	free(names.slots);
	for (size_t i = 0; rc == 0 && i < run->process_count; i++) {
		struct insight_process *p = &run->processes[i];
		for (size_t d = 0; d < p->device_count; d++)
			merge_busy(&p->devices[d]);
		mark_launches(p);
	}
	if (rc == 0)
		rc = read_counters(db, run, err);
	for (size_t i = 0; rc == 0 && i < run->process_count; i++) {
		struct insight_process *p = &run->processes[i];
		/* a process that never ended cleanly: its bounds are its records' */
		for (size_t d = 0; d < p->device_count; d++)
			if (p->devices[d].busy_count &&
			    p->devices[d].busy[p->devices[d].busy_count - 1].end > p->end)
				p->end = p->devices[d].busy[p->devices[d].busy_count - 1].end;
	}
	if (rc)
		insight_run_release(run);
	return rc ? -1 : 0;
}

void insight_run_release(struct insight_run *run)
{
	for (size_t i = 0; i < run->process_count; i++) {
		struct insight_process *p = &run->processes[i];
		for (size_t d = 0; d < p->device_count; d++) {
			free(p->devices[d].label);
			free(p->devices[d].items);
			free(p->devices[d].busy);
		}
		free(p->devices);
		free(p->calls);
		free(p->samples);
		free(p->links);
		free(p->host);
	}
	for (size_t i = 0; i < run->string_count; i++)
		free(run->strings[i]);
	free(run->strings);
	free(run->processes);
	free(run->path);
	memset(run, 0, sizeof(*run));
}

/* ---- findings ------------------------------------------------------------------------- */

struct finding *finding_add(struct findings *out, const char *rule,
			    const struct insight_process *p, const struct insight_device *d,
			    int64_t cost_ns)
{
	out->items = xrealloc(out->items, (out->count + 1) * sizeof(*out->items));
	struct finding *f = &out->items[out->count++];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	f->pid = p->pid;
	f->device = d ? xstrdup(d->label) : NULL;
	f->cost_ns = cost_ns;
	f->cost_pct = p->end > p->start ? 100.0 * (double)cost_ns / (double)(p->end - p->start) : 0;
	strbuf_init(&f->what);
	strbuf_init(&f->evidence);
	strbuf_init(&f->advice);
	return f;
}

static int by_cost(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	return (x->cost_ns < y->cost_ns) - (x->cost_ns > y->cost_ns);
}

void insight_check(const struct insight_run *run, struct findings *out)
{
	size_t first = out->count;
	for (size_t i = 0; i < run->process_count; i++)
		for (size_t r = 0; r < insight_rule_count; r++)
			insight_rules[r].check(&run->processes[i], out);
	if (out->count > first)
		sort_array(out->items + first, out->count - first, sizeof(*out->items), by_cost);
}

void findings_release(struct findings *f)
{
	for (size_t i = 0; i < f->count; i++) {
		free(f->items[i].device);
		strbuf_release(&f->items[i].what);
		strbuf_release(&f->items[i].evidence);
		strbuf_release(&f->items[i].advice);
	}
	free(f->items);
	memset(f, 0, sizeof(*f));
}

/* ---- helpers for the rules ---------------------------------------------------------------- */

/* Calls that wait for the device (CUDA's runtime names carry a _vNNNN suffix). */
static const char *const waits[] = {
	"clFinish", "clWaitForEvents", "cudaDeviceSynchronize", "cudaStreamSynchronize",
	"cudaEventSynchronize", "cudaThreadSynchronize", "cuCtxSynchronize",
	"cuStreamSynchronize", "cuEventSynchronize",
};

int insight_is_wait(const char *name)
{
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		size_t n = strlen(waits[i]);
		if (!strncmp(name, waits[i], n) && (name[n] == '\0' || name[n] == '_'))
			return 1;
	}
	return 0;
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t insight_median(int64_t *values, size_t count)
{
	if (!count)
		return 0;
	sort_array(values, count, sizeof(*values), by_value);
	return count % 2 ? values[count / 2] : values[count / 2 - 1] / 2 + values[count / 2] / 2;
}

void insight_duration(struct strbuf *out, int64_t ns)
{
	if (ns >= 1000000000 || ns <= -1000000000)
		strbuf_addf(out, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000 || ns <= -1000000)
		strbuf_addf(out, "%.3f ms", (double)ns / 1e6);
	else if (ns >= 1000 || ns <= -1000)
		strbuf_addf(out, "%.3f us", (double)ns / 1e3);
	else
		strbuf_addf(out, "%" PRId64 " ns", ns);
}

void insight_thread_calls(const struct insight_process *p, int64_t tid, size_t *first,
			  size_t *end)
{
	size_t lo = 0, hi = p->call_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->calls[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo < p->call_count && p->calls[lo].tid == tid)
		lo++;
	*end = lo;
}

const struct insight_call *insight_call_of(const struct insight_process *p,
					   const struct insight_activity *a)
{
	if (!p->link_slots || !a->correlation_id)
		return NULL;
	size_t j = hash_int((uint64_t)a->correlation_id) & (p->link_slots - 1);
	while (p->links[j].call) {
		if (p->links[j].correlation_id == a->correlation_id)
			return &p->calls[p->links[j].call - 1];
		j = (j + 1) & (p->link_slots - 1);
	}
	return NULL;
}

size_t insight_device_queues(const struct insight_device *d, int64_t **queues)
{
	size_t count = 0;
	*queues = NULL;
	for (size_t k = 0; k < d->count; k++) { /* a device has few: a linear search */
		size_t q = 0;
		while (q < count && (*queues)[q] != d->items[k].queue)
			q++;
		if (q == count && d->items[k].queue >= 0) {
			*queues = xrealloc(*queues, (count + 1) * sizeof(**queues));
			(*queues)[count++] = d->items[k].queue;
		}
	}
	return count;
}

/* Time of [start, end) inside the calls of one thread (sorted, disjoint) from index
 * *from on; *from advances past calls that end before start. */
static int64_t covered(const struct insight_call *calls, size_t count, size_t *from,
		       int64_t start, int64_t end, const char **name, int64_t *longest)
{
	while (*from < count && calls[*from].end <= start)
		++*from;
	int64_t total = 0;
	for (size_t i = *from; i < count && calls[i].start < end; i++) {
		int64_t a = calls[i].start > start ? calls[i].start : start;
		int64_t b = calls[i].end < end ? calls[i].end : end;
		if (b > a) {
			total += b - a;
			if (b - a > *longest)
				*longest = b - a, *name = calls[i].name;
		}
	}
	return total;
}

/* Time or samples by (name, thread): names are interned, so a name is its pointer. An
 * open-addressing index over a growing array. */
struct tally {
	const char *name;
	int64_t tid, ns, count;
};

struct tallies {
	struct tally *items;
	size_t count;
	size_t *slots, size;          /* index + 1; 0: empty */
};

static void tally_add(struct tallies *t, const char *name, int64_t tid, int64_t ns)
{
	if (2 * (t->count + 1) > t->size) {
		t->size = t->size ? 2 * t->size : 64;
		free(t->slots);
		t->slots = xcalloc(t->size, sizeof(*t->slots));
		for (size_t i = 0; i < t->count; i++) {
			size_t j = hash_int((uintptr_t)t->items[i].name ^ hash_int((uint64_t)t->items[i].tid)) &
				   (t->size - 1);
			while (t->slots[j])
				j = (j + 1) & (t->size - 1);
			t->slots[j] = i + 1;
		}
	}
	size_t j = hash_int((uintptr_t)name ^ hash_int((uint64_t)tid)) & (t->size - 1);
	for (; t->slots[j]; j = (j + 1) & (t->size - 1)) {
		struct tally *x = &t->items[t->slots[j] - 1];
		if (x->name == name && x->tid == tid) {
			x->ns += ns;
			x->count++;
			return;
		}
	}
	t->items = xrealloc(t->items, (t->count + 1) * sizeof(*t->items));
	t->items[t->count++] = (struct tally){ name, tid, ns, 1 };
	t->slots[j] = t->count;
}

static int by_ns(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;
	return (x->ns < y->ns) - (x->ns > y->ns);
}

void insight_describe_gaps(const struct insight_process *p,
			   const struct insight_interval *gaps, size_t gap_count,
			   struct strbuf *out)
{
	int64_t idle = 0;
	for (size_t g = 0; g < gap_count; g++)
		idle += gaps[g].end - gaps[g].start;
	if (idle <= 0)
		return;
	struct tallies calls = { 0 }, functions = { 0 };
	int64_t outside = 0;
	if (p->has_calls) {
		/* per thread, the time of each gap spent in calls (named by the call that
		 * covered most of it); "outside": what the thread in calls the longest during
		 * the gap spent out of them (exact with one launching thread) */
		int64_t *in_any = xcalloc(gap_count, sizeof(*in_any));
		for (size_t first = 0, end; first < p->call_count; first = end) {
			int64_t tid = p->calls[first].tid;
			insight_thread_calls(p, tid, &first, &end);
			size_t from = 0; /* of the thread's calls: gaps and calls are sorted */
			for (size_t g = 0; g < gap_count; g++) {
				const char *name = NULL;
				int64_t longest = 0;
				int64_t ns = covered(p->calls + first, end - first, &from, gaps[g].start,
						     gaps[g].end, &name, &longest);
				if (ns > 0) {
					tally_add(&calls, name, tid, ns);
					if (ns > in_any[g])
						in_any[g] = ns;
				}
			}
		}
		for (size_t g = 0; g < gap_count; g++)
			outside += gaps[g].end - gaps[g].start - in_any[g];
		free(in_any);
	}
	if (p->has_samples) {
		size_t lo = 0;
		for (size_t g = 0; g < gap_count; g++) {
			while (lo < p->sample_count && p->samples[lo].time < gaps[g].start)
				lo++;
			for (size_t i = lo; i < p->sample_count && p->samples[i].time < gaps[g].end; i++)
				tally_add(&functions, p->samples[i].function, p->samples[i].tid, 1);
		}
	}
	sort_array(calls.items, calls.count, sizeof(*calls.items), by_ns);
	sort_array(functions.items, functions.count, sizeof(*functions.items), by_ns);
	for (size_t i = 0; i < calls.count && i < 3; i++) {
		const struct tally *c = &calls.items[i];
		strbuf_addf(out, "while idle, thread %" PRId64 " was in %s: ", c->tid, c->name);
		insight_duration(out, c->ns);
		strbuf_addf(out, " (%.1f %% of the idle time, in %" PRId64 " gap%s)\n",
			    100.0 * (double)c->ns / (double)idle, c->count, c->count == 1 ? "" : "s");
	}
	if (p->has_calls && outside > 0) {
		strbuf_addstr(out, "while idle, in no API call (the host's own code): ");
		insight_duration(out, outside);
		strbuf_addf(out, " (%.1f %%)\n", 100.0 * (double)outside / (double)idle);
	}
	int64_t sampled = 0;
	for (size_t i = 0; i < functions.count; i++)
		sampled += functions.items[i].ns;
	for (size_t i = 0; i < functions.count && i < 3; i++) {
		const struct tally *f = &functions.items[i];
		strbuf_addf(out, "sampled while idle: thread %" PRId64 " in %s (%" PRId64 " of %" PRId64
			    " samples)\n", f->tid, *f->name ? f->name : "an unknown function", f->ns,
			    sampled);
	}
	free(calls.items), free(calls.slots);
	free(functions.items), free(functions.slots);
}
