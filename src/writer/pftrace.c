/* The pftrace format: a Perfetto protobuf trace (<prefix>_results.pftrace) of
 * TrackEvent packets, encoded here and streamed to the file as events arrive. The layout
 * (tracks, slices, flows, counters) is the timeline's; docs/OUTPUTS.md describes it.
 *
 * Every packet is on one sequence. Event names, categories, argument names and text
 * values are interned: defined once in the packet that first uses them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/hash.h"
#include "util/progress.h"
#include "util/utf8.h"
#include "writer/output-file.h"
#include "writer/protobuf.h"
#include "writer/timeline.h"
#include "writer/writer.h"

/* Field numbers of Perfetto's trace protos (protos/perfetto/trace/) used here. */
enum {
	TRACE_PACKET = 1,
	PACKET_TIMESTAMP = 8, PACKET_SEQUENCE_ID = 10, PACKET_TRACK_EVENT = 11,
	PACKET_INTERNED_DATA = 12, PACKET_SEQUENCE_FLAGS = 13, PACKET_TRACK_DESCRIPTOR = 60,
	SEQUENCE_INCREMENTAL_STATE_CLEARED = 1, SEQUENCE_NEEDS_INCREMENTAL_STATE = 2,
	DESCRIPTOR_UUID = 1, DESCRIPTOR_NAME = 2, DESCRIPTOR_PROCESS = 3, DESCRIPTOR_THREAD = 4,
	DESCRIPTOR_PARENT_UUID = 5, DESCRIPTOR_COUNTER = 8,
	PROCESS_PID = 1, PROCESS_NAME = 6,
	THREAD_PID = 1, THREAD_TID = 2, THREAD_NAME = 5,
	COUNTER_UNIT = 3, COUNTER_UNIT_NAME = 6, UNIT_SIZE_BYTES = 3,
	EVENT_CATEGORY_IIDS = 3, EVENT_DEBUG_ANNOTATIONS = 4, EVENT_TYPE = 9,
	EVENT_NAME_IID = 10, EVENT_TRACK_UUID = 11, EVENT_COUNTER_VALUE = 30,
	EVENT_DOUBLE_COUNTER_VALUE = 44,
	EVENT_FLOW_IDS = 47, EVENT_TERMINATING_FLOW_IDS = 48,
	TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,
	ANNOTATION_NAME_IID = 1, ANNOTATION_INT = 4, ANNOTATION_DOUBLE = 5, ANNOTATION_STRING_IID = 17,
	INTERNED_IID = 1, INTERNED_TEXT = 2,
};

#define SEQUENCE_ID 1

/* A string field: Perfetto reads strings as UTF-8, and names from the program (markers,
 * command lines) may hold any bytes, so invalid ones become U+FFFD. */
static void pb_text(struct pb *pb, uint32_t field, const char *text)
{
	if (utf8_valid(text)) {
		pb_string(pb, field, text);
		return;
	}
	struct strbuf clean = STRBUF_INIT;
	utf8_sanitize(text, &clean);
	pb_bytes(pb, field, clean.buf, clean.len);
	strbuf_release(&clean);
}
#define FLUSH_BYTES (1 << 20)

/* Interned strings of one kind, and the InternedData field that defines them. Strings
 * are known by address: those of timed events stay put for the whole export (writer.h),
 * the others are literals. */
enum intern_kind { INTERN_CATEGORY, INTERN_NAME, INTERN_ARG_NAME, INTERN_ARG_TEXT,
		   INTERN_KINDS };
static const uint32_t intern_field[INTERN_KINDS] = { 1, 2, 3, 29 };

struct intern_slot {
	const char *text;
	uint64_t iid;
};

struct intern_table {
	struct intern_slot *slots;
	size_t slot_count, count;
};

struct pftrace_state {
	struct output_file file;
	struct pb buf;       /* packets not yet written to out */
	struct pb interned;  /* definitions the packet being built needs */
	struct intern_table tables[INTERN_KINDS];
	uint64_t next_iid;
	struct timeline *timeline;
	int stamped;
};

static size_t intern_slot(const struct intern_table *t, const char *text)
{
	size_t mask = t->slot_count - 1, i = (size_t)hash_int((uintptr_t)text) & mask;
	while (t->slots[i].text && t->slots[i].text != text)
		i = (i + 1) & mask;
	return i;
}

