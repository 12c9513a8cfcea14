/* The json format: the Chrome trace-event format (<prefix>_results.json), which Perfetto
 * and chrome://tracing open. The layout (tracks, slices, flows, counters) is the
 * timeline's; each track is a thread of its process ("tid"), named by metadata events.
 * Streamed: one event per line, written as events arrive. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/json.h"
#include "util/progress.h"
#include "writer/output-file.h"
#include "writer/timeline.h"
#include "writer/writer.h"

#define FLUSH_BYTES (1 << 20)

/* Beyond this, a browser cannot parse the file (its string length limit). */
#define JSON_BROWSER_LIMIT 1500000000L

struct json_state {
	struct output_file file;
	struct strbuf buf;
	struct timeline *timeline;
	int any; /* an event was written: the next one follows a comma */
};

static int flush_buffer(struct json_state *s, struct error *err)
{
	int rc = output_file_write(&s->file, s->buf.buf, s->buf.len, err);
	strbuf_reset(&s->buf);
	return rc;
}

/* Starts an event: the separator, its phase, pid and tid. */
static void event_begin(struct json_state *s, const char *phase, const struct track *t)
{
	strbuf_addstr(&s->buf, s->any ? ",\n{\"ph\":\"" : "{\"ph\":\"");
	s->any = 1;
	strbuf_addstr(&s->buf, phase);
	strbuf_addstr(&s->buf, "\",\"pid\":");
	json_int(&s->buf, t->pid);
	strbuf_addstr(&s->buf, ",\"tid\":");
	json_int(&s->buf, t->tid);
}

static int event_end(struct json_state *s, struct error *err)
{
	strbuf_addch(&s->buf, '}');
	return s->buf.len >= FLUSH_BYTES ? flush_buffer(s, err) : 0;
}

static void metadata(struct json_state *s, const struct track *t, const char *name,
		     const char *key, const char *text, int64_t value)
{
	event_begin(s, "M", t);
	strbuf_addstr(&s->buf, ",\"name\":\"");
	strbuf_addstr(&s->buf, name);
	strbuf_addstr(&s->buf, "\",\"args\":{\"");
	strbuf_addstr(&s->buf, key);
	strbuf_addstr(&s->buf, "\":");
	if (text)
		json_string(&s->buf, text);
	else
		json_int(&s->buf, value);
	strbuf_addstr(&s->buf, "}}");
}

static int on_track(void *ctx, const struct track *t, struct error *err)
{
	struct json_state *s = ctx;
	if (t->kind == TRACK_PROCESS) {
		metadata(s, t, "process_name", "name", t->name, 0);
		metadata(s, t, "process_sort_index", "sort_index", NULL, t->sort_index);
	} else if (t->kind != TRACK_COUNTER) { /* counters are named by their events */
		metadata(s, t, "thread_name", "name", t->name, 0);
		metadata(s, t, "thread_sort_index", "sort_index", NULL, t->sort_index);
	}
	return s->buf.len >= FLUSH_BYTES ? flush_buffer(s, err) : 0;
}

/* One end of a flow: its start, or (ends) its end, bound to the slice it lies on. */
static void flow_event(struct json_state *s, const struct track *t, const struct event *e,
		       int ends, const char *what, uint64_t id)
{
	event_begin(s, ends ? "f" : "s", t);
	if (ends)
		strbuf_addstr(&s->buf, ",\"bp\":\"e\"");
	strbuf_addstr(&s->buf, ",\"ts\":");
	json_microseconds(&s->buf, e->start_ns);
	strbuf_addf(&s->buf, ",\"cat\":\"%s\",\"name\":\"%s\",\"id\":", what, what);
	json_int(&s->buf, (int64_t)id);
	strbuf_addch(&s->buf, '}');
}

static void flow(struct json_state *s, const struct track *t, const struct event *e)
{
	for (int i = 0; e->kind == EVENT_API_CALL && i < e->api.message_flow_count; i++)
		flow_event(s, t, e, e->api.message_end, "message", (uint64_t)e->api.message_flows[i]);
	uint64_t id = timeline_flow_id(e);
	if (!id)
		return;
	flow_event(s, t, e, timeline_is_device_work(e), "enqueue", id);
}

