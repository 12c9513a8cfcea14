/* A library already loaded in the process, found by its file name whether it was loaded
 * into the global scope (the program's dependencies) or privately (RTLD_LOCAL: a Python
 * extension's, mpi4py's MPI, PyTorch's NCCL), where dlsym(RTLD_NEXT) does not look. The
 * interposers call the functions they wrap there. */
#ifndef GPUPROF_INJECT_LOADED_H
#define GPUPROF_INJECT_LOADED_H

/* Whether a library's base name ("libnccl.so.2") is one wanted. */
typedef int (*loaded_wanted)(const char *base);

/* The first loaded library wanted that defines `symbol` (any wanted one when symbol is
 * NULL): its handle (a reference the caller keeps) and the symbol's address in
 * *address; NULL when none. */
void *loaded_find(loaded_wanted wanted, const char *symbol, void **address);

/* `name` as the next object after the caller's in the global scope defines it, else as
 * a loaded library wanted defines it; NULL when none does. */
void *loaded_next(loaded_wanted wanted, const char *name);

#endif
