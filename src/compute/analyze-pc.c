/* Table 21.1 of gpuprof compute analyze: PC sampling, block 21 as rocprof-compute numbers
 * it. The first workload's samples (its pc_sampling.csv, from compute profile
 * --pc-sampling, or the pc_samples view of a database given as the workload) by
 * instruction: each instruction's samples, their share, its source line and its most
 * frequent stall reason. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/pc-samples.h"
#include "compute/analyze-internal.h"
#include "store/store.h"
#include "util/strbuf.h"

/* The samples of workload w into p; *found 0 when it has none to read. */
static int read_samples(const struct workload *w, struct pc_samples *p, int *found,
			struct error *err)
{
	struct stat st;
	*found = 0;
	if (stat(w->dir, &st) == 0 && !S_ISDIR(st.st_mode)) { /* a database */
		sqlite3 *db;
		if (store_open(w->dir, &db, err))
			return -1;
		int rc = pc_samples_gather(p, db, NULL, err);
		sqlite3_close(db);
		*found = rc == 0 && p->samples > 0;
		return rc;
	}
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	strbuf_addf(&path, "%s/pc_sampling.csv", w->dir);
	FILE *in = fopen(path.buf, "r");
	int rc = 0;
	if (!in) {
		if (errno != ENOENT)
			rc = error_set(err, "cannot read '%s': %s", path.buf, strerror(errno));
	} else {
		if (strbuf_add_stream(&text, in))
			rc = error_set(err, "cannot read '%s': %s", path.buf, strerror(errno));
		fclose(in);
		if (rc == 0)
			rc = pc_samples_read_csv(p, path.buf, text.buf, text.len, err);
		*found = rc == 0;
	}
	strbuf_release(&path);
	strbuf_release(&text);
	return rc;
}

int analyze_print_pc_sampling(const struct analyze_request *r, int asked, struct error *err)
{
	struct pc_samples p;
	int found;
	if (pc_samples_init(&p, err))
		return -1;
	int rc = read_samples(&r->workloads[0], &p, &found, err);
	if (rc == 0 && found)
		rc = pc_samples_keep_kernels(&p, r->kernels, r->kernel_count, err);
	if (rc == 0 && !found && asked)
		fprintf(stderr, "gpuprof: compute analyze: %s has no PC samples (compute profile "
				"--pc-sampling collects them)\n", r->workloads[0].dir);
	if (rc == 0 && found) {
		struct strbuf title = STRBUF_INIT;
		strbuf_addf(&title, "21.1 PC sampling: %llu samples by instruction%s%s",
			    (unsigned long long)p.samples,
			    r->pc_by_offset ? ", in the order of the code" : "",
			    r->dispatch_count ? " (of every dispatch: continuous sampling does not "
						"tell the dispatches of a kernel apart)" : "");
		rc = pc_samples_instructions(&p, r->out, r->format, "21.1", title.buf,
					     (size_t)r->pc_rows, r->pc_by_offset, err);
		strbuf_release(&title);
	}
	pc_samples_release(&p);
	return rc;
}