static uint64_t intern(struct pftrace_state *s, enum intern_kind kind, const char *text)
{
	struct intern_table *t = &s->tables[kind];
	if (2 * (t->count + 1) > t->slot_count) {
		struct intern_table old = *t;
		t->slot_count = old.slot_count ? 2 * old.slot_count : 256;
		t->slots = xcalloc(t->slot_count, sizeof(*t->slots));
		for (size_t i = 0; i < old.slot_count; i++)
			if (old.slots[i].text)
				t->slots[intern_slot(t, old.slots[i].text)] = old.slots[i];
		free(old.slots);
	}
	struct intern_slot *slot = &t->slots[intern_slot(t, text)];
	if (slot->text)
		return slot->iid;
	slot->text = text;
	slot->iid = s->next_iid++;
	t->count++;
	/* defined in the packet that first uses it */
	size_t entry = pb_open(&s->interned, intern_field[kind]);
	pb_varint(&s->interned, INTERNED_IID, slot->iid);
	pb_text(&s->interned, INTERNED_TEXT, text);
	pb_close(&s->interned, entry);
	return slot->iid;
}

static int flush_buffer(struct pftrace_state *s, struct error *err)
{
	int rc = output_file_write(&s->file, s->buf.buf, s->buf.len, err);
	s->buf.len = 0;
	return rc;
}

/* Starts a packet on the sequence; returns what packet_end() needs. */
static size_t packet_begin(struct pftrace_state *s, int64_t timestamp, uint32_t flags)
{
	size_t packet = pb_open(&s->buf, TRACE_PACKET);
	if (timestamp >= 0)
		pb_varint(&s->buf, PACKET_TIMESTAMP, (uint64_t)timestamp);
	pb_varint(&s->buf, PACKET_SEQUENCE_ID, SEQUENCE_ID);
	if (flags)
		pb_varint(&s->buf, PACKET_SEQUENCE_FLAGS, flags);
	return packet;
}

static int packet_end(struct pftrace_state *s, size_t packet, struct error *err)
{
	if (s->interned.len) {
		pb_bytes(&s->buf, PACKET_INTERNED_DATA, s->interned.buf, s->interned.len);
		s->interned.len = 0;
	}
	pb_close(&s->buf, packet);
	return s->buf.len >= FLUSH_BYTES ? flush_buffer(s, err) : 0;
}

static void annotation(struct pftrace_state *s, const struct slice_arg *arg)
{
	uint64_t name = intern(s, INTERN_ARG_NAME, arg->name);
	uint64_t text = arg->text ? intern(s, INTERN_ARG_TEXT, arg->text) : 0;
	size_t a = pb_open(&s->buf, EVENT_DEBUG_ANNOTATIONS);
	pb_varint(&s->buf, ANNOTATION_NAME_IID, name);
	if (arg->text)
		pb_varint(&s->buf, ANNOTATION_STRING_IID, text);
	else
		pb_int64(&s->buf, ANNOTATION_INT, arg->value);
	pb_close(&s->buf, a);
}

/* A kernel's hardware counter as an annotation named by the metric (CUPTI's names hold
 * "__", so they meet no argument of the slice's own); none for a counter the profiler
 * gave no value (never 0 in its place). */
static void counter_annotation(struct pftrace_state *s, const struct event_counter *c)
{
	if (isnan(c->value))
		return;
	uint64_t name = intern(s, INTERN_ARG_NAME, c->name); /* valid while the export runs */
	uint64_t bits;
	memcpy(&bits, &c->value, sizeof(bits));
	size_t a = pb_open(&s->buf, EVENT_DEBUG_ANNOTATIONS);
	pb_varint(&s->buf, ANNOTATION_NAME_IID, name);
	pb_fixed64(&s->buf, ANNOTATION_DOUBLE, bits);
	pb_close(&s->buf, a);
}

/* The first process track gets an instant at its start that says what wrote the trace
 * and in which version of the layout. */
