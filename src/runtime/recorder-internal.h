/* What the files of the recorder share (recorder.c, recorder-markers.c,
 * recorder-control.c, recorder-exit.c, recorder-files.c): nothing of it is exported
 * from the library. */
#ifndef GPUPROF_RUNTIME_RECORDER_INTERNAL_H
#define GPUPROF_RUNTIME_RECORDER_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Whether marker ranges are recorded (GPUPROF_TRACE names "marker"), from start(). */
void recorder_markers_configure(int traced);

/* Reads GPUPROF_SELECTED_REGIONS, GPUPROF_CAPTURE_RANGE and GPUPROF_COLLECTION_PERIOD
 * and starts the period thread when there are periods; from start(). */
void recorder_control_start(void);

/* --nvtx-capture (GPUPROF_CAPTURE_RANGE: "NAME" in the default domain, "NAME@DOMAIN",
 * "NAME@*" in any): collection is on while a marker range of that name is open, on any
 * thread. A range that begins: 1 when it is such a range (counted open: the caller ends
 * it with recorder_capture_end()), else 0. */
int recorder_capture_begin(const char *text, uint32_t domain_id);
void recorder_capture_end(void);

/* open() of a descriptor of the recorder's own: close-on-exec, and never 0, 1 or 2 (a
 * program started with its standard streams closed must not write into the spool). */
int recorder_open_private(const char *path, int flags, mode_t mode);
/* fd itself, or moved above 2 (close-on-exec) when it is 0, 1 or 2; takes fd. */
int recorder_fd_above_stdio(int fd);

/* Creates this process's spool and writes its header: its name from GPUPROF_OUTPUT_PATH
 * and GPUPROF_OUTPUT_FILE expanded for ctx, into spool_path (size bytes), made unique
 * (<name>_<pid> when another process took it, <name>-2... for a later image after
 * exec()). Returns its descriptor, or -1 (said: collection is then disabled). */
struct path_context;
int recorder_spool_create(const struct path_context *ctx, char *spool_path, size_t size);

/* Tells `gpuprof trace` (through the manifest it created, GPUPROF_MANIFEST) where this
 * spool is: the path and a NUL, since a path may hold a newline. */
void recorder_spool_register(const char *spool_path);

/* The process's command line, its arguments joined by spaces. */
struct strbuf;
void recorder_command_line(struct strbuf *out);

/* When this process began, on the trace clock: its start time in /proc/self/stat (clock
 * ticks since boot, 10 ms steps), aged by CLOCK_BOOTTIME; now when that cannot be read. */
uint64_t recorder_process_start_ns(void);

/* Before _exit() or exec(): stops recording (a flush) in the process that owns the
 * recorder while it runs; returns 1 when it did. */
int recorder_stop_before_leaving(void);
/* After an exec() that failed: recording may start again, into a new spool. */
void recorder_resume_after_failed_exec(int stopped);

/* The period thread's tid once it runs: one of the recorder's own threads. */
extern _Atomic uint32_t recorder_period_tid;

#endif
