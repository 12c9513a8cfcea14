/* Naming the frames of the samples' stacks (see unwind-names.h). */
#include "analysis/unwind-names.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/syscalls.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/strbuf.h"

/* __cxa_demangle of the C++ runtime: the one demangler on every system with a C++
 * compiler's runtime; declared here to keep this file C. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *length, int *status);

int unwind_gpuprof_module(const char *module)
{
	const char *base = strrchr(module, '/');
	return !strncmp(base ? base + 1 : module, "libgpuprof-", 11);
}

const char *unwind_python_file(const char *path)
{
	/* a package's file from its package down: pyopencl/__init__.py, numpy/core/... */
	const char *found = NULL;
	for (const char *at = path; (at = strstr(at, "-packages/")); at++)
		if (at - path >= 5 && (!strncmp(at - 5, "/site", 5) || !strncmp(at - 5, "/dist", 5)))
			found = at + 10;
	if (found && *found)
		return found;
	/* the standard library's from its root: json/decoder.py, threading.py */
	for (const char *at = path; (at = strstr(at, "/lib/python3")); at++) {
		const char *slash = strchr(at + 12, '/');
		if (slash && strspn(at + 12, "0123456789.") == (size_t)(slash - at - 12))
			found = slash + 1;
	}
	if (found && *found)
		return found;
	const char *base = strrchr(path, '/');
	return base ? base + 1 : path;
}

/* ---- interning ----------------------------------------------------------------------- */

static uint64_t frame_hash(const char *function, const char *module, int line)
{
	return hash_string(function) ^ (hash_string(module) * 31) ^ hash_int((uint64_t)line);
}

uint32_t unwind_intern_frame(struct sample_stacks *s, const char *function, const char *module,
			     uint64_t offset, const char *source, int line, int inlined)
{
	if (2 * (s->frame_count + 1) > s->frame_slot_count) {
		free(s->frame_slots);
		s->frame_slot_count = s->frame_slot_count ? 2 * s->frame_slot_count : 256;
		s->frame_slots = xcalloc(s->frame_slot_count, sizeof(*s->frame_slots));
		for (size_t i = 0; i < s->frame_count; i++) {
			size_t j = frame_hash(s->frames[i].function, s->frames[i].module,
					      s->frames[i].line) & (s->frame_slot_count - 1);
			while (s->frame_slots[j])
				j = (j + 1) & (s->frame_slot_count - 1);
			s->frame_slots[j] = (uint32_t)i + 1;
		}
	}
	size_t j = frame_hash(function, module, line) & (s->frame_slot_count - 1);
	for (; s->frame_slots[j]; j = (j + 1) & (s->frame_slot_count - 1)) {
		const struct stack_frame *f = &s->frames[s->frame_slots[j] - 1];
		if (!strcmp(f->function, function) && !strcmp(f->module, module) &&
		    f->inlined == inlined && f->line == line && !strcmp(f->source, source))
			return s->frame_slots[j] - 1;
	}
	s->frames = xrealloc(s->frames, (s->frame_count + 1) * sizeof(*s->frames));
	s->frames[s->frame_count] = (struct stack_frame){ xstrdup(function), xstrdup(module), offset,
							  xstrdup(source), line, inlined };
	s->frame_slots[j] = (uint32_t)++s->frame_count;
	return (uint32_t)s->frame_count - 1;
}

uint32_t unwind_intern_node(struct sample_stacks *s, uint32_t parent, uint32_t frame)
{
	if (2 * (s->node_count + 1) > s->node_slot_count) {
		free(s->node_slots);
		s->node_slot_count = s->node_slot_count ? 2 * s->node_slot_count : 1024;
		s->node_slots = xcalloc(s->node_slot_count, sizeof(*s->node_slots));
		for (size_t i = 1; i < s->node_count; i++) {
			size_t j = hash_int((uint64_t)s->nodes[i].parent << 32 | s->nodes[i].frame) &
				   (s->node_slot_count - 1);
			while (s->node_slots[j])
				j = (j + 1) & (s->node_slot_count - 1);
			s->node_slots[j] = (uint32_t)i;
		}
	}
	size_t j = hash_int((uint64_t)parent << 32 | frame) & (s->node_slot_count - 1);
	for (; s->node_slots[j]; j = (j + 1) & (s->node_slot_count - 1)) {
		const struct stack_node *n = &s->nodes[s->node_slots[j]];
		if (n->parent == parent && n->frame == frame)
			return s->node_slots[j];
	}
	s->nodes = xrealloc(s->nodes, (s->node_count + 1) * sizeof(*s->nodes));
	s->nodes[s->node_count] = (struct stack_node){ parent, frame };
	s->node_slots[j] = (uint32_t)s->node_count;
	return (uint32_t)s->node_count++;
}

