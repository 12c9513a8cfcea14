/* Device memory over time (see memory.h). Each process's allocations and frees on each
 * device are taken in the order they took effect: an allocation once its call returned
 * (its end), a free from its start; a free and an allocation at the same time, the free
 * first. A free is matched to the live allocation at its address; one that matches none
 * freed memory allocated before the recording (counted, not subtracted). An allocation at
 * the address of a live one (its free was not recorded) replaces it. */
#include "analysis/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/insight.h"
#include "analysis/unwind.h"
#include "analysis/user-code.h"
#include "core/record.h"
#include "store/store.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/strbuf.h"

#define CHURN_NS 1000000 /* an allocation freed this soon is churn */

/* A live allocation of one process on one device: its slot in the live table. */
struct allocation {
	uint64_t address, bytes;
	int64_t made_ns, call_ns; /* call_ns: its call's time */
	size_t site, range; /* into the sites and the ranges read */
	int used;
};

/* Allocations and bytes of one site. */
struct tally {
	uint64_t allocations, bytes;
};

/* The sites read (each function and where once), and the site of each stack read, by
 * (process, stack id): two open-addressing tables, at most half full. */
struct sites {
	struct site_key {
		int64_t process_id, stack_id; /* stack_id 0: an empty slot */
		size_t site;
	} *keys;
	size_t key_count, key_capacity;
	struct memory_site *list; /* function and where only */
	size_t count;
	size_t *index, index_capacity; /* a site's index + 1 by its name; 0: empty */
	sqlite3_stmt *node;       /* a stack node's parent and frame */
};

static uint64_t site_hash(const char *function, const char *where)
{
	return hash_string(function) * 31 + hash_string(where);
}

/* The slot of function and where in the index: theirs, or the empty one where they go. */
static size_t *site_slot(struct sites *s, const char *function, const char *where)
{
	size_t mask = s->index_capacity - 1;
	for (size_t i = site_hash(function, where) & mask;; i = (i + 1) & mask) {
		size_t v = s->index[i];
		if (!v || (!strcmp(s->list[v - 1].function, function) &&
			   !strcmp(s->list[v - 1].where, where)))
			return &s->index[i];
	}
}

static size_t site_add(struct sites *s, const char *function, const char *where)
{
	if (2 * (s->count + 1) > s->index_capacity) {
		free(s->index);
		s->index_capacity = s->index_capacity ? 2 * s->index_capacity : 64;
		s->index = xcalloc(s->index_capacity, sizeof(*s->index));
		for (size_t i = 0; i < s->count; i++)
			*site_slot(s, s->list[i].function, s->list[i].where) = i + 1;
	}
	size_t *slot = site_slot(s, function, where);
	if (*slot)
		return *slot - 1;
	s->list = xrealloc(s->list, (s->count + 1) * sizeof(*s->list));
	s->list[s->count] = (struct memory_site){ xstrdup(function), xstrdup(where), 0, 0 };
	*slot = s->count + 1;
	return s->count++;
}

/* The slot of (process, stack) among the stacks read: its own, or the empty one. */
static struct site_key *key_slot(struct sites *s, int64_t process_id, int64_t stack_id)
{
	size_t mask = s->key_capacity - 1;
	for (size_t i = hash_int((uint64_t)process_id * 0x9e3779b97f4a7c15ull ^
				 (uint64_t)stack_id) & mask;; i = (i + 1) & mask) {
		struct site_key *k = &s->keys[i];
		if (!k->stack_id || (k->process_id == process_id && k->stack_id == stack_id))
			return k;
	}
}

/* Room for one more stack's site in the keys: their table doubled when half full. */
static void keys_grow(struct sites *s)
{
	if (2 * (s->key_count + 1) <= s->key_capacity)
		return;
	struct site_key *old = s->keys;
	size_t old_capacity = s->key_capacity;
	s->key_capacity = old_capacity ? 2 * old_capacity : 64;
	s->keys = xcalloc(s->key_capacity, sizeof(*s->keys));
	for (size_t i = 0; i < old_capacity; i++)
		if (old[i].stack_id)
			*key_slot(s, old[i].process_id, old[i].stack_id) = old[i];
	free(old);
}

/* The site of a stack: its innermost frame of the user's code, at its line; else its
 * leaf (the API function called). */
