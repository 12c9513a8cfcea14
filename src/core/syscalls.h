/* The names of the system calls a thread is commonly found waiting in (x86-64 numbers,
 * as /proc/PID/task/TID/syscall gives them): for the frame a sample off the CPU ends
 * with, and for gpuprof dump. One list for both. */
#ifndef GPUPROF_CORE_SYSCALLS_H
#define GPUPROF_CORE_SYSCALLS_H

#include <stddef.h>

/* The name of system call `number`, or NULL for one not in the list (or on another
 * architecture than x86-64). restart_syscall is where a thread stands whose wait (a
 * nanosleep, a poll) a signal interrupted and the kernel resumes. */
static inline const char *syscall_wait_name(int number)
{
#ifdef __x86_64__
	static const struct {
		int number;
		const char *name;
	} waits[] = {
		{ 0, "read" }, { 1, "write" }, { 7, "poll" }, { 16, "ioctl" }, { 17, "pread64" },
		{ 18, "pwrite64" }, { 23, "select" }, { 34, "pause" }, { 35, "nanosleep" },
		{ 42, "connect" }, { 43, "accept" }, { 44, "sendto" }, { 45, "recvfrom" },
		{ 46, "sendmsg" }, { 47, "recvmsg" }, { 61, "wait4" }, { 70, "msgrcv" },
		{ 74, "fsync" }, { 75, "fdatasync" }, { 128, "rt_sigtimedwait" },
		{ 130, "rt_sigsuspend" }, { 202, "futex" }, { 208, "io_getevents" },
		{ 219, "restart_syscall" }, { 220, "semtimedop" }, { 230, "clock_nanosleep" },
		{ 232, "epoll_wait" }, { 247, "waitid" }, { 270, "pselect6" }, { 271, "ppoll" },
		{ 281, "epoll_pwait" }, { 288, "accept4" }, { 426, "io_uring_enter" },
		{ 441, "epoll_pwait2" }, { 449, "futex_waitv" },
	};
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (waits[i].number == number)
			return waits[i].name;
#endif
	(void)number;
	return NULL;
}

#endif
