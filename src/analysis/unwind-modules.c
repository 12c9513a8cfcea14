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
	s->notes = xrealloc(s->notes, (s->note_count + 1) * sizeof(*s->notes));
	s->notes[s->note_count++] = (struct module_note){ m->start, m->end, strbuf_detach(&text), 0 };
}

void unwind_note_used(struct sample_stacks *s, uint64_t pc)
{
	for (size_t i = 0; i < s->note_count; i++)
		if (pc >= s->notes[i].start && pc < s->notes[i].end)
			s->notes[i].used = 1;
}

Dwfl *unwind_report_modules(const struct recording *rec, struct sample_stacks *s)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < rec->modules.count; i++) {
		const struct record_module *m = (const void *)rec->modules.items[i];
		const char *path = recording_string(rec, m->path_id);
		if (!*path || m->offset > m->start)
			continue;
		/* the same file mapped again later (a module recorded at each change) is
		 * reported once: libdw refuses overlapping modules */
		if (dwfl_addrmodule(dwfl, m->start))
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

