#!/bin/sh
# Runs every test (tests/run.sh) against a sanitized build: `make check-asan` and
# `make check-tsan` call it after building everything again into $BUILD.
#   tests/sanitizers/run.sh address   AddressSanitizer with UndefinedBehaviorSanitizer
#   tests/sanitizers/run.sh thread    ThreadSanitizer
# A sanitizer's report makes the process exit 86, a status no test expects, so every
# report fails its test. `gpuprof trace` of a sanitized build preloads the sanitizer's
# runtime ahead of its recording library, so the programs it runs need not be built with
# the sanitizer. The fault tests crash programs on purpose: their signals are left to the
# program and to gpuprof. What Python leaks is not ours (leaks.supp).
# intercept_tls_get_addr=0: the sanitizer runtime of GCC 12 (to GCC 13 and LLVM 16) takes
# a dynamic TLS block that happens to start at a certain page offset for one with a glibc
# header older than 2.25, and LeakSanitizer's tracer then dies at the program's exit
# ("Tracer caught signal 11", google/sanitizers issue 1322): seen once in a PyTorch
# program's exit, no leak reported. The whole suite passes with the interceptor off.
set -eu
cd "$(dirname "$0")/../.."
GPUPROF_SANITIZER=$1
export GPUPROF_SANITIZER
signals=handle_segv=0:handle_sigbus=0:handle_abort=0
case $1 in
address)
	ASAN_OPTIONS=exitcode=86:detect_leaks=1:$signals:handle_sigfpe=0:allow_user_segv_handler=1
	ASAN_OPTIONS=$ASAN_OPTIONS:intercept_tls_get_addr=0
	UBSAN_OPTIONS=exitcode=86:halt_on_error=1:print_stacktrace=1
	LSAN_OPTIONS=suppressions=$(pwd)/tests/sanitizers/leaks.supp:print_suppressions=0
	export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
	;;
thread)
	# A child of fork() starts its own writer thread: ThreadSanitizer allows it only so.
	TSAN_OPTIONS=exitcode=86:halt_on_error=1:$signals:die_after_fork=0:second_deadlock_stack=1
	export TSAN_OPTIONS
	;;
*)
	echo "usage: tests/sanitizers/run.sh address|thread" >&2
	exit 2
	;;
esac
exec tests/run.sh
