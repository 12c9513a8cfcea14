/* The files mapped in the recorded process, reported to libdw for unwinding and naming
 * (see unwind-modules.h). */
#include "analysis/unwind-modules.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/sort.h"
#include "util/strbuf.h"
#include "util/vdso.h"

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Whether the ELF file at path is ET_EXEC (not relocated): its addresses are absolute. */
static int fixed_address(const char *path)
{
	unsigned char header[18];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, header, sizeof(header));
	close(fd);
	return n == (ssize_t)sizeof(header) && header[16] == 2 /* ET_EXEC */;
}

/* The recorded process's vDSO, from this process's image when their build-ids agree
 * (the same kernel): a sample in clock_gettime is unwound past it and named. */
static void report_vdso(Dwfl *dwfl, const struct recording *rec, const struct record_module *m)
{
	char own[128];
	size_t size;
	const void *image = vdso_image(&size);
	if (!m->build_id || !image || vdso_build_id(own, sizeof(own)) ||
	    strcmp(own, recording_string(rec, m->build_id)) || size > m->end - m->start)
		return;
	int fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, image, size) != (ssize_t)size ||
	    !dwfl_report_elf(dwfl, "[vdso]", "[vdso]", fd, m->start, false))
		close(fd); /* libdw keeps the descriptor of a module it took */
}

static void note_module(struct sample_stacks *s, const struct recording *rec,
		       const struct record_module *m, const char *path, Dwfl_Module *reported)
{
	struct stat st;
	int missing = stat(path, &st);
	struct strbuf text = STRBUF_INIT;
	uint64_t started = rec->process ? rec->process->realtime_ns : 0;
	if (missing)
		strbuf_addf(&text, "%s: cannot be read (%s): its frames are [unknown] and the "
				   "stacks through it stop there", path,
			    errno == ENOENT ? "removed since the run" : strerror(errno));
	else if (reported && started &&
		 (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec > started)
		strbuf_addf(&text, "%s: changed since the process started: names and stacks "
				   "through it may be wrong", path);
	else
		return; /* readable as it was (a data file libdw does not take: no code) */
	for (size_t i = 0; i < s->note_count; i++)
		if (s->notes[i].start == m->start && !strcmp(s->notes[i].text, text.buf)) {
			strbuf_release(&text); /* noted in an earlier epoch */
			return;
		}
	s->notes = xrealloc(s->notes, (s->note_count + 1) * sizeof(*s->notes));
	s->notes[s->note_count++] = (struct module_note){ m->start, m->end, strbuf_detach(&text), 0 };
}

struct timed_module {
	const struct record_module *m;
	size_t index; /* as recorded: the order of equal times */
};

static int by_time(const void *a, const void *b)
{
	const struct timed_module *x = a, *y = b;
	uint64_t s = record_module_time(x->m), t = record_module_time(y->m);
	if (s != t)
		return s < t ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* Whether two records map different things over a common address. */
static int conflict(const struct recording *rec, const struct record_module *a,
		    const struct record_module *b)
{
	if (a->start >= b->end || b->start >= a->end)
		return 0;
	return a->start != b->start || a->offset != b->offset ||
	       strcmp(recording_string(rec, a->path_id), recording_string(rec, b->path_id));
}

void module_epochs_build(struct module_epochs *e, const struct recording *rec)
{
	memset(e, 0, sizeof(*e));
	e->count = rec->modules.count;
	struct timed_module *timed = xcalloc(e->count ? e->count : 1, sizeof(*timed));
	for (size_t i = 0; i < e->count; i++)
		timed[i] = (struct timed_module){ (const void *)rec->modules.items[i], i };
	sort_array(timed, e->count, sizeof(*timed), by_time);
	e->modules = xcalloc(e->count ? e->count : 1, sizeof(*e->modules));
	for (size_t i = 0; i < e->count; i++)
		e->modules[i] = timed[i].m;
	free(timed);
	e->first = xcalloc(1, sizeof(*e->first));
	e->begins = xcalloc(1, sizeof(*e->begins));
	e->epoch_count = 1;
	/* each set in turn: one whose file lies over another file of the epoch so far
	 * begins a new epoch (a set of time 0, an older spool's, never does) */
	for (size_t at = 0; at < e->count;) {
		uint64_t time = record_module_time(e->modules[at]);
		size_t end = at;
		while (end < e->count && record_module_time(e->modules[end]) == time)
			end++;
		int clash = 0;
		for (size_t i = at; time && i < end && !clash; i++)
			for (size_t j = e->first[e->epoch_count - 1]; j < at && !clash; j++)
				clash = conflict(rec, e->modules[i], e->modules[j]);
		if (clash) {
			e->first = xrealloc(e->first, (e->epoch_count + 1) * sizeof(*e->first));
			e->begins = xrealloc(e->begins, (e->epoch_count + 1) * sizeof(*e->begins));
			e->first[e->epoch_count] = at;
			e->begins[e->epoch_count++] = time;
		}
		at = end;
	}
}

void module_epochs_release(struct module_epochs *e)
{
	free(e->modules);
	free(e->first);
	free(e->begins);
	memset(e, 0, sizeof(*e));
}

size_t module_epochs_at(const struct module_epochs *e, uint64_t time_ns)
{
	size_t epoch = 0; /* the last that began at or before the time */
	while (epoch + 1 < e->epoch_count && e->begins[epoch + 1] <= time_ns)
		epoch++;
	return epoch;
}

void unwind_note_used(struct sample_stacks *s, uint64_t pc)
{
	for (size_t i = 0; i < s->note_count; i++)
		if (pc >= s->notes[i].start && pc < s->notes[i].end)
			s->notes[i].used = 1;
}

Dwfl *unwind_report_modules(const struct recording *rec, const struct module_epochs *e,
			    size_t epoch, struct sample_stacks *s)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	/* the epoch's files, the latest first: the last set of the epoch, then earlier */
	size_t end = epoch + 1 < e->epoch_count ? e->first[epoch + 1] : e->count;
	for (size_t i = end; i-- > 0;) {
		const struct record_module *m = e->modules[i];
		const char *path = recording_string(rec, m->path_id);
		if (!*path || m->offset > m->start)
			continue;
		/* a file recorded in several sets, or one whose addresses a later file took:
		 * reported once, the latest (libdw refuses overlapping modules) */
		if (dwfl_addrmodule(dwfl, m->start) || dwfl_addrmodule(dwfl, m->end - 1))
			continue;
		if (!strcmp(path, "[vdso]")) {
			report_vdso(dwfl, rec, m);
			continue;
		}
		GElf_Addr base = fixed_address(path) ? 0 : m->start - m->offset;
		note_module(s, rec, m, path, dwfl_report_elf(dwfl, path, path, -1, base, false));
	}
	dwfl_report_end(dwfl, NULL, NULL);
	return dwfl;
}

