/* gpuprof profile: the call-stack samples of databases (gpuprof sys) as a flat profile,
 * a call tree or folded stacks, for a thread, a time window, a marker range, or the times
 * the devices were idle or busy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pc-samples.h"
#include "analysis/profile.h"
#include "commands/commands.h"
#include "store/store.h"
#include "util/error.h"
#include "util/json.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/table.h"

static const char usage[] = "gpuprof profile [options] DB...";
static const char description[] =
	"Prints the call-stack samples of gpuprof databases (gpuprof sys, --sample), all\n"
	"inputs together: a flat profile (each function's self samples, when it was running,\n"
	"and total samples, when it was on the stack, counted once per sample however deep its\n"
	"recursion, with their share of the samples kept; the most self first, --sort total\n"
	"for the other order), or the call tree (--tree), or the folded stacks that\n"
	"flamegraph.pl, inferno and speedscope read (--format folded). Frames that only pass a\n"
	"call on (the Python interpreter's, where its functions stand in their place, the C\n"
	"library's and loader's, _start) are left out of the paths unless --all-frames, and a\n"
	"Python program is shown as Python: the interpreter's own frames beneath a Python\n"
	"function (its evaluation loop, allocation, collection) are that function's time. The\n"
	"samples kept can be those of one thread, of a time window counted from each process's\n"
	"start, those taken inside a marker range of a given name on the same thread, and those\n"
	"taken while the process had no kernel or copy running on any device (--device-idle)\n"
	"or had one (--device-busy): what were the CPUs doing inside range X, or while the GPU\n"
	"sat idle? With --kernels, the launches' call stacks (gpuprof trace --launch-stacks)\n"
	"instead of samples: each kernel and copy weighted by its device time, as a child of\n"
	"the API call that launched it, so that the flat profile gives the device time under\n"
	"each function of the program, the tree the paths from main down to each kernel, and\n"
	"the folded stacks a flame graph of device time. With --gpu, the PC samples of the\n"
	"devices (gpuprof trace --pc-sampling-beta-enabled, CUDA) instead: each kernel's\n"
	"samples beside its device time, the stall reasons, and the hottest source lines and\n"
	"instructions, with why their warps stalled (folded: kernel;line;reason).";

/* ---- the call tree and the folded stacks ------------------------------------------------ */


static int by_children_total(const void *a, const void *b, void *ctx)
{
	const struct profile_tree *t = ctx;
	uint64_t x = t->nodes[*(const uint32_t *)a].total, y = t->nodes[*(const uint32_t *)b].total;
	return x != y ? (x < y ? 1 : -1) : 0;
}

/* The children of node, by total samples. */
static size_t children(const struct profile_tree *t, uint32_t node, uint32_t **out)
{
	size_t n = 0;
	for (uint32_t c = t->nodes[node].first_child; c; c = t->nodes[c].next_sibling)
		n++;
	*out = xcalloc(n ? n : 1, sizeof(**out));
	n = 0;
	for (uint32_t c = t->nodes[node].first_child; c; c = t->nodes[c].next_sibling)
		(*out)[n++] = c;
	qsort_r(*out, n, sizeof(**out), by_children_total, (void *)t);
	return n;
}

static void print_tree_text(const struct profile_tree *t, uint32_t node, int depth, double min_percent,
			    struct strbuf *line)
{
	uint32_t *kids;
	size_t n = children(t, node, &kids);
	for (size_t i = 0; i < n; i++) {
		const struct profile_node *k = &t->nodes[kids[i]];
		double percent = 100.0 * (double)k->total / (double)t->samples;
		if (percent < min_percent)
			continue;
		strbuf_reset(line);
		strbuf_addf(line, "%6.2f%% %8llu %8llu  ", percent, (unsigned long long)k->total,
			    (unsigned long long)k->self);
		for (int d = 0; d < depth; d++)
			strbuf_addstr(line, "  ");
		strbuf_addstr(line, k->function);
		puts(line->buf);
		print_tree_text(t, kids[i], depth + 1, min_percent, line);
	}
	free(kids);
}