static size_t site_of(struct sites *s, int64_t process_id, int64_t stack_id)
{
	if (!stack_id || !s->node)
		return site_add(s, "[no call stack]", "");
	keys_grow(s);
	struct site_key *known = key_slot(s, process_id, stack_id);
	if (known->stack_id)
		return known->site;
	struct strbuf leaf = STRBUF_INIT, function = STRBUF_INIT, where = STRBUF_INIT;
	int found = 0;
	for (int64_t id = stack_id, depth = 0; id && !found && depth < 4096; depth++) {
		sqlite3_bind_int64(s->node, 1, process_id);
		sqlite3_bind_int64(s->node, 2, id);
		if (sqlite3_step(s->node) != SQLITE_ROW) {
			sqlite3_reset(s->node);
			break;
		}
		int64_t parent = sqlite3_column_int64(s->node, 0);
		const char *name = (const char *)sqlite3_column_text(s->node, 1);
		const char *module = (const char *)sqlite3_column_text(s->node, 2);
		const char *source = (const char *)sqlite3_column_text(s->node, 3);
		int line = sqlite3_column_int(s->node, 4);
		if (!depth)
			strbuf_addstr(&leaf, name ? name : "");
		if (module && user_code(module)) {
			found = 1;
			strbuf_addstr(&function, name ? name : "");
			if (source && *source && line > 0) {
				size_t n = strlen(source);
				const char *base = strrchr(source, '/');
				strbuf_addf(&where, "%s:%d", n > 3 && !strcmp(source + n - 3, ".py")
							     ? unwind_python_file(source)
							     : base ? base + 1 : source, line);
			}
		}
		sqlite3_reset(s->node);
		if (parent >= id) /* a corrupt tree */
			break;
		id = parent;
	}
	size_t site = found ? site_add(s, function.buf, where.buf)
			    : site_add(s, leaf.len ? leaf.buf : "[no call stack]", "");
	strbuf_release(&leaf);
	strbuf_release(&function);
	strbuf_release(&where);
	*key_slot(s, process_id, stack_id) = (struct site_key){ process_id, stack_id, site };
	s->key_count++;
	return site;
}

static void sites_release(struct sites *s)
{
	sqlite3_finalize(s->node);
	for (size_t i = 0; i < s->count; i++) {
		free(s->list[i].function);
		free(s->list[i].where);
	}
	free(s->list);
	free(s->index);
	free(s->keys);
}

static int by_bytes(const void *a, const void *b)
{
	const struct memory_site *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	int c = strcmp(x->function, y->function);
	return c ? c : strcmp(x->where, y->where);
}

/* The sites of a tally (one per site read), those with allocations, the most bytes
 * first, into *out. */
static void sites_of(const struct tally *t, const struct sites *sites, struct memory_site **out,
		     size_t *count)
{
	struct memory_site *list = xcalloc(sites->count ? sites->count : 1, sizeof(*list));
	size_t kept = 0;
	for (size_t i = 0; t && i < sites->count; i++)
		if (t[i].allocations)
			list[kept++] = (struct memory_site){ xstrdup(sites->list[i].function),
							     xstrdup(sites->list[i].where),
							     t[i].allocations, t[i].bytes };
	sort_array(list, kept, sizeof(*list), by_bytes);
	*out = list;
	*count = kept;
}

/* Per site (or range): what is live now, what was live at the peak (copied when the
 * peak ends: at the first free after it, or at the device's end) and what churned. */
struct tallies {
	struct tally *now, *at_peak, *churned;
	size_t length;
};

/* One device's state while its events stream: the live allocations by address (open
 * addressing), and the tallies by allocation site and by marker range. Memory follows
 * the live allocations, the sites and the ranges, not the events. */
struct device_state {
	struct allocation *live;
	size_t size, count;
	struct tallies by_site, by_range;
	int peak_open;                /* at_peak not yet copied for the last peak */
};

static struct allocation *live_slot(struct device_state *st, uint64_t address)
{
	size_t j = (size_t)hash_int(address) & (st->size - 1);
	while (st->live[j].used && st->live[j].address != address)
		j = (j + 1) & (st->size - 1);
	return &st->live[j];
}

static void live_remove(struct device_state *st, struct allocation *slot)
{
	/* backward-shift deletion keeps the probe chains whole */
	size_t i = (size_t)(slot - st->live);
	st->live[i].used = 0;
	for (size_t j = (i + 1) & (st->size - 1); st->live[j].used; j = (j + 1) & (st->size - 1)) {
		size_t home = (size_t)hash_int(st->live[j].address) & (st->size - 1);
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			st->live[i] = st->live[j];
			st->live[j].used = 0;
			i = j;
		}
	}
	st->count--;
}

