/* Communication kernels against compute kernels, per device (see communication.h). */
#include "analysis/communication.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/insight.h"
#include "store/store.h"
#include "util/strbuf.h"

int communication_kernel(const char *name)
{
	if (!name)
		return 0;
	if (!strncmp(name, "void ", 5))
		name += 5;
	return !strncmp(name, "nccl", 4);
}

/* Counts [pos, t): each kind covers it up to its latest end. */
static void advance(struct overlap_sweep *s, int64_t t)
{
	if (t <= s->pos)
		return;
	int64_t c = s->communication_end < t ? s->communication_end : t;
	int64_t k = s->compute_end < t ? s->compute_end : t;
	int64_t both = c < k ? c : k;
	s->communication_ns += c > s->pos ? c - s->pos : 0;
	s->compute_ns += k > s->pos ? k - s->pos : 0;
	s->overlapped_ns += both > s->pos ? both - s->pos : 0;
	s->pos = t;
}

void overlap_sweep_add(struct overlap_sweep *s, int64_t start, int64_t end, int communication)
{
	start = insight_bounded(start), end = insight_bounded(end);
	if (!s->started) {
		s->started = 1;
		s->pos = s->communication_end = s->compute_end = start;
	}
	advance(s, start);
	int64_t *covered = communication ? &s->communication_end : &s->compute_end;
	if (end > *covered)
		*covered = end;
	if (communication)
		s->communication_kernels++;
	else
		s->compute_kernels++;
}

void overlap_sweep_finish(struct overlap_sweep *s)
{
	advance(s, s->communication_end > s->compute_end ? s->communication_end : s->compute_end);
}

static void device_done(struct communication_report *r, struct communication_device *d)
{
	overlap_sweep_finish(&d->sweep);
	if (d->sweep.communication_kernels) {
		r->devices = xrealloc(r->devices, (r->count + 1) * sizeof(*r->devices));
		r->devices[r->count++] = *d;
	} else {
		free(d->device);
	}
}

int communication_gather(sqlite3 *db, int input, struct communication_report *r,
			 struct error *err)
{
	sqlite3_stmt *q;
	if (store_prepare(db, "SELECT k.process_id, p.pid, k.agent_index, s.string, k.start, "
			      "k.end, (SELECT n.string FROM gpuprof_agent g JOIN gpuprof_string n "
			      "ON n.id = g.name_id WHERE g.process_id = k.process_id AND "
			      "g.agent_index = k.agent_index) FROM gpuprof_kernel k "
			      "JOIN gpuprof_process p ON p.id = k.process_id "
			      "LEFT JOIN gpuprof_string s ON s.id = k.name_id "
			      "WHERE " INSIGHT_VALID_TIMES("k") " "
			      "ORDER BY k.process_id, k.agent_index, k.start, k.id", &q, err))
		return -1;
	struct communication_device d = { 0 };
	int64_t process_id = 0, agent = 0, open = 0;
	int row;
	while ((row = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(q, 0), a = sqlite3_column_int64(q, 2);
		if (open && (p != process_id || a != agent)) {
			device_done(r, &d);
			open = 0;
		}
		if (!open) {
			const unsigned char *name = sqlite3_column_text(q, 6);
			d = (struct communication_device){
				.input = input, .pid = sqlite3_column_int64(q, 1),
				.device = xstrdup(name ? (const char *)name : "") };
			process_id = p, agent = a, open = 1;
		}
		overlap_sweep_add(&d.sweep, sqlite3_column_int64(q, 4), sqlite3_column_int64(q, 5),
				  communication_kernel((const char *)sqlite3_column_text(q, 3)));
	}
	if (open)
		device_done(r, &d);
	int rc = row == SQLITE_DONE ? 0 : error_set(err, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return rc || communication_gather_calls(db, input, r, err) ? -1 : 0;
}

void communication_release(struct communication_report *r)
{
	for (size_t i = 0; i < r->count; i++)
		free(r->devices[i].device);
	free(r->devices);
	for (size_t i = 0; i < r->call_count; i++)
		free(r->calls[i].function);
	free(r->calls);
	*r = (struct communication_report){ 0 };
}