static void print_tree_json(const struct profile_tree *t, uint32_t node, double min_percent,
			    struct strbuf *out)
{
	uint32_t *kids;
	size_t n = children(t, node, &kids);
	int first = 1;
	strbuf_addch(out, '[');
	for (size_t i = 0; i < n; i++) {
		const struct profile_node *k = &t->nodes[kids[i]];
		if (100.0 * (double)k->total / (double)t->samples < min_percent)
			continue;
		strbuf_addstr(out, first ? "{\"function\":" : ",{\"function\":");
		first = 0;
		json_string(out, k->function);
		strbuf_addstr(out, ",\"module\":");
		json_string(out, k->module);
		strbuf_addf(out, ",\"total\":%llu,\"self\":%llu,\"children\":",
			    (unsigned long long)k->total, (unsigned long long)k->self);
		print_tree_json(t, kids[i], min_percent, out);
		strbuf_addch(out, '}');
	}
	strbuf_addch(out, ']');
	free(kids);
}

static int parse_seconds(const char *text, const char *option, double *out, struct error *err)
{
	char *end;
	errno = 0;
	*out = text ? strtod(text, &end) : 0;
	if (text && (!*text || *end || errno || *out < 0))
		return error_set(err, "%s: '%s' is not a number of seconds from the process start",
				 option, text);
	return 0;
}

/* profile --gpu: the PC samples of the inputs. */
static int profile_gpu(char **inputs, int count, const char *kernel, const char *format,
		       const char *limit_text, int sample_options)
{
	if (sample_options)
		die_with(EXIT_USAGE, "profile: --gpu shows the devices' PC samples: --kernels, "
				     "--tree, --tid, --from, --to, --range and --device-idle/busy "
				     "select call-stack samples");
	char *end;
	long limit = strtol(limit_text, &end, 10);
	if (*end || !*limit_text || limit < 0)
		die_with(EXIT_USAGE, "profile: --limit: '%s' is not a number of rows", limit_text);
	struct error err;
	struct pc_samples p;
	int rc = pc_samples_init(&p, &err);
	for (int i = 0; rc == 0 && i < count; i++) {
		sqlite3 *db;
		rc = store_open(inputs[i], &db, &err) || pc_samples_gather(&p, db, kernel, &err);
		sqlite3_close(db);
	}
	free(inputs);
	if (rc)
		die("profile: %s", err.message);
	if (!p.samples) {
		fprintf(stderr, "gpuprof: profile: no PC samples%s (record them on a CUDA device "
				"with gpuprof trace --pc-sampling-beta-enabled --pc-sampling-method "
				"stochastic --pc-sampling-unit cycles --pc-sampling-interval 131072)\n",
			kernel ? " of the kernels named so" : p.taken ? " of the program's kernels" : "");
	} else if (!strcmp(format, "folded")) {
		struct strbuf folded = STRBUF_INIT;
		rc = pc_samples_folded(&p, &folded, &err);
		fputs(folded.buf, stdout);
		strbuf_release(&folded);
	} else {
		int f = table_parse_format(format);
		table_output_begin(stdout, (enum table_format)f);
		rc = pc_samples_tables(&p, stdout, f, (size_t)limit, &err);
		table_output_end(stdout, (enum table_format)f);
	}
	fflush(stdout);
	if (p.dropped)
		fprintf(stderr, "gpuprof: profile: the devices lost %llu of %llu PC samples (their "
				"buffer was full): a longer --pc-sampling-interval samples less "
				"often\n", (unsigned long long)p.dropped, (unsigned long long)p.taken);
	pc_samples_release(&p);
	if (rc)
		die("profile: %s", err.message);
	return 0;
}