static int on_slice_begin(void *ctx, const struct track *t, const struct event *e,
			  struct error *err)
{
	struct json_state *s = ctx;
	struct slice_arg args[TIMELINE_MAX_ARGS];
	int count = timeline_args(e, args);
	event_begin(s, "X", t);
	strbuf_addstr(&s->buf, ",\"ts\":");
	json_microseconds(&s->buf, e->start_ns);
	strbuf_addstr(&s->buf, ",\"dur\":");
	uint64_t duration = duration_ns(e->start_ns, e->end_ns);
	json_microseconds(&s->buf, duration > INT64_MAX ? INT64_MAX : (int64_t)duration);
	strbuf_addstr(&s->buf, ",\"cat\":");
	json_string(&s->buf, timeline_category(e));
	strbuf_addstr(&s->buf, ",\"name\":");
	json_string(&s->buf, timeline_slice_name(e));
	strbuf_addstr(&s->buf, ",\"args\":{");
	for (int i = 0; i < count; i++) {
		if (i)
			strbuf_addch(&s->buf, ',');
		strbuf_addch(&s->buf, '"');
		strbuf_addstr(&s->buf, args[i].name); /* names are identifiers */
		strbuf_addstr(&s->buf, "\":");
		if (args[i].text)
			json_string(&s->buf, args[i].text);
		else
			json_int(&s->buf, args[i].value);
	}
	if (e->kind == EVENT_KERNEL && e->kernel.counter_count) {
		/* hardware counters (trace --pmc): null for a value the profiler did not give */
		strbuf_addstr(&s->buf, count ? ",\"pmc\":{" : "\"pmc\":{");
		for (size_t i = 0; i < e->kernel.counter_count; i++) {
			if (i)
				strbuf_addch(&s->buf, ',');
			json_string(&s->buf, e->kernel.counters[i].name);
			strbuf_addch(&s->buf, ':');
			json_double(&s->buf, e->kernel.counters[i].value);
		}
		strbuf_addch(&s->buf, '}');
	}
	strbuf_addch(&s->buf, '}');
	if (event_end(s, err))
		return -1;
	flow(s, t, e);
	return 0;
}

static int on_slice_end(void *ctx, const struct track *t, int64_t ts, struct error *err)
{
	return 0; /* complete events carry their duration */
}

static int on_counter(void *ctx, const struct track *t, int64_t ts, double value,
		      struct error *err)
{
	struct json_state *s = ctx;
	event_begin(s, "C", t);
	strbuf_addstr(&s->buf, ",\"ts\":");
	json_microseconds(&s->buf, ts);
	strbuf_addstr(&s->buf, ",\"name\":");
	json_string(&s->buf, t->name);
	strbuf_addstr(&s->buf, ",\"args\":{");
	json_string(&s->buf, t->unit);
	strbuf_addch(&s->buf, ':');
	if (timeline_whole(value))
		json_int(&s->buf, (int64_t)value);
	else
		json_double(&s->buf, value);
	strbuf_addch(&s->buf, '}');
	return event_end(s, err);
}

static const struct timeline_ops json_timeline = {
	.track = on_track,
	.slice_begin = on_slice_begin,
	.slice_end = on_slice_end,
	.counter = on_counter,
};

static int json_begin(void **state, const struct output_options *options,
		      struct error *err)
{
	struct json_state *s = xcalloc(1, sizeof(*s));
	strbuf_init(&s->buf);
	*state = s;
	if (output_file_open(&s->file, options->prefix, "_results.json", err))
		return -1;
	s->timeline = timeline_new(&json_timeline, s);
	/* otherData says what wrote the file */
	strbuf_addstr(&s->buf, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"format\":"
			       "\"gpuprof json\",\"format_version\":\"" TIMELINE_FORMAT_VERSION
			       "\",\"gpuprof_version\":\"" GPUPROF_VERSION "\","
			       "\"database_schema\":\"" STORE_SCHEMA_VERSION "\"},\n"
			       "\"traceEvents\":[\n");
	return 0;
}

static int json_event(void *state, const struct event *e, struct error *err)
{
	struct json_state *s = state;
	return timeline_event(s->timeline, e, err);
}

static int json_end(void *state, int failed, struct strbuf *written, struct error *err)
{
	struct json_state *s = state;
	if (!failed && s->file.out) {
		failed = timeline_finish(s->timeline, err);
		strbuf_addstr(&s->buf, "\n]}\n");
		failed = failed || flush_buffer(s, err);
	}
	long bytes = !failed && s->file.out ? ftell(s->file.out) : -1;
	if (bytes > JSON_BROWSER_LIMIT)
		progress_message("gpuprof: %s is %.1f GB: browsers (chrome://tracing, the Perfetto "
				 "UI) cannot load JSON beyond about 1.5 GB; write pftrace (-f "
				 "pftrace, several times smaller) or a window of the run (gpuprof "
				 "convert --from S --to S)\n", s->file.path, bytes / 1e9);
	int rc = output_file_close(&s->file, failed, written, err);
	timeline_free(s->timeline);
	strbuf_release(&s->buf);
	free(s);
	return rc;
}

const struct writer_ops json_writer = {
	.format = "json",
	.begin = json_begin,
	.event = json_event,
	.end = json_end,
	.timeline = 1,
};