static void live_add(struct device_state *st, struct allocation a)
{
	if (2 * (st->count + 1) > st->size) { /* grown: placed again */
		struct allocation *old = st->live;
		size_t old_size = st->size;
		st->size = st->size ? 2 * st->size : 1024;
		st->live = xcalloc(st->size, sizeof(*st->live));
		for (size_t i = 0; i < old_size; i++)
			if (old[i].used)
				*live_slot(st, old[i].address) = old[i];
		free(old);
	}
	a.used = 1;
	*live_slot(st, a.address) = a;
	st->count++;
}

/* The tallies as long as the keys read so far. */
static void tallies_fit(struct tallies *t, size_t length)
{
	if (length <= t->length)
		return;
	struct tally **each[] = { &t->now, &t->at_peak, &t->churned };
	for (size_t k = 0; k < 3; k++) {
		*each[k] = xrealloc(*each[k], length * sizeof(**each[k]));
		memset(*each[k] + t->length, 0, (length - t->length) * sizeof(**each[k]));
	}
	t->length = length;
}

static void tallies_reset(struct tallies *t)
{
	struct tally *each[] = { t->now, t->at_peak, t->churned };
	for (size_t k = 0; k < 3; k++)
		if (each[k])
			memset(each[k], 0, t->length * sizeof(*each[k]));
}

static void tallies_release(struct tallies *t)
{
	free(t->now);
	free(t->at_peak);
	free(t->churned);
}

/* An allocation made (sign 1) or gone (-1) under key. */
static void tally(struct tally *t, size_t key, uint64_t bytes, int sign)
{
	t[key].allocations += (uint64_t)sign;
	t[key].bytes += sign > 0 ? bytes : -bytes;
}

/* The live set is about to shrink: the last peak's holders are what is live now. */
static void peak_close(struct device_state *st)
{
	struct tallies *each[] = { &st->by_site, &st->by_range };
	for (size_t k = 0; k < 2 && st->peak_open; k++)
		if (each[k]->length)
			memcpy(each[k]->at_peak, each[k]->now, each[k]->length * sizeof(struct tally));
	st->peak_open = 0;
}

static void state_reset(struct device_state *st)
{
	if (st->live)
		memset(st->live, 0, st->size * sizeof(*st->live));
	st->count = 0;
	tallies_reset(&st->by_site);
	tallies_reset(&st->by_range);
	st->peak_open = 0;
}

static void state_release(struct device_state *st)
{
	free(st->live);
	tallies_release(&st->by_site);
	tallies_release(&st->by_range);
}

/* One process's memory on one device, once its events are read. */
static void finish_device(struct memory_device *d, struct device_state *st,
			  const struct sites *sites, const struct sites *ranges)
{
	tallies_fit(&st->by_site, sites->count);
	tallies_fit(&st->by_range, ranges->count);
	peak_close(st);
	if (d->peak_bytes) {
		sites_of(st->by_site.at_peak, sites, &d->at_peak, &d->at_peak_count);
		if (d->in_ranges)
			sites_of(st->by_range.at_peak, ranges, &d->at_peak_ranges,
				 &d->at_peak_range_count);
	}
	sites_of(st->by_site.now, sites, &d->at_end, &d->at_end_count);
	if (d->churn)
		sites_of(st->by_site.churned, sites, &d->churned, &d->churned_count);
	for (size_t i = 0; i < st->by_site.length; i++)
		d->end_bytes += st->by_site.now[i].bytes;
}

/* The bytes held after an event, kept as a point of the device's picture: at most
 * POINTS_MAX, pairs merged (their first time, the larger held) when full, and from
 * then on that many events to a point, so that the peaks stay drawn. */
#define POINTS_MAX 8192

static void point_add(struct memory_device *d, size_t *stride, size_t *in_last, int64_t at,
		      uint64_t held)
{
	if (d->points && *in_last < *stride) {
		if (held > d->held[d->points - 1])
			d->held[d->points - 1] = held;
		++*in_last;
		return;
	}
	if (d->points == POINTS_MAX) {
		for (size_t i = 0; i < POINTS_MAX / 2; i++) {
			d->times_ns[i] = d->times_ns[2 * i];
			d->held[i] = d->held[2 * i] > d->held[2 * i + 1] ? d->held[2 * i]
									 : d->held[2 * i + 1];
		}
		d->points = POINTS_MAX / 2;
		*stride *= 2;
	}
	if (!d->times_ns) {
		d->times_ns = xcalloc(POINTS_MAX, sizeof(*d->times_ns));
		d->held = xcalloc(POINTS_MAX, sizeof(*d->held));
	}
	d->times_ns[d->points] = at;
	d->held[d->points++] = held;
	*in_last = 1;
}