int cmd_profile(int argc, char **argv)
{
	int help = -1, tree_wanted = -1, device_idle = -1, device_busy = -1, kernels = -1;
	int gpu = -1;
	const char *format = "text", *tid = NULL, *from = NULL, *to = NULL, *range = NULL;
	const char *kernel = NULL;
	const char *limit_text = "30", *min_text = "1", *sort = "self";
	int all_frames = -1, lines = -1, sites = -1;
	const char *units = "nsec";
	const struct option table[] = {
		{ OPTION_BOOL, 0, "kernels", &kernels, NULL,
		  "device time by the call paths that launched it (trace --launch-stacks): each "
		  "kernel and copy weighted by its time on the device, beneath the API call that "
		  "launched it; self and total in ns (-u for another unit)" },
		{ OPTION_BOOL, 0, "sites", &sites, NULL,
		  "with --kernels: the launch sites, as gpuprof summary's LAUNCH SITES: each "
		  "launch's innermost frame of the user's code (a Python file outside Python's "
		  "library and installed packages, or the program's executable; GPUPROF_USER_CODE "
		  "and GPUPROF_LIBRARY_CODE name other paths so), the frame it went through, the "
		  "API call, what it launched, launches and device time" },
		{ OPTION_BOOL, 0, "gpu", &gpu, NULL,
		  "the devices' PC samples (trace --pc-sampling-beta-enabled, CUDA): samples and "
		  "stall reasons by kernel, source line and instruction" },
		{ OPTION_STRING, 0, "kernel", &kernel, "TEXT",
		  "with --gpu: only the kernels whose name contains TEXT" },
		{ OPTION_BOOL, 0, "tree", &tree_wanted, NULL,
		  "the call tree (callers above their callees) instead of the flat profile" },
		{ OPTION_ENUM, 0, "format", &format, "text|csv|md|json|folded",
		  "how to print (folded: one line per stack, for flame graphs)" },
		{ OPTION_STRING, 0, "tid", &tid, "TID", "only the samples of this thread" },
		{ OPTION_STRING, 0, "from", &from, "SECONDS",
		  "only samples taken this long after their process began or later" },
		{ OPTION_STRING, 0, "to", &to, "SECONDS", "only samples taken before this" },
		{ OPTION_STRING, 0, "range", &range, "NAME",
		  "only samples taken inside a marker range of this name, on its thread: the "
		  "whole name or levels of it (a range 'a/b/c' by 'b' or 'a/b', as PyTorch "
		  "operators are named), or its module path (Net.fc1, and what its submodules "
		  "ran)" },
		{ OPTION_BOOL, 0, "device-idle", &device_idle, NULL,
		  "only samples taken while no kernel or copy of the process ran on any device" },
		{ OPTION_BOOL, 0, "device-busy", &device_busy, NULL,
		  "only samples taken while a kernel or copy of the process ran on a device" },
		{ OPTION_ENUM, 0, "sort", &sort, "self|total",
		  "the flat profile's order: the most self (where the time went, the default) or "
		  "the most total first" },
		{ OPTION_BOOL, 0, "all-frames", &all_frames, NULL,
		  "keep the frames that only pass a call on (the Python interpreter's, the C "
		  "library's and loader's, _start), left out of the paths by default, and the "
		  "interpreter's own frames beneath a Python function, whose time is the "
		  "function's by default" },
		{ OPTION_BOOL, 0, "lines", &lines, NULL,
		  "a function at each source line that ran (sampled instruction or call, "
		  "Python's current line) apart: \"work (split.c:47)\"" },
		{ OPTION_ENUM, 'u', "units", &units, "sec|msec|usec|nsec",
		  "with --kernels: the unit of the device times (default: nsec)" },
		{ OPTION_STRING, 0, "limit", &limit_text, "N",
		  "rows of the flat profile (default 30; 0: all)" },
		{ OPTION_STRING, 0, "min-percent", &min_text, "P",
		  "leave out of the tree the calls with less than P % of the samples (default 1)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	char **inputs;
	int count;
	if (command_parse_inputs("profile", usage, description, table, &help, "database", argc,
				 argv, &inputs, &count))
		return 0;
	if (gpu == 1)
		return profile_gpu(inputs, count, kernel, format, limit_text, tid || from || to ||
				   range || device_idle == 1 || device_busy == 1 || kernels == 1 ||
				   tree_wanted == 1);
	if (kernel)
		die_with(EXIT_USAGE, "profile: --kernel selects the PC samples of kernels: it "
				     "goes with --gpu");
	struct profile_filter f = PROFILE_ALL;
	f.range = range;
	if (device_idle == 1 && device_busy == 1)
		die_with(EXIT_USAGE, "profile: --device-idle and --device-busy keep no sample together");
	if (sites == 1 && (kernels != 1 || tree_wanted == 1))
		die_with(EXIT_USAGE, "profile: --sites is a table of --kernels' launches%s",
			 kernels != 1 ? ": add --kernels" : ", not a tree: leave --tree out");
	if (kernels == 1 && (device_idle == 1 || device_busy == 1))
		die_with(EXIT_USAGE, "profile: --kernels weighs launches by their device time: "
				     "--device-idle and --device-busy select samples");
	f.device = device_busy == 1 ? 1 : device_idle == 1 ? -1 : 0;
	char *end;
	double min_percent = 0, to_seconds = -1;
	long limit = strtol(limit_text, &end, 10);
	if (*end || !*limit_text || limit < 0)
		die_with(EXIT_USAGE, "profile: --limit: '%s' is not a number of rows", limit_text);
	min_percent = strtod(min_text, &end);
	if (*end || !*min_text || min_percent < 0 || min_percent > 100)
		die_with(EXIT_USAGE, "profile: --min-percent: '%s' is not a percentage", min_text);
	if (tid) {
		f.tid = strtoll(tid, &end, 10);
		if (*end || !*tid || f.tid < 0)
			die_with(EXIT_USAGE, "profile: --tid: '%s' is not a thread id", tid);
	}
	if (parse_seconds(from, "--from", &f.from, &err) ||
	    (to && parse_seconds(to, "--to", &to_seconds, &err)))
		die_with(EXIT_USAGE, "profile: %s", err.message);
	f.to = to ? to_seconds : -1;
	struct profile_tree t;
	profile_init(&t);
	t.all_frames = all_frames == 1;
	t.unit_ns = !strcmp(units, "usec") ? 1e3 : !strcmp(units, "msec") ? 1e6
		  : !strcmp(units, "sec") ? 1e9 : 1;
	if (t.unit_ns > 1 && kernels != 1)
		die_with(EXIT_USAGE, "profile: -u/--units is the unit of --kernels' device "
				     "times: samples are counted");
	t.lines = lines == 1;
	int rc = 0;
	for (int i = 0; rc == 0 && i < count; i++) {
		sqlite3 *db;
		rc = store_open(inputs[i], &db, &err) ||
		     (kernels == 1 ? profile_gather_launches(db, &f, &t, &err)
				   : profile_gather(db, &f, &t, &err));
		sqlite3_close(db);
	}
	struct profile_filter_counts found = { 0 };
	int filtered = tid || from || to || range || f.device;
	for (int i = 0; rc == 0 && !t.samples && filtered && i < count; i++) {
		sqlite3 *db;
		rc = store_open(inputs[i], &db, &err) ||
		     profile_filter_count(db, &f, kernels == 1, &found, &err);
		sqlite3_close(db);
	}
	free(inputs);
	if (rc)
		die("profile: %s", err.message);
	const char *what = kernels == 1 ? "launches with a call stack" : "call-stack samples";
	if (!t.samples && filtered && found.all) {
		/* there are some: the filter that left none out is named */
		struct strbuf why = STRBUF_INIT;
		if (range && !found.ranges_named)
			strbuf_addf(&why, "no marker range is named '%s' or has it as a level of its "
					  "name ('a/b/c': 'a/b/c', 'b', 'a/b')", range);
		else if (tid && !found.of_thread)
			strbuf_addf(&why, "thread %s has none of them", tid);
		else {
			const char *given[] = { tid ? "--tid" : NULL, from || to ? "--from/--to" : NULL,
						range ? "--range" : NULL,
						f.device > 0 ? "--device-busy" : NULL,
						f.device < 0 ? "--device-idle" : NULL };
			for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
				if (given[i])
					strbuf_addf(&why, "%s%s", why.len ? " " : "", given[i]);
			strbuf_addstr(&why, " keep none of them together");
		}
		fprintf(stderr, "gpuprof: profile: the filters leave none of the %llu %s "
				"recorded: %s\n", (unsigned long long)found.all, what, why.buf);
		strbuf_release(&why);
	} else if (!t.samples && kernels == 1) {
		fprintf(stderr, "gpuprof: profile: no launch with a call stack and device time "
				"(record them with gpuprof trace --launch-stacks --kernel-trace)\n");
	} else if (!t.samples) {
		fprintf(stderr, "gpuprof: profile: no call-stack samples (record them with gpuprof "
				"sys, or trace --sample)\n");
	} else if (!strcmp(format, "folded")) {
		struct strbuf folded = STRBUF_INIT;
		profile_folded(&t, &folded);
		fputs(folded.buf, stdout);
		strbuf_release(&folded);
	} else if (tree_wanted == 1 && strcmp(format, "text") && strcmp(format, "json")) {
		die_with(EXIT_USAGE, "profile: the tree prints as text or json, not %s", format);
	} else if (tree_wanted == 1) {
		profile_link(&t);
		if (!strcmp(format, "json")) {
			struct strbuf out = STRBUF_INIT;
			if (t.device_time)
				strbuf_addf(&out, "{\"device_ns\":%llu,\"launches\":%llu,\"tree\":",
					    (unsigned long long)t.samples,
					    (unsigned long long)t.launches);
			else
				strbuf_addf(&out, "{\"samples\":%llu,\"lost\":%llu,\"tree\":",
					    (unsigned long long)t.samples, (unsigned long long)t.lost);
			print_tree_json(&t, 0, min_percent, &out);
			strbuf_addstr(&out, "}");
			puts(out.buf);
			strbuf_release(&out);
		} else {
			struct strbuf line = STRBUF_INIT;
			profile_count_text(&t, &line);
			if (t.device_time)
				strbuf_addstr(&line, "; in ns");
			printf("%s (%s; total %%, total, self)\n",
			       t.device_time ? "LAUNCH TREE" : "CALL TREE", line.buf);
			strbuf_reset(&line);
			print_tree_text(&t, 0, 0, min_percent, &line);
			strbuf_release(&line);
		}
	} else {
		struct strbuf title = STRBUF_INIT;
		strbuf_addstr(&title, sites == 1 ? "LAUNCH SITES (" : t.device_time
			      ? "DEVICE TIME BY LAUNCHING FUNCTION (" : "FLAT PROFILE (");
		profile_count_text(&t, &title);
		if (sites == 1)
			strbuf_addf(&title, "; device time in %s)", units);
		else if (t.device_time)
			strbuf_addf(&title, "; self and total in %s)", units);
		else
			strbuf_addstr(&title, ")");
		table_output_begin(stdout, (enum table_format)table_parse_format(format));
		/* one table: plain CSV, its title on stderr rather than a '#' line */
		if (!strcmp(format, "csv"))
			fprintf(stderr, "gpuprof: profile: %s\n", title.buf);
		if (sites == 1) {
			rc = profile_launch_sites_table(&t, table_parse_format(format), "launch_sites",
							strcmp(format, "csv") ? title.buf : NULL,
							(size_t)limit, t.unit_ns > 1 ? t.unit_ns : 1,
							t.unit_ns > 1 ? 3 : 0, units, &err);
		} else {
			rc = profile_flat_table(&t, !strcmp(sort, "total") ? PROFILE_SORT_TOTAL
									    : PROFILE_SORT_SELF,
						table_parse_format(format), "profile",
						strcmp(format, "csv") ? title.buf : NULL, (size_t)limit,
						&err);
		}
		table_output_end(stdout, (enum table_format)table_parse_format(format));
		strbuf_release(&title);
	}
	if (t.lost) /* said on stderr too, for the formats without a title */
		fprintf(stderr, "gpuprof: profile: %llu call-stack samples were lost by the kernel "
				"between %.3f s and %.3f s of the time shown (its buffer was full): "
				"the profile lacks them\n", (unsigned long long)t.lost,
			t.lost_from / 1e9, t.lost_to / 1e9);
	profile_release(&t);
	if (rc)
		die("profile: %s", err.message);
	return 0;
}