static int stamp(struct pftrace_state *s, const struct track *t, int64_t ts,
		 struct error *err)
{
	uint64_t name = intern(s, INTERN_NAME, "gpuprof");
	size_t packet = packet_begin(s, ts, SEQUENCE_NEEDS_INCREMENTAL_STATE);
	size_t ev = pb_open(&s->buf, PACKET_TRACK_EVENT);
	pb_varint(&s->buf, EVENT_TYPE, TYPE_INSTANT);
	pb_varint(&s->buf, EVENT_TRACK_UUID, t->uuid);
	pb_varint(&s->buf, EVENT_NAME_IID, name);
	const struct slice_arg args[] = {
		{ .name = "format", .text = "gpuprof pftrace" },
		{ .name = "format_version", .text = TIMELINE_FORMAT_VERSION },
		{ .name = "gpuprof_version", .text = GPUPROF_VERSION },
		{ .name = "database_schema", .text = STORE_SCHEMA_VERSION },
	};
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
		annotation(s, &args[i]);
	pb_close(&s->buf, ev);
	return packet_end(s, packet, err);
}

static int on_track(void *ctx, const struct track *t, struct error *err)
{
	struct pftrace_state *s = ctx;
	size_t packet = packet_begin(s, -1, 0);
	size_t d = pb_open(&s->buf, PACKET_TRACK_DESCRIPTOR);
	pb_varint(&s->buf, DESCRIPTOR_UUID, t->uuid);
	if (t->kind == TRACK_PROCESS) {
		size_t p = pb_open(&s->buf, DESCRIPTOR_PROCESS);
		pb_varint(&s->buf, PROCESS_PID, (uint64_t)t->pid);
		pb_text(&s->buf, PROCESS_NAME, t->name);
		pb_close(&s->buf, p);
	} else if (t->kind == TRACK_THREAD) {
		size_t th = pb_open(&s->buf, DESCRIPTOR_THREAD);
		pb_varint(&s->buf, THREAD_PID, (uint64_t)t->pid);
		pb_varint(&s->buf, THREAD_TID, (uint64_t)t->tid);
		pb_text(&s->buf, THREAD_NAME, t->name); /* "name (thread N)" when it was named */
		pb_close(&s->buf, th);
	} else {
		pb_varint(&s->buf, DESCRIPTOR_PARENT_UUID, t->parent_uuid);
		pb_text(&s->buf, DESCRIPTOR_NAME, t->name);
		if (t->kind == TRACK_COUNTER) {
			size_t c = pb_open(&s->buf, DESCRIPTOR_COUNTER);
			if (!strcmp(t->unit, "bytes"))
				pb_varint(&s->buf, COUNTER_UNIT, UNIT_SIZE_BYTES);
			else
				pb_text(&s->buf, COUNTER_UNIT_NAME, t->unit);
			pb_close(&s->buf, c);
		}
	}
	pb_close(&s->buf, d);
	if (packet_end(s, packet, err))
		return -1;
	if (t->kind == TRACK_PROCESS && !s->stamped) {
		s->stamped = 1;
		return stamp(s, t, t->start_ns, err);
	}
	return 0;
}

static int on_slice_begin(void *ctx, const struct track *t, const struct event *e,
			  struct error *err)
{
	struct pftrace_state *s = ctx;
	struct slice_arg args[TIMELINE_MAX_ARGS];
	int count = timeline_args(e, args);
	uint64_t category = intern(s, INTERN_CATEGORY, timeline_category(e));
	uint64_t name = intern(s, INTERN_NAME, timeline_slice_name(e));
	size_t packet = packet_begin(s, e->start_ns, SEQUENCE_NEEDS_INCREMENTAL_STATE);
	size_t ev = pb_open(&s->buf, PACKET_TRACK_EVENT);
	pb_varint(&s->buf, EVENT_TYPE, TYPE_SLICE_BEGIN);
	pb_varint(&s->buf, EVENT_TRACK_UUID, t->uuid);
	pb_varint(&s->buf, EVENT_CATEGORY_IIDS, category);
	pb_varint(&s->buf, EVENT_NAME_IID, name);
	for (int i = 0; i < count; i++)
		annotation(s, &args[i]);
	for (size_t i = 0; e->kind == EVENT_KERNEL && i < e->kernel.counter_count; i++)
		counter_annotation(s, &e->kernel.counters[i]);
	for (int i = 0; e->kind == EVENT_API_CALL && i < e->api.message_flow_count; i++)
		pb_fixed64(&s->buf, e->api.message_end ? EVENT_TERMINATING_FLOW_IDS : EVENT_FLOW_IDS,
			   (uint64_t)e->api.message_flows[i]);
	uint64_t flow = timeline_flow_id(e);
	if (flow)
		pb_fixed64(&s->buf, timeline_is_device_work(e) ? EVENT_TERMINATING_FLOW_IDS
							       : EVENT_FLOW_IDS, flow);
	pb_close(&s->buf, ev);
	return packet_end(s, packet, err);
}