/* ---- code made at run time ------------------------------------------------------------- */


static int by_symbol_start(const void *a, const void *b)
{
	const struct record_symbol *x = *(const void *const *)a, *y = *(const void *const *)b;
	return (x->start > y->start) - (x->start < y->start);
}

void unwind_jit_build(struct jit_symbols *j, const struct recording *rec)
{
	j->rec = rec;
	j->count = rec->symbols.count;
	j->by_start = xcalloc(j->count ? j->count : 1, sizeof(*j->by_start));
	for (size_t i = 0; i < j->count; i++)
		j->by_start[i] = (const void *)rec->symbols.items[i];
	sort_array(j->by_start, j->count, sizeof(*j->by_start), by_symbol_start);
}

/* The piece of run-time code holding pc; of pieces named at one address, the last. */
const struct record_symbol *unwind_jit_symbol(const struct jit_symbols *j, uint64_t pc)
{
	size_t lo = 0, hi = j->count; /* the first that starts after pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (j->by_start[mid]->start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0 && i + 16 > lo; i--) { /* overlapping pieces: a few back */
		const struct record_symbol *s = j->by_start[i - 1];
		if (pc - s->start < s->size)
			return s;
	}
	return NULL;
}

/* A frame of run-time code: CPython's "py::QUALNAME:FILE" as "file.py:QUALNAME" (the
 * name the frame reader gives), any other name as it is. */
static uint32_t jit_frame(struct sample_stacks *s, const struct recording *rec,
			  const struct record_symbol *symbol)
{
	const char *name = recording_string(rec, symbol->name_id);
	const char *colon = strncmp(name, "py::", 4) ? NULL : strrchr(name + 4, ':');
	if (!colon)
		return unwind_intern_frame(s, name, "[jit]", 0, "", 0, 0);
	const char *file = colon + 1;
	struct strbuf text = STRBUF_INIT;
	strbuf_addf(&text, "%s:%.*s", unwind_python_file(file), (int)(colon - name - 4), name + 4);
	uint32_t id = unwind_intern_frame(s, text.buf, file, 0, file, 0, 0);
	strbuf_release(&text);
	return id;
}

/* The source line of an address of a compilation unit (from its line table); leaves
 * source and line as they are when it has none. */
static void running_line(Dwarf_Die *cu, Dwarf_Addr address, const char **source, int *line)
{
	Dwarf_Line *l = cu ? dwarf_getsrc_die(cu, address) : NULL;
	int number = 0;
	const char *file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	if (file && dwarf_lineno(l, &number) == 0 && number > 0) {
		*source = file;
		*line = number;
	}
}

/* Where an inlined function was called from: its caller's line running. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *inlined, const char **source, int *line)
{
	Dwarf_Attribute attribute;
	Dwarf_Word file = 0, number = 0;
	Dwarf_Files *files;
	size_t count;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attribute), &file) ||
	    dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attribute), &number) ||
	    !number || dwarf_getsrcfiles(cu, &files, &count) || file >= count)
		return;
	const char *name = dwarf_filesrc(files, file, NULL, NULL);
	if (name) {
		*source = name;
		*line = (int)number;
	}
}

/* ---- stubs of the procedure linkage table -------------------------------------------- */

/* In one table of relocations, the function bound by the one that fills the GOT slot at
 * slot (slot 0: the index-th): its symbol's, or, for an IRELATIVE one (an ifunc, no
 * symbol), the function at its addend; NULL when none does. */
static const char *table_function(Dwfl_Module *module, Elf *elf, GElf_Addr bias, Elf_Scn *scn,
				  const GElf_Shdr *sh, GElf_Addr slot, uint64_t index)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count = data ? data->d_size / sh->sh_entsize : 0;
	size_t first = slot ? 0 : index, end = slot ? count : index + 1;
	for (size_t i = first; i < end && i < count; i++) {
		GElf_Rela r;
		if (!gelf_getrela(data, (int)i, &r) || (slot && r.r_offset != slot))
			continue;
		size_t symbol = GELF_R_SYM(r.r_info);
		if (!symbol)
			return dwfl_module_addrname(module, (GElf_Addr)r.r_addend + bias);
		Elf_Scn *table = elf_getscn(elf, sh->sh_link);
		GElf_Shdr table_sh;
		GElf_Sym sym;
		if (!table || !gelf_getshdr(table, &table_sh) ||
		    !gelf_getsym(elf_getdata(table, NULL), (int)symbol, &sym))
			return NULL;
		return elf_strptr(elf, table_sh.sh_link, sym.st_name);
	}
	return NULL;
}

