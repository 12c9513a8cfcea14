/* The vDSO image of this process (see vdso.h). */
#include "util/vdso.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

const void *vdso_image(size_t *size)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (!base || memcmp(base, ELFMAG, SELFMAG) || base[EI_CLASS] != ELFCLASS64)
		return NULL;
	const Elf64_Ehdr *e = (const void *)base;
	size_t end = (size_t)e->e_shoff + (size_t)e->e_shnum * e->e_shentsize;
	const Elf64_Phdr *p = (const void *)(base + e->e_phoff);
	for (int i = 0; i < e->e_phnum; i++)
		if (p[i].p_type == PT_LOAD && p[i].p_offset + p[i].p_filesz > end)
			end = (size_t)(p[i].p_offset + p[i].p_filesz);
	*size = end;
	return base;
}

int vdso_build_id(char *out, size_t size)
{
	size_t image_size;
	const unsigned char *base = vdso_image(&image_size);
	if (!base)
		return -1;
	const Elf64_Ehdr *e = (const void *)base;
	const Elf64_Phdr *p = (const void *)(base + e->e_phoff);
	for (int i = 0; i < e->e_phnum; i++) {
		if (p[i].p_type != PT_NOTE || p[i].p_offset + p[i].p_filesz > image_size)
			continue;
		const unsigned char *note = base + p[i].p_offset, *end = note + p[i].p_filesz;
		while (note + sizeof(Elf64_Nhdr) <= end) {
			const Elf64_Nhdr *n = (const void *)note;
			const unsigned char *name = note + sizeof(*n);
			const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    2 * (size_t)n->n_descsz < size) {
				for (unsigned k = 0; k < n->n_descsz; k++)
					snprintf(out + 2 * k, 3, "%02x", desc[k]);
				return 0;
			}
			note = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return -1;
}
