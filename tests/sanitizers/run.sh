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
set -eu
cd "$(dirname "$0")/../.."
GPUPROF_SANITIZER=$1
export GPUPROF_SANITIZER
signals=handle_segv=0:handle_sigbus=0:handle_abort=0
case $1 in
address)
	ASAN_OPTIONS=exitcode=86:detect_leaks=1:$signals:handle_sigfpe=0:allow_user_segv_handler=1
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