/* The innermost push/pop marker range (a PyTorch operator under --torch-trace) open on a
 * thread at a moment: the latest begun on it by then if still open, else the innermost
 * of its ancestors still open (the ranges open then all began before it: its parents).
 * The ranges of the threads that allocated are copied into an indexed temporary table
 * (SQLite's temporary store: on disk past its cache). */
struct range_lookup {
	sqlite3_stmt *latest, *parent;
	char name[256];
};

static int range_lookup_begin(sqlite3 *db, struct range_lookup *l, struct error *err)
{
	memset(l, 0, sizeof(*l));
	/* the allocating threads' ranges, keyed by thread and start: one B-tree filled in
	 * order, the ranges' names looked up only for the ranges found */
	if (store_exec(db, "DROP TABLE IF EXISTS temp.memory_ranges; CREATE TEMP TABLE "
			   "memory_ranges (process_id, tid, start, range_id, end, parent_id, "
			   "name_id, PRIMARY KEY (process_id, tid, start, range_id)) WITHOUT ROWID; "
			   "INSERT OR IGNORE INTO temp.memory_ranges SELECT m.process_id, m.tid, "
			   "m.start, m.range_id, m.end, m.parent_id, m.name_id FROM gpuprof_marker m "
			   "JOIN (SELECT DISTINCT process_id, tid FROM gpuprof_memory_allocation) t "
			   "ON t.process_id = m.process_id AND t.tid = m.tid WHERE m.kind = 1 "
			   "ORDER BY 1, 2, 3, 4", err) ||
	    store_prepare(db, "SELECT r.end, r.parent_id, s.string FROM temp.memory_ranges r "
			      "LEFT JOIN gpuprof_string s ON s.id = r.name_id WHERE r.process_id = "
			      "?1 AND r.tid = ?2 AND r.start <= ?3 ORDER BY r.start DESC, "
			      "r.range_id DESC LIMIT 1", &l->latest, err) ||
	    store_prepare(db, "SELECT m.end, m.parent_id, s.string FROM gpuprof_marker m "
			      "LEFT JOIN gpuprof_string s ON s.id = m.name_id WHERE m.process_id = "
			      "?1 AND m.range_id = ?2 AND m.kind = 1 LIMIT 1", &l->parent, err))
		return -1;
	return 0;
}

static void range_lookup_end(sqlite3 *db, struct range_lookup *l)
{
	sqlite3_finalize(l->latest);
	sqlite3_finalize(l->parent);
	struct error ignored;
	store_exec(db, "DROP TABLE IF EXISTS temp.memory_ranges", &ignored);
}

static const char *range_open(struct range_lookup *l, int64_t process_id, int64_t tid,
			      int64_t at)
{
	sqlite3_stmt *s = l->latest;
	sqlite3_bind_int64(s, 1, process_id);
	sqlite3_bind_int64(s, 2, tid);
	sqlite3_bind_int64(s, 3, at);
	const char *found = NULL;
	for (int depth = 0; depth < 256 && sqlite3_step(s) == SQLITE_ROW; depth++) {
		int64_t parent = sqlite3_column_int64(s, 1);
		if (sqlite3_column_int64(s, 0) >= at) {
			const unsigned char *name = sqlite3_column_text(s, 2);
			snprintf(l->name, sizeof(l->name), "%s", name ? (const char *)name : "");
			found = l->name;
		}
		sqlite3_reset(s);
		if (found || !parent)
			break;
		s = l->parent;
		sqlite3_bind_int64(s, 1, process_id);
		sqlite3_bind_int64(s, 2, parent);
	}
	sqlite3_reset(s);
	return found;
}

static void calls_drop(sqlite3 *db)
{
	struct error ignored;
	store_exec(db, "DROP TABLE IF EXISTS temp.memory_calls", &ignored);
}

