/* gpuprof dump: the Python functions of a process that runs CPython (see dump.h). The
 * interpreter's _PyRuntime, PyCode_Type, PyUnicode_Type, PyType_Type and Py_Version are
 * found in the symbol tables of the ELF file that holds them (the python3.x executable,
 * or a libpython3.x.so), placed where the process maps that file; then
 * core/python-read.c reads each thread's frames from the process's memory, as the
 * sampler reads its own. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/dump.h"
#include "core/python-read.h"
#include "core/record.h"

enum { SYM_RUNTIME, SYM_CODE, SYM_UNICODE, SYM_VERSION, SYM_TYPE, SYMS };
static const char *const symbols[SYMS] = { "_PyRuntime", "PyCode_Type", "PyUnicode_Type",
					   "Py_Version", "PyType_Type" };

/* The symbols' addresses in the file (ELF virtual addresses) and the vaddr of its first
 * loaded segment: 0 when all were found. */
static int file_symbols(const char *path, uint64_t found[SYMS], uint64_t *first_vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	int missing = SYMS;
	memset(found, 0, SYMS * sizeof(*found));
	*first_vaddr = UINT64_MAX;
	size_t phnum = 0;
	if (elf && elf_getphdrnum(elf, &phnum) == 0)
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_vaddr < *first_vaddr)
				*first_vaddr = ph.p_vaddr;
		}
	Elf_Scn *scn = NULL;
	while (elf && missing && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		if (!gelf_getshdr(scn, &shdr) || (shdr.sh_type != SHT_DYNSYM && shdr.sh_type != SHT_SYMTAB))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t n = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
		for (size_t i = 0; data && missing && i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym) || !sym.st_value)
				continue;
			const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			for (int k = 0; name && k < SYMS; k++)
				if (!found[k] && !strcmp(name, symbols[k])) {
					found[k] = sym.st_value;
					missing--;
				}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return missing || *first_vaddr == UINT64_MAX ? -1 : 0;
}

int dump_find_interpreter(int pid, struct python_reader *r)
{
	char maps[64], line[4352], file[4096];
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	FILE *f = fopen(maps, "re");
	if (!f)
		return -1;
	int rc = -1;
	while (rc && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, offset;
		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095[^\n]", &start, &end, &offset,
			   file) < 4 || offset != 0 || file[0] != '/')
			continue;
		const char *base = strrchr(file, '/') + 1;
		if (strncmp(base, "python3", 7) && strncmp(base, "libpython3", 10))
			continue;
		uint64_t at[SYMS], first_vaddr;
		if (file_symbols(file, at, &first_vaddr))
			continue;
		/* the file's first segment is mapped at start: its addresses move with it */
		uint64_t bias = start - (first_vaddr & ~(uint64_t)0xfff);
		r->pid = pid;
		r->runtime = at[SYM_RUNTIME] + bias;
		r->code_type = at[SYM_CODE] + bias;
		r->unicode_type = at[SYM_UNICODE] + bias;
		uint32_t version = 0; /* PY_VERSION_HEX: 0xMMmmPPLS */
		if (python_peek(r, at[SYM_VERSION] + bias, &version, sizeof(version)))
			continue;
		r->layout = python_layout_of(version >> 16);
		if (r->layout && (!python_objects_readable(r, at[SYM_TYPE] + bias) ||
				  !python_layout_confirmed(r)))
			r->layout = NULL; /* a free-threaded build, or a layout that moved: its
					   * frames are not read */
		rc = r->layout ? 0 : -1;
	}
	fclose(f);
	return rc;
}

struct names {
	struct spool_out *s;
};

static uint32_t intern(void *arg, const char *text)
{
	return dump_put_string(((struct names *)arg)->s, text);
}

int dump_python_thread(struct spool_out *s, struct python_reader *r, uint64_t thread,
		       uint64_t time, uint64_t period)
{
	static union {
		struct record_python_stack stack;
		unsigned char bytes[sizeof(struct record_python_stack) +
				    PYTHON_STACK_MAX * sizeof(struct python_frame)];
	} record;
	struct record_python_stack *st = &record.stack;
	uint32_t tid = python_thread_id(r, thread);
	int count = tid ? python_thread_frames(r, thread, (void *)(record.bytes + sizeof(*st))) : -1;
	if (count <= 0)
		return 0;
	st->header = (struct record_header){
		(uint32_t)RECORD_PADDED(sizeof(*st) + (size_t)count * sizeof(struct python_frame)),
		RECORD_PYTHON_STACK, 0 };
	st->tid = tid;
	st->count = (uint32_t)count;
	st->time_ns = time;
	st->period_ns = period;
	dump_put(s, &record);
	return 1;
}

struct each {
	struct spool_out *s;
	uint64_t now;
	int threads;
};

static void thread_frames(struct python_reader *r, uint64_t thread, void *arg)
{
	struct each *e = arg;
	/* the native copies were taken this close */
	e->threads += dump_python_thread(e->s, r, thread, e->now, 1000000);
}

int dump_python(struct spool_out *s, int pid, uint64_t now, int *gil)
{
	*gil = 0;
	static struct python_reader reader; /* large: its cache of code objects */
	struct names names = { s };
	memset(&reader, 0, sizeof(reader));
	reader.intern = intern;
	reader.arg = &names;
	if (dump_find_interpreter(pid, &reader))
		return 0;
	uint64_t holder = python_gil_holder(&reader);
	*gil = holder ? (int)python_thread_id(&reader, holder) : 0;
	struct each e = { s, now, 0 };
	python_each_thread(&reader, thread_frames, &e);
	return e.threads;
}
