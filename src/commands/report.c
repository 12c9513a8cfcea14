/* gpuprof report: one offline HTML file of one or more databases (writer/report.h); a
 * compute workload's directory stands for its database and adds its roofline. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands/commands.h"
#include "compute/analyze.h"
#include "compute/catalog.h"
#include "compute/workload.h"
#include "util/error.h"
#include "util/html.h"
#include "util/install.h"
#include "util/options.h"
#include "writer/report.h"

static const char usage[] = "gpuprof report [options] DB|WORKLOAD... [-o FILE]";
static const char description[] =
	"Writes one self-contained HTML page of the databases, all inputs together: per\n"
	"device how busy it was along each process's run, gpuprof advise's findings with\n"
	"their evidence, the top kernels, memory copies, API calls and marker ranges, and\n"
	"where recorded the hot sampled CPU functions and the metric series. A directory of\n"
	"gpuprof compute profile (a workload) stands for the database under its trace/ and\n"
	"adds its roofline (FP32, every memory level, the top 10 kernels: as gpuprof compute\n"
	"analyze -b 4 places them). The page has no script and loads nothing from elsewhere:\n"
	"open it by double-click, mail it, attach it to a ticket. It holds aggregates, never\n"
	"rows, so a run of a million kernels gives a page of the same size. gpuprof trace\n"
	"-f html writes the same page per process (<prefix>_report.html).";

/* The database of a workload directory: trace/all_results.db (several processes, joined
 * by compute profile), else its one trace/<name>_results.db. */
static int workload_database(const char *dir, struct strbuf *db, struct error *err)
{
	struct strbuf trace = STRBUF_INIT;
	strbuf_addf(&trace, "%s/trace", dir);
	DIR *d = opendir(trace.buf);
	int processes = 0, joined = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 11 || strcmp(e->d_name + n - 11, "_results.db"))
			continue;
		int all = !strcmp(e->d_name, "all_results.db");
		processes += !all;
		if (all || (!joined && processes == 1)) {
			strbuf_reset(db);
			strbuf_addf(db, "%s/%s", trace.buf, e->d_name);
		}
		joined |= all;
	}
	if (d)
		closedir(d);
	strbuf_release(&trace);
	if (joined || processes == 1)
		return 0;
	return error_set(err, "'%s' is a directory but not a workload of gpuprof compute profile "
			 "(%s)", dir, processes ? "several databases under trace/ and no "
			 "all_results.db" : "no database under trace/");
}

/* A workload's roofline figure, under a heading naming it, added to html. */
static int add_roofline(const struct catalog *c, const char *dir, FILE *html, struct error *err)
{
	struct workload w;
	if (workload_read(dir, &w, err))
		return -1;
	struct analyze_request r = {
		.catalog = c, .workloads = &w, .count = 1, .normal = PER_KERNEL, .time_scale = 1,
		.time_unit = "ns", .max_kernels = 10, .format = TABLE_TEXT, .out = NULL,
	};
	fprintf(html, "<h3>");
	html_text(html, dir);
	fprintf(html, " (FP32)</h3>\n");
	analyze_roofline_figure(&r, html);
	workload_release(&w);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	int help = -1;
	const char *path = "report.html";
	const struct option table[] = {
		{ OPTION_STRING, 'o', "output", &path, "FILE",
		  "the page to write (default: report.html; replaced when it exists)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	char **inputs;
	int count;
	if (command_parse_inputs("report", usage, description, table, &help,
				 "database or workload", argc, argv, &inputs, &count))
		return 0;
	struct error err;
	char *roofline = NULL;
	size_t roofline_size = 0;
	FILE *html = NULL;
	struct catalog catalog;
	int have_catalog = 0;
	struct strbuf *databases = xcalloc((size_t)count, sizeof(*databases));
	for (int i = 0; i < count; i++) {
		struct stat st;
		strbuf_init(&databases[i]);
		if (stat(inputs[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
			strbuf_addstr(&databases[i], inputs[i]);
			continue;
		}
		if (workload_database(inputs[i], &databases[i], &err))
			die("report: %s", err.message);
		if (!have_catalog) {
			struct strbuf dir = STRBUF_INIT;
			if (install_path("share/gpuprof/catalog", &dir, &err) ||
			    catalog_load(dir.buf, &catalog, &err))
				die("report: %s", err.message);
			strbuf_release(&dir);
			have_catalog = 1;
			html = open_memstream(&roofline, &roofline_size);
			if (!html)
				die("report: out of memory");
		}
		if (add_roofline(&catalog, inputs[i], html, &err))
			die("report: %s", err.message);
	}
	if (html)
		fclose(html);
	char **paths = xcalloc((size_t)count, sizeof(*paths));
	for (int i = 0; i < count; i++)
		paths[i] = databases[i].buf;
	int rc = report_write(paths, count, roofline, path, &err);
	for (int i = 0; i < count; i++)
		strbuf_release(&databases[i]);
	free(databases);
	free(paths);
	free(roofline);
	if (have_catalog)
		catalog_release(&catalog);
	free(inputs);
	if (rc)
		die("report: %s", err.message);
	fprintf(stderr, "gpuprof: report: %s\n", path);
	return 0;
}