/* The function a dynamic relocation binds to the GOT slot at slot (slot 0: the index-th
 * of .rela.plt). .rela.plt first, where most stubs' slots are; the other tables only
 * then (.rela.dyn: a .plt.got stub's, and a large library's many relocations). */
static const char *relocated_function(Dwfl_Module *module, Elf *elf, GElf_Addr bias,
				      GElf_Addr slot, uint64_t index)
{
	size_t names;
	if (elf_getshdrstrndx(elf, &names))
		return NULL;
	for (int pass = 0; pass < (slot ? 2 : 1); pass++) {
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
				continue;
			const char *section = elf_strptr(elf, names, sh.sh_name);
			if ((section && !strcmp(section, ".rela.plt")) != (pass == 0))
				continue;
			const char *name = table_function(module, elf, bias, scn, &sh, slot, index);
			if (name || !slot)
				return name;
		}
	}
	return NULL;
}

/* The function the stub of a procedure linkage table at address (an ELF address) leads
 * to, by the GOT slot its jump reads (a jmp *disp(%rip), after an endbr64 and a bnd
 * prefix where there are: .plt, .plt.got, .plt.sec), or by the relocation index a lazy
 * entry of an IBT table pushes; NULL when address is in no stub. x86-64 only: elsewhere
 * a stub stays module+offset. */
static const char *plt_function(Dwfl_Module *module, Elf *elf, GElf_Addr bias,
				GElf_Addr address)
{
	GElf_Ehdr header;
	size_t names;
	if (!elf || !gelf_getehdr(elf, &header) || header.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &names))
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    address < sh.sh_addr || address - sh.sh_addr >= sh.sh_size)
			continue;
		const char *section = elf_strptr(elf, names, sh.sh_name);
		if (!section || strncmp(section, ".plt", 4) || (section[4] && section[4] != '.'))
			return NULL;
		uint64_t size = sh.sh_entsize >= 8 ? sh.sh_entsize : 16;
		uint64_t at = (address - sh.sh_addr) / size * size;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || at + size > data->d_size)
			return NULL;
		const unsigned char *code = (const unsigned char *)data->d_buf + at;
		size_t i = memcmp(code, "\xf3\x0f\x1e\xfa", 4) ? 0 : 4; /* endbr64 */
		i += code[i] == 0xf2;                                     /* bnd */
		int32_t word;
		if (i + 6 <= size && code[i] == 0xff && code[i + 1] == 0x25) { /* jmp *disp(%rip) */
			memcpy(&word, code + i + 2, 4);
			return relocated_function(module, elf, bias,
						  sh.sh_addr + at + i + 6 + (int64_t)word, 0);
		}
		if (i + 5 <= size && code[i] == 0x68) { /* push $index */
			memcpy(&word, code + i + 1, 4);
			return word >= 0 ? relocated_function(module, elf, bias, 0, (uint64_t)word)
					 : NULL;
		}
		return NULL;
	}
	return NULL;
}

/* A symbol's name as a frame's: without its version ("memcpy@@GLIBC_2.14"), demangled,
 * and suffix added. */
static char *function_text(const char *name, const char *suffix)
{
	struct strbuf plain = STRBUF_INIT, text = STRBUF_INIT;
	strbuf_add(&plain, name, strcspn(name, "@"));
	char *demangled = NULL;
	int status = -1;
	if (plain.buf[0] == '_' && plain.buf[1] == 'Z')
		demangled = __cxa_demangle(plain.buf, NULL, NULL, &status);
	strbuf_addf(&text, "%s%s", demangled && !status ? demangled : plain.buf, suffix);
	free(demangled);
	strbuf_release(&plain);
	return strbuf_detach(&text);
}

/* Names pc (an address inside the call or instruction): the symbol containing it,
 * demangled, a stub of the procedure linkage table as "function@plt", or module+offset. */