int memory_gather(sqlite3 *db, int input, unsigned flags, struct memory_report *r,
		  struct error *err)
{
	if (!store_has_table(db, "gpuprof_memory_allocation"))
		return 0;
	/* nothing to read, nor to prepare for, without device allocations */
	sqlite3_stmt *any;
	struct strbuf sql = STRBUF_INIT;
	strbuf_addf(&sql, "SELECT 1 FROM gpuprof_memory_allocation WHERE memory_kind NOT IN "
			  "(%d, %d) LIMIT 1", MEMORY_KIND_PAGEABLE, MEMORY_KIND_PINNED);
	int rc = store_prepare(db, sql.buf, &any, err);
	strbuf_reset(&sql);
	int found = rc == 0 && sqlite3_step(any) == SQLITE_ROW;
	sqlite3_finalize(any);
	if (rc || !found) {
		strbuf_release(&sql);
		return rc ? -1 : 0;
	}
	int stacks = store_has_table(db, "gpuprof_launch_stack");
	/* the API calls of the allocations and frees (a CUDA record's own time is a moment):
	 * the longest of each id's, the runtime's call around the driver's */
	if (store_exec(db, "DROP TABLE IF EXISTS temp.memory_calls; CREATE TEMP TABLE "
			   "memory_calls AS SELECT process_id, correlation_id, MAX(end - start) AS "
			   "ns FROM gpuprof_api_call WHERE correlation_id IN (SELECT correlation_id "
			   "FROM gpuprof_memory_allocation WHERE correlation_id != 0) GROUP BY "
			   "process_id, correlation_id; CREATE INDEX temp.memory_calls_id ON "
			   "memory_calls (process_id, correlation_id)", err)) {
		strbuf_release(&sql);
		calls_drop(db);
		return -1;
	}
	strbuf_addf(&sql, "SELECT a.process_id, p.pid, a.agent_index, a.operation, a.address, "
			  "a.bytes, a.start - p.start, a.end - p.start, %s, "
			  "s.string, g.type, g.global_memory_bytes, MAX(a.end - a.start, COALESCE((SELECT c.ns FROM "
			  "temp.memory_calls c WHERE c.process_id = a.process_id AND "
			  "c.correlation_id = a.correlation_id AND a.correlation_id != 0), 0)), "
			  "a.start, a.tid FROM gpuprof_memory_allocation a JOIN gpuprof_process p "
			  "ON p.id = a.process_id LEFT JOIN gpuprof_agent g ON g.process_id = "
			  "a.process_id AND g.agent_index = a.agent_index LEFT JOIN gpuprof_string s "
			  "ON s.id = g.name_id WHERE a.memory_kind NOT IN (%d, %d) "
			  "ORDER BY a.process_id, a.agent_index, CASE "
			  "a.operation WHEN 2 THEN a.start ELSE a.end END, a.operation DESC, a.id",
		    stacks ? "(SELECT l.stack_id FROM gpuprof_launch_stack l WHERE a.correlation_id "
			     "!= 0 AND l.process_id = a.process_id AND l.correlation_id = "
			     "a.correlation_id AND l.domain != 4 ORDER BY l.id LIMIT 1)"
			   : "0", MEMORY_KIND_PAGEABLE, MEMORY_KIND_PINNED);
	sqlite3_stmt *q;
	struct sites sites = { 0 }, ranges = { 0 };
	rc = store_prepare(db, sql.buf, &q, err);
	strbuf_release(&sql);
	if (rc) {
		calls_drop(db);
		return -1;
	}
	if (stacks && store_prepare(db, "SELECT k.parent_id, f.function, f.module, f.source, "
					"f.line FROM gpuprof_stack k JOIN gpuprof_frame f ON "
					"f.process_id = k.process_id AND f.frame_id = k.frame_id "
					"WHERE k.process_id = ?1 AND k.stack_id = ?2", &sites.node, err)) {
		sqlite3_finalize(q);
		calls_drop(db);
		return -1;
	}
	/* the ranges open at each allocation, where push/pop ranges were recorded and asked
	 * for */
	struct range_lookup lookup, *ranges_open = NULL;
	if ((flags & MEMORY_BY_RANGE) && store_has_table(db, "gpuprof_marker")) {
		if (range_lookup_begin(db, &lookup, err)) {
			range_lookup_end(db, &lookup);
			sqlite3_finalize(q);
			sites_release(&sites);
			calls_drop(db);
			return -1;
		}
		ranges_open = &lookup;
	}
	struct device_state st = { 0 };
	size_t stride = 1, in_last = 0;
	struct memory_device *d = NULL;
	uint64_t held = 0;
	int row;
	while ((row = sqlite3_step(q)) == SQLITE_ROW || d) {
		int64_t process_id = row == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
		int64_t agent = row == SQLITE_ROW ? sqlite3_column_int64(q, 2) : -1;
		if (d && (row != SQLITE_ROW || process_id != d->process_id || agent != d->agent_index)) {
			finish_device(d, &st, &sites, &ranges);
			d = NULL;
		}
		if (row != SQLITE_ROW)
			break;
		if (!d) {
			r->devices = xrealloc(r->devices, (r->count + 1) * sizeof(*r->devices));
			d = &r->devices[r->count++];
			const char *name = (const char *)sqlite3_column_text(q, 9);
			struct strbuf label = STRBUF_INIT;
			insight_agent_label(&label, sqlite3_column_int(q, 10), agent, name);
			*d = (struct memory_device){ .input = input, .process_id = process_id,
						     .pid = sqlite3_column_int64(q, 1),
						     .agent_index = agent,
						     .device = xstrdup(name ? name : ""),
						     .device_bytes = (uint64_t)sqlite3_column_int64(q, 11),
						     .label = strbuf_detach(&label) };
			state_reset(&st);
			held = 0;
			stride = 1, in_last = 0;
		}
		int operation = sqlite3_column_int(q, 3);
		uint64_t address = (uint64_t)sqlite3_column_int64(q, 4);
		uint64_t bytes = (uint64_t)sqlite3_column_int64(q, 5);
		int64_t at = insight_bounded(operation == 2 ? sqlite3_column_int64(q, 6)
							    : sqlite3_column_int64(q, 7));
		int64_t call_ns = insight_bounded(sqlite3_column_int64(q, 12));
		struct allocation *slot = st.size ? live_slot(&st, address) : NULL;
		if (operation == 2 && (!slot || !slot->used)) {
			d->unmatched_frees++;
			continue;
		}
		if (slot && slot->used) { /* freed, or replaced by an allocation at its address */
			peak_close(&st);
			held -= slot->bytes;
			tally(st.by_site.now, slot->site, slot->bytes, -1);
			tally(st.by_range.now, slot->range, slot->bytes, -1);
			if (operation == 2 && at - slot->made_ns < CHURN_NS) {
				d->churn++;
				d->churn_ns = insight_add(d->churn_ns,
							  insight_add(slot->call_ns, call_ns));
				tally(st.by_site.churned, slot->site, slot->bytes, 1);
			}
			d->frees += operation == 2;
			live_remove(&st, slot);
		}
		if (operation != 2) {
			size_t site = site_of(&sites, process_id, sqlite3_column_int64(q, 8));
			const char *in = ranges_open ? range_open(ranges_open, process_id,
								  sqlite3_column_int64(q, 14),
								  sqlite3_column_int64(q, 13)) : NULL;
			size_t range = site_add(&ranges, in ? in : "[no range]", "");
			d->in_ranges |= in != NULL;
			tallies_fit(&st.by_site, sites.count);
			tallies_fit(&st.by_range, ranges.count);
			live_add(&st, (struct allocation){ address, bytes, at, call_ns, site, range, 1 });
			tally(st.by_site.now, site, bytes, 1);
			tally(st.by_range.now, range, bytes, 1);
			held += bytes;
			d->allocations++;
		}
		if (held > d->peak_bytes) {
			d->peak_bytes = held;
			d->peak_ns = at;
			st.peak_open = 1;
		}
		point_add(d, &stride, &in_last, at, held);
	}
	rc = row == SQLITE_DONE ? 0 : error_set(err, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	if (ranges_open)
		range_lookup_end(db, ranges_open);
	state_release(&st);
	sites_release(&sites);
	sites_release(&ranges);
	calls_drop(db);
	return rc;
}

static void site_list_release(struct memory_site *list, size_t count)
{
	for (size_t k = 0; k < count; k++) {
		free(list[k].function);
		free(list[k].where);
	}
	free(list);
}

void memory_release(struct memory_report *r)
{
	for (size_t i = 0; i < r->count; i++) {
		struct memory_device *d = &r->devices[i];
		site_list_release(d->at_peak, d->at_peak_count);
		site_list_release(d->at_end, d->at_end_count);
		site_list_release(d->churned, d->churned_count);
		site_list_release(d->at_peak_ranges, d->at_peak_range_count);
		free(d->device);
		free(d->label);
		free(d->times_ns);
		free(d->held);
	}
	free(r->devices);
	memset(r, 0, sizeof(*r));
}
