/* Which frames are the user's code: where a launch site is named (gpuprof summary's and
 * report's LAUNCH SITES, gpuprof profile --kernels --sites). A kernel launched through a
 * runtime, a binding or a library of the program (PyTorch, pyopencl's extension, cuBLAS,
 * a library of its own) is attributed to the innermost frame of the user's code on its
 * path: a Python file outside Python's own library and the installed packages, or the
 * program's executable. */
#ifndef GPUPROF_ANALYSIS_USER_CODE_H
#define GPUPROF_ANALYSIS_USER_CODE_H

/* Whether a frame of `module` (a file's path, as frames name it) is the user's code:
 *  - a path under a prefix of GPUPROF_USER_CODE (':'-separated) is; under one of
 *    GPUPROF_LIBRARY_CODE is not (the user's word first);
 *  - a Python file is, unless it is in Python's library (a directory lib/pythonX.Y) or
 *    an installed package (site-packages, dist-packages); Python code without a file is
 *    when it came from `python3 -c` or stdin ("<string>", "<stdin>"), not when a
 *    library made it at run time ("<pyopencl invoker for 'f'>") or froze it;
 *  - a native file is when it is an executable (no ".so" in its name), not Python's
 *    interpreter; a shared library is not (the system's, a package's, the program's own);
 *  - a pseudo-module ("[device]", "[vdso]", "[jit]", "") is not. */
int user_code(const char *module);

#endif