uint32_t unwind_name_frame(struct sample_stacks *s, Dwfl *dwfl, uint64_t pc,
			   const struct jit_symbols *jit)
{
	Dwfl_Module *module = dwfl_addrmodule(dwfl, pc);
	const struct record_symbol *made = module ? NULL : unwind_jit_symbol(jit, pc);
	if (made)
		return jit_frame(s, jit->rec, made);
	if (!module) {
		char text[32];
		snprintf(text, sizeof(text), "[unknown]+0x%llx", (unsigned long long)pc);
		return unwind_intern_frame(s, text, "", pc, "", 0, 0);
	}
	Dwarf_Addr low = 0, bias = 0;
	const char *path = NULL;
	dwfl_module_info(module, NULL, &low, NULL, NULL, NULL, &path, NULL);
	const char *file = path ? path : dwfl_module_info(module, NULL, NULL, NULL, NULL, NULL,
							 NULL, NULL);
	if (!file)
		file = "";
	Elf *elf = dwfl_module_getelf(module, &bias);
	const char *stub = plt_function(module, elf, bias, pc - bias);
	if (stub && *stub) {
		char *text = function_text(stub, "@plt");
		uint32_t id = unwind_intern_frame(s, text, file, pc - bias, "", 0, 0);
		free(text);
		return id;
	}
	GElf_Off offset;
	GElf_Sym symbol;
	const char *name = dwfl_module_addrinfo(module, pc, &offset, &symbol, NULL, NULL, NULL);
	if (!name || !*name) {
		const char *base = strrchr(file, '/');
		char text[4200];
		snprintf(text, sizeof(text), "%s+0x%llx", base ? base + 1 : file,
			 (unsigned long long)(pc - bias));
		return unwind_intern_frame(s, text, file, pc - bias, "", 0, 0);
	}
	char *function = function_text(name, "");
	const char *source = "";
	int line = 0;
	Dwarf_Addr die_bias;
	Dwarf_Die *cu = dwfl_module_addrdie(module, pc, &die_bias), *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, pc - die_bias, &scopes) : 0;
	/* the line running: pc's own, or where the outermost function inlined at pc was
	 * called from */
	running_line(cu, pc - die_bias, &source, &line);
	for (int i = n; i-- > 0;)
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
			call_site(cu, &scopes[i], &source, &line);
			break;
		}
	uint32_t id = unwind_intern_frame(s, function, file, pc - bias, source, line, 0);
	free(function);
	free(scopes);
	return id;
}

/* The name of a function's debug information entry: its linkage name demangled (the
 * whole C++ name), else its name; NULL when it has neither. */
static char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attribute;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name,
								    &attribute));
	if (linkage && linkage[0] == '_' && linkage[1] == 'Z') {
		int status = -1;
		char *demangled = __cxa_demangle(linkage, NULL, NULL, &status);
		if (!status && demangled)
			return demangled;
		free(demangled);
	}
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attribute));
	return name ? xstrdup(name) : NULL;
}

/* The functions inlined at pc, innermost first, as frames; returns how many (at most
 * max). */
size_t unwind_inlined_frames(struct sample_stacks *s, Dwfl *dwfl, uint64_t pc, uint32_t *frames,
			     size_t max)
{
	Dwfl_Module *module = dwfl_addrmodule(dwfl, pc);
	Dwarf_Addr bias;
	Dwarf_Die *cu = module ? dwfl_module_addrdie(module, pc, &bias) : NULL, *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
	size_t count = 0;
	const char *path = NULL;
	if (module)
		dwfl_module_info(module, NULL, NULL, NULL, NULL, NULL, &path, NULL);
	/* the innermost runs pc's line; each outer one the line that called the one it
	 * holds */
	const char *source = "";
	int line = 0;
	running_line(cu, pc - bias, &source, &line);
	for (int i = 0; i < n && count < max; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			break;
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		char *name = die_name(&scopes[i]);
		frames[count++] = unwind_intern_frame(s, name ? name : "[inlined]", path ? path : "",
					       pc - bias, source, line, 1);
		free(name);
		call_site(cu, &scopes[i], &source, &line);
	}
	free(scopes);
	return count;
}

/* The frame a sample off the CPU ends with: what the thread waited in. */
uint32_t unwind_wait_frame(struct sample_stacks *s, int call)
{
	char text[64];
	if (call < 0) {
		snprintf(text, sizeof(text), "[off-CPU]");
	} else {
		const char *name = syscall_wait_name(call);
		if (name)
			snprintf(text, sizeof(text), "[off-CPU: %s]", name);
		else
			snprintf(text, sizeof(text), "[off-CPU: system call %d]", call);
	}
	return unwind_intern_frame(s, text, "", 0, "", 0, 0);
}

/* A Python frame: "file.py:function", the file as its module and source. */
uint32_t unwind_python_frame(struct sample_stacks *s, const struct recording *rec,
			     const struct python_frame *f)
{
	const char *file = recording_string(rec, f->file_id);
	struct strbuf name = STRBUF_INIT;
	strbuf_addf(&name, "%s:%s", unwind_python_file(file), recording_string(rec, f->function_id));
	uint32_t id = unwind_intern_frame(s, name.buf, file, 0, file, (int)f->line, 0);
	strbuf_release(&name);
	return id;
}