static int on_slice_end(void *ctx, const struct track *t, int64_t ts, struct error *err)
{
	struct pftrace_state *s = ctx;
	size_t packet = packet_begin(s, ts, 0);
	size_t ev = pb_open(&s->buf, PACKET_TRACK_EVENT);
	pb_varint(&s->buf, EVENT_TYPE, TYPE_SLICE_END);
	pb_varint(&s->buf, EVENT_TRACK_UUID, t->uuid);
	pb_close(&s->buf, ev);
	return packet_end(s, packet, err);
}

static int on_counter(void *ctx, const struct track *t, int64_t ts, double value,
		      struct error *err)
{
	struct pftrace_state *s = ctx;
	size_t packet = packet_begin(s, ts, 0);
	size_t ev = pb_open(&s->buf, PACKET_TRACK_EVENT);
	pb_varint(&s->buf, EVENT_TYPE, TYPE_COUNTER);
	pb_varint(&s->buf, EVENT_TRACK_UUID, t->uuid);
	if (timeline_whole(value)) { /* whole numbers (bytes) stay integers */
		pb_int64(&s->buf, EVENT_COUNTER_VALUE, (int64_t)value);
	} else {
		uint64_t bits;
		memcpy(&bits, &value, sizeof(bits));
		pb_fixed64(&s->buf, EVENT_DOUBLE_COUNTER_VALUE, bits);
	}
	pb_close(&s->buf, ev);
	return packet_end(s, packet, err);
}

static const struct timeline_ops pftrace_timeline = {
	.track = on_track,
	.slice_begin = on_slice_begin,
	.slice_end = on_slice_end,
	.counter = on_counter,
};

static int pftrace_begin(void **state, const struct output_options *options,
			 struct error *err)
{
	struct pftrace_state *s = xcalloc(1, sizeof(*s));
	s->next_iid = 1;
	*state = s;
	if (output_file_open(&s->file, options->prefix, "_results.pftrace", err))
		return -1;
	s->timeline = timeline_new(&pftrace_timeline, s);
	/* The sequence starts with its interned state cleared. */
	size_t packet = packet_begin(s, -1, SEQUENCE_INCREMENTAL_STATE_CLEARED);
	return packet_end(s, packet, err);
}

static int pftrace_event(void *state, const struct event *e, struct error *err)
{
	struct pftrace_state *s = state;
	return timeline_event(s->timeline, e, err);
}

/* Beyond this, the Perfetto UI running in a browser may not hold the trace: browsers
 * allow a page about 2 GB, and the UI's form of a trace is 2 to 4 times the file
 * (perfetto.dev, "Visualising large traces"). */
#define PFTRACE_BROWSER_BYTES 500000000L

static int pftrace_end(void *state, int failed, struct strbuf *written, struct error *err)
{
	struct pftrace_state *s = state;
	if (!failed && s->file.out)
		failed = timeline_finish(s->timeline, err) || flush_buffer(s, err);
	long bytes = !failed && s->file.out ? ftell(s->file.out) : -1;
	if (bytes > PFTRACE_BROWSER_BYTES)
		progress_message("gpuprof: %s is %.1f GB: the Perfetto UI holds about 2 GB in a "
				 "browser, and a trace takes 2 to 4 times its size there: open it "
				 "through trace_processor --httpd (the UI's native accelerator), or "
				 "write a window of the run with gpuprof convert --from S --to S "
				 "(seconds from the process's start)\n", s->file.path, bytes / 1e9);
	int rc = output_file_close(&s->file, failed, written, err);
	timeline_free(s->timeline);
	for (int k = 0; k < INTERN_KINDS; k++)
		free(s->tables[k].slots);
	free(s->buf.buf);
	free(s->interned.buf);
	free(s);
	return rc;
}

const struct writer_ops pftrace_writer = {
	.format = "pftrace",
	.begin = pftrace_begin,
	.event = pftrace_event,
	.end = pftrace_end,
	.timeline = 1,
};
