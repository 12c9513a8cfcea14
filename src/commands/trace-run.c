/* gpuprof trace's runs (see trace.h): the recording libraries placed where the
 * program finds them, the program run under them with its signals forwarded, and its
 * spools post-processed into the outputs asked for. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands/commands.h"
#include "commands/trace.h"
#include "core/paths.h"
#include "runtime/recorder.h"
#include "util/install.h"
#include "util/unfinished.h"

int trace_find_library(const char *name, struct strbuf *out, struct error *err)
{
	struct strbuf relative = STRBUF_INIT;
	strbuf_addf(&relative, "lib/gpuprof/%s", name);
	int rc = install_path(relative.buf, out, err);
	strbuf_release(&relative);
	if (rc)
		return rc;
	char resolved[PATH_MAX];
	if (!realpath(out->buf, resolved))
		return -1;
	strbuf_reset(out);
	strbuf_addstr(out, resolved);
	return 0;
}

/* Refuses, before the program starts, recording memory that cannot work: a thread's
 * buffer beyond the cap of all buffers, or a cap beyond the machine's memory. */
static void check_buffer_sizes(const struct trace_options *o)
{
	int limit_set = o->buffer_limit != TRACE_BUFFER_UNSET;
	unsigned long long limit = limit_set ? o->buffer_limit : RECORDER_DEFAULT_BUFFER_LIMIT;
	unsigned long long size = o->buffer_size != TRACE_BUFFER_UNSET
					  ? o->buffer_size : RECORDER_DEFAULT_THREAD_BUFFER;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	unsigned long long memory = pages > 0 && page > 0 ? (unsigned long long)pages * page : 0;
	if (size < TRACE_BUFFER_MIN)
		die_with(EXIT_USAGE, "%s: --buffer-size %llu bytes is less than %llu, the least a "
			 "recording thread's buffer can be", trace_command_name, size,
			 TRACE_BUFFER_MIN);
	if (limit_set && limit < size)
		die_with(EXIT_USAGE, "%s: --buffer-limit %llu bytes is less than one thread's buffer "
			 "(--buffer-size, %llu KiB): every thread past the first would drop its "
			 "records", trace_command_name, limit, size >> 10);
	if (size > limit)
		die_with(EXIT_USAGE, "%s: --buffer-size %llu MiB is more than --buffer-limit %llu "
			 "MiB, the cap of every thread's buffers together: raise --buffer-limit "
			 "too", trace_command_name, size >> 20, limit >> 20);
	if (memory && limit > memory)
		die_with(EXIT_USAGE, "%s: --buffer-limit %llu MiB is more than this machine's "
			 "memory (%llu MiB)", trace_command_name, limit >> 20, memory >> 20);
}

/* Fails before the target starts when the outputs could not be written; *bad_name says
 * the output name itself is wrong (a bad placeholder). */
static int check_output_directory(const char *directory, const char *file, int *bad_name,
				  struct error *err)
{
	struct path_context ctx;
	path_context_current(&ctx);
	struct strbuf template = STRBUF_INIT, path = STRBUF_INIT;
	path_output_template(&template, directory, file);
	int rc = path_expand(template.buf, &ctx, &path, err);
	*bad_name = rc != 0;
	if (rc == 0) {
		char *slash = strrchr(path.buf, '/');
		if (slash)
			*slash = '\0';
		rc = path_check_writable(path.buf, err);
	}
	/* The output directory is made now, so that one that cannot be made (access() may
	 * say yes where mkdir() fails) stops gpuprof before the program runs unprofiled. A
	 * directory named after the process is left to each process. */
	if (rc == 0 && file[0] != '/' && !strstr(directory, "%p") && !strstr(directory, "%q{") &&
	    !strstr(directory, "%env{")) {
		strbuf_reset(&path);
		rc = path_expand(directory, &ctx, &path, err);
		if (rc == 0)
			rc = path_make_parents(path.buf, 0, err);
	}
	strbuf_release(&template);
	strbuf_release(&path);
	return rc;
}

/* Puts `dir` first on LD_LIBRARY_PATH. */
static void library_path_prepend(const char *dir)
{
	struct strbuf path = STRBUF_INIT;
	const char *old = getenv("LD_LIBRARY_PATH");
	strbuf_addstr(&path, dir);
	if (old && *old)
		strbuf_addf(&path, ":%s", old);
	setenv("LD_LIBRARY_PATH", path.buf, 1);
	strbuf_release(&path);
}

/* The marker libraries find the recorder through GPUPROF_RECORDER; programs that load
 * libroctx64 by name find ours first on LD_LIBRARY_PATH. */
static void make_markers_findable(void)
{
	struct strbuf path = STRBUF_INIT;
	struct error err;
	if (trace_find_library("libgpuprof-recorder.so", &path, &err) == 0)
		setenv("GPUPROF_RECORDER", path.buf, 1);
	if (trace_find_library("markers", &path, &err) == 0)
		library_path_prepend(path.buf);
	strbuf_release(&path);
}

/* --torch-trace: gpuprof's sitecustomize first on the Python path, which installs the
 * operator hooks (share/gpuprof/python/gpuprof_torch.py) once torch is imported. */
static void torch_trace_setup(void)
{
	struct strbuf dir = STRBUF_INIT;
	struct error err;
	if (install_path("share/gpuprof/python", &dir, &err) == 0) {
		const char *old = getenv("PYTHONPATH");
		if (old && *old)
			strbuf_addf(&dir, ":%s", old);
		setenv("PYTHONPATH", dir.buf, 1);
		setenv("GPUPROF_TORCH_TRACE", "1", 1);
	} else {
		warn("--torch-trace: %s: no operator ranges", err.message);
	}
	strbuf_release(&dir);
}

static void set_env_number(const char *name, unsigned long long value)
{
	char text[32];
	snprintf(text, sizeof(text), "%llu", value);
	setenv(name, text, 1);
}

static pid_t child_pid;

static void forward_signal(int sig)
{
	int saved = errno; /* a handler leaves errno as it found it */
	if (child_pid > 0)
		kill(child_pid, sig);
	errno = saved;
}

static volatile sig_atomic_t stop_waiting;

/* While the outputs are written (the program has ended): a first Ctrl-C or SIGTERM says
 * what is happening and lets it finish; a second stops at once, keeping every spool not
 * yet converted (and the .partial file being written). */
static char manifest_path[PATH_MAX];
static char metrics_paths[2][PATH_MAX + 8]; /* the metrics spools (metrics_start()) */
/* interrupts received: counted atomically, the signal may reach any of gpuprof's threads
 * (the database is written on one of its own) */
static int interruptions;

static void say(const char *text)
{
	ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
	(void)ignored;
}

static void interrupt_output(int sig)
{
	if (__atomic_fetch_add(&interruptions, 1, __ATOMIC_SEQ_CST) == 0) {
		int saved = errno; /* a handler leaves errno as it found it */
		say("gpuprof: the program has ended; writing its outputs (interrupt again to stop "
		    "now and keep the spools for 'gpuprof convert')\n");
		errno = saved;
		return;
	}
	say("gpuprof: stopped: the spools not yet converted are kept; 'gpuprof convert "
	    "SPOOL' writes their outputs\n");
	unfinished_remove_all();
	unlink(manifest_path);
	unlink(metrics_paths[0]);
	unlink(metrics_paths[1]);
	_exit(128 + sig);
}

/* While the program runs: a Ctrl-C reaches it from the terminal (a SIGINT sent to
 * gpuprof alone is passed on); the second makes gpuprof send it SIGTERM, the third
 * SIGKILL, each said on stderr, for a program that ignores or survives SIGINT. */
static int program_interruptions;

static void interrupt_program(int sig, siginfo_t *info, void *context)
{
	(void)sig, (void)context;
	int n = __atomic_fetch_add(&program_interruptions, 1, __ATOMIC_SEQ_CST);
	if (child_pid <= 0)
		return;
	int saved = errno; /* a handler leaves errno as it found it */
	if (n == 0) {
		if (info->si_code == SI_USER || info->si_code == SI_QUEUE)
			kill(child_pid, SIGINT); /* not from the terminal: the program has not seen it */
		say("gpuprof: interrupt: passed to the program (Ctrl-C again sends it SIGTERM)\n");
	} else if (n == 1) {
		say("gpuprof: second interrupt: sending the program SIGTERM (Ctrl-C again sends "
		    "SIGKILL)\n");
		kill(child_pid, SIGTERM);
	} else {
		say("gpuprof: third interrupt: sending the program SIGKILL; what it recorded up to "
		    "its last flush is kept\n");
		kill(child_pid, SIGKILL);
	}
	errno = saved;
}

static void interrupt_wait(int sig)
{
	stop_waiting = 1;
}

/* Says which signal ended a process, when one did: "did not exit normally" in its
 * spool's notes does not name it. */
static void say_signal(pid_t pid, const char *what, int status)
{
	if (!WIFSIGNALED(status))
		return;
	int sig = WTERMSIG(status);
	const char *abbreviation = sigabbrev_np(sig);
	char name[32];
	if (abbreviation)
		snprintf(name, sizeof(name), "SIG%s", abbreviation);
	else
		snprintf(name, sizeof(name), "signal %d", sig);
	fprintf(stderr, "gpuprof: %s (pid %d) was killed by %s (%s)%s\n", what, (int)pid, name,
		strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
}

static void stop_metrics(struct metrics *sampler)
{
	struct error err;
	if (sampler && metrics_stop(sampler, &err))
		warn("metrics: %s (those sampled before are kept)", err.message);
}

/* Starts the target and waits for it and for every process it left behind. A failed
 * exec is reported through a close-on-exec pipe; its return is then -EXIT_NOT_FOUND
 * or -EXIT_CANNOT_RUN. */
static int run_target(char **argv, int *status, const struct metrics_options *metrics,
		      const char *metrics_base, struct error *err)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return error_set(err, "cannot create a pipe: %s", strerror(errno));
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fflush(NULL);
	pid_t parent = getpid();
	child_pid = fork();
	if (child_pid < 0)
		return error_set(err, "cannot fork: %s", strerror(errno));
	if (child_pid == 0) {
		close(pipefd[0]);
		/* gpuprof killed (SIGKILL from a scheduler's time limit) takes the program with
		 * it, as its SIGTERM and SIGHUP would: SIGTERM, so that it ends its own way */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(128 + SIGTERM);
		commands_restore_signals();
		execvp(argv[0], argv);
		int e = errno;
		ssize_t ignored = write(pipefd[1], &e, sizeof(e));
		(void)ignored;
		_exit(EXIT_NOT_FOUND);
	}
	close(pipefd[1]);
	/* metrics from the moment the program exists to the moment the last process ends */
	struct metrics *sampler = NULL;
	if (metrics->host || metrics->device) {
		struct error metrics_err;
		sampler = metrics_start(metrics, metrics_base, &metrics_err);
		if (!sampler)
			warn("metrics are not sampled: %s", metrics_err.message);
	}
	struct sigaction ignore = { .sa_handler = SIG_IGN }, forward = { .sa_handler = forward_signal };
	struct sigaction escalate = { .sa_sigaction = interrupt_program, .sa_flags = SA_SIGINFO };
	__atomic_store_n(&program_interruptions, 0, __ATOMIC_SEQ_CST); /* each run anew */
	sigaction(SIGINT, &escalate, NULL);
	sigaction(SIGQUIT, &ignore, NULL);
	sigaction(SIGTERM, &forward, NULL);
	sigaction(SIGHUP, &forward, NULL);
	sigaction(SIGUSR1, &forward, NULL);
	sigaction(SIGUSR2, &forward, NULL);

	int exec_errno = 0;
	ssize_t n;
	while ((n = read(pipefd[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(pipefd[0]);
	while (waitpid(child_pid, status, 0) < 0 && errno == EINTR)
		;
	say_signal(child_pid, "the program", *status);
	if (n == (ssize_t)sizeof(exec_errno)) {
		stop_metrics(sampler);
		metrics_remove(metrics_base);
		error_set(err, "cannot run '%s': %s", argv[0], strerror(exec_errno));
		return exec_errno == ENOENT ? -EXIT_NOT_FOUND : -EXIT_CANNOT_RUN;
	}

	/* Processes the target left behind were adopted by us (subreaper): their spools
	 * are complete only once they exit. A second Ctrl-C stops the wait. */
	struct sigaction interrupt = { .sa_handler = interrupt_wait };
	sigaction(SIGINT, &interrupt, NULL);
	int announced = 0;
	for (;;) {
		int other;
		pid_t pid = waitpid(-1, &other, WNOHANG);
		if (pid > 0) {
			say_signal(pid, "a process the program started", other);
			continue;
		}
		if (pid < 0 && errno == ECHILD)
			break;
		if (!announced++)
			fprintf(stderr, "gpuprof: waiting for the processes the target started to "
					"exit (Ctrl-C stops waiting)\n");
		pid = waitpid(-1, &other, 0);
		if (pid > 0)
			say_signal(pid, "a process the program started", other);
		if (pid < 0 && errno == EINTR && stop_waiting)
			break;
	}
	sigaction(SIGINT, &ignore, NULL);
	stop_metrics(sampler);
	return 0;
}

/* The processes that recorded nothing of their own (a shell or a launcher that ran the
 * program, its helpers): no outputs, one line that lists them, their spools removed
 * unless kept. When no process recorded anything, the first still gets its outputs, so
 * that a run always has some. Returns the failures. */
static int convert_or_list_empty(const struct strbuf *spools, size_t count, int none_written,
				 const struct output_request *request, int keep_spool)
{
	if (!count)
		return 0;
	const char *at = spools->buf;
	int failures = 0;
	if (none_written) {
		struct strbuf prefix = STRBUF_INIT;
		size_t len = strlen(at);
		strbuf_add(&prefix, at, len > 6 && !strcmp(at + len - 6, ".spool") ? len - 6 : len);
		struct error err;
		if (output_from_spool(at, prefix.buf, request, keep_spool, &err)) {
			warn("%s (the spool '%s' is kept; 'gpuprof convert' retries)", err.message, at);
			failures++;
		}
		strbuf_release(&prefix);
		at += strlen(at) + 1;
		if (!--count)
			return failures;
	}
	struct strbuf list = STRBUF_INIT;
	size_t listed = 0;
	for (; at < spools->buf + spools->len; at += strlen(at) + 1, listed++) {
		if (listed < 20)
			strbuf_addf(&list, "%s%s", listed ? ", " : "", at);
		if (!keep_spool && unlink(at) < 0)
			warn("cannot remove '%s': %s", at, strerror(errno));
	}
	if (listed > 20)
		strbuf_addf(&list, " and %zu more", listed - 20);
	fprintf(stderr, "gpuprof: %zu process%s recorded nothing of %s own (no API call, device "
			"work, marker or call-stack sample): no outputs for %s: %s\n", count,
		count == 1 ? "" : "es", count == 1 ? "its" : "their", count == 1 ? "it" : "them",
		list.buf);
	strbuf_release(&list);
	return failures;
}

/* "<name>_<pid>.spool" where another spool of the run is "<name>.spool": the pid
 * (digits up to ".spool"), else NULL. */
static const char *pid_suffix(const struct strbuf *spools, const char *spool)
{
	size_t len = strlen(spool);
	for (const char *other = spools->buf; other < spools->buf + spools->len;
	     other += strlen(other) + 1) {
		size_t base = strlen(other);
		if (base <= 6 || strcmp(other + base - 6, ".spool") || len <= base + 1)
			continue;
		base -= 6;
		const char *digits = spool + base + 1;
		size_t n = strspn(digits, "0123456789");
		if (!strncmp(spool, other, base) && spool[base] == '_' && n &&
		    !strcmp(digits + n, ".spool"))
			return digits;
	}
	return NULL;
}

int trace_post_process(const char *manifest, const char *metrics_base, const char *directory,
		       const struct output_request *request, int keep_spool)
{
	int metrics = metrics_recorded(metrics_base);
	FILE *f = fopen(manifest, "re");
	if (!f) {
		warn("cannot read the list of recorded processes '%s': %s", manifest, strerror(errno));
		return -1;
	}
	/* One spool path per entry, each ended by a NUL: a path may hold any other byte,
	 * a newline included. */
	char *line = NULL;
	size_t capacity = 0;
	ssize_t length;
	int failures = 0, processes = 0, written_count = 0;
	struct strbuf seen = STRBUF_INIT; /* the paths, each ended by a NUL, each once */
	struct strbuf empty = STRBUF_INIT; /* the spools of processes that recorded nothing */
	size_t empty_count = 0;
	struct output_request skipping = *request;
	skipping.skip_empty = 1;
	while ((length = getdelim(&line, &capacity, '\0', f)) > 0) {
		if (line[length - 1] != '\0' || !line[0]) /* a cut last entry, or an empty one */
			continue;
		int duplicate = 0;
		for (size_t at = 0; at < seen.len && !duplicate; at += strlen(seen.buf + at) + 1)
			duplicate = !strcmp(seen.buf + at, line);
		if (!duplicate)
			strbuf_add(&seen, line, (size_t)length);
	}
	free(line);
	fclose(f);
	for (const char *spool = seen.buf; spool < seen.buf + seen.len; spool += strlen(spool) + 1) {
		processes++;
		struct strbuf prefix = STRBUF_INIT;
		size_t len = strlen(spool);
		strbuf_add(&prefix, spool, len > 6 && !strcmp(spool + len - 6, ".spool") ? len - 6 : len);
		const char *pid = pid_suffix(&seen, spool);
		if (pid) /* -o without %pid%, taken by another process: the recorder added it */
			fprintf(stderr, "gpuprof: another process of the run (pid %.*s) recorded under "
					"the same name: its outputs are named '%s_*'\n",
				(int)strspn(pid, "0123456789"), pid, prefix.buf);
		struct error err;
		if (metrics && metrics_append(metrics_base, spool, &err))
			warn("metrics are left out of '%s': %s", spool, err.message);
		int rc = output_from_spool(spool, prefix.buf, &skipping, keep_spool, &err);
		if (rc < 0) {
			warn("%s (the spool '%s' is kept; 'gpuprof convert' retries)", err.message, spool);
			failures++;
		} else if (rc == 1) {
			strbuf_add(&empty, spool, len + 1);
			empty_count++;
		} else {
			written_count++;
		}
		strbuf_release(&prefix);
	}
	strbuf_release(&seen);
	if (!processes)
		warn("no process used OpenCL, CUDA or MPI: nothing was recorded");
	failures += convert_or_list_empty(&empty, empty_count, written_count == 0, request,
					  keep_spool);
	strbuf_release(&empty);
	struct strbuf written = STRBUF_INIT;
	struct error err;
	if (metrics && metrics_write_madengine(metrics_base, directory, &written, &err)) {
		warn("%s", err.message);
		failures++;
	}
	for (const char *at = written.buf; *at; at = strchr(at, '\n') + 1)
		fprintf(stderr, "gpuprof:   %.*s\n", (int)(strchr(at, '\n') - at), at);
	strbuf_release(&written);
	return failures ? -1 : 0;
}

static int prepare_manifest(struct strbuf *path, struct error *err)
{
	const char *tmp = getenv("TMPDIR");
	strbuf_addf(path, "%s/gpuprof-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	int fd = mkstemp(path->buf);
	if (fd < 0)
		return error_set(err, "cannot create a temporary file in '%s': %s",
				 tmp && *tmp ? tmp : "/tmp", strerror(errno));
	close(fd);
	return 0;
}


/* A sanitizer runtime this gpuprof was linked with (gcc's libasan.so or libtsan.so): a
 * sanitized build makes sanitized recording libraries, and those work in a program built
 * without the sanitizer only when its runtime is the first library loaded. */
static int find_sanitizer_runtime(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libasan.so", 10) && strncmp(base, "libtsan.so", 10))
		return 0;
	strbuf_addstr(data, info->dlpi_name);
	return 1;
}

/* gpuprof's OpenCL library takes the place of the ICD loader (libOpenCL.so.1) and
 * forwards to the one the program would have found, named in GPUPROF_OPENCL_LOADER: the
 * loader this process finds under the user's environment. A gpuprof run inside a traced
 * program keeps the loader its parent found. */
static void find_opencl_loader(void)
{
	const char *named = getenv("GPUPROF_OPENCL_LOADER");
	if (named && *named)
		return;
	void *handle = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
	struct link_map *map = NULL;
	if (handle && !dlsym(handle, "gpuprof_opencl_interposer") &&
	    dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name[0]) {
		char *path = realpath(map->l_name, NULL);
		if (path)
			setenv("GPUPROF_OPENCL_LOADER", path, 1);
		free(path);
	}
	if (handle)
		dlclose(handle);
}

/* The recording libraries, named once for every run: the recorder preloaded (it sees
 * _exit() and exec()), the OpenCL one preloaded and findable as the ICD loader, the CUDA
 * one named to the driver, the marker libraries findable. */
void trace_place_libraries(void)
{
	struct strbuf opencl_library = STRBUF_INIT, cuda_library = STRBUF_INIT;
	struct strbuf preload = STRBUF_INIT, recorder_library = STRBUF_INIT;
	struct error err;
	int have_opencl = trace_find_library("libgpuprof-opencl.so", &opencl_library, &err) == 0;
	int have_cuda = trace_find_library("libgpuprof-cuda.so", &cuda_library, &err) == 0;
	if (!have_opencl && !have_cuda)
		die("%s: no recording library found beside gpuprof (in '%s'): it was built "
		    "without the OpenCL headers and without the CUDA toolkit", trace_command_name,
		    opencl_library.buf);
	const char *old_preload = getenv("LD_PRELOAD");
	dl_iterate_phdr(find_sanitizer_runtime, &preload);
	if (trace_find_library("libgpuprof-recorder.so", &recorder_library, &err) == 0)
		strbuf_addf(&preload, "%s%s", preload.len ? ":" : "", recorder_library.buf);
	if (have_opencl) {
		strbuf_addf(&preload, "%s%s", preload.len ? ":" : "", opencl_library.buf);
		find_opencl_loader();
		if (trace_find_library("opencl", &opencl_library, &err) == 0)
			library_path_prepend(opencl_library.buf);
	}
	if (old_preload && *old_preload)
		strbuf_addf(&preload, ":%s", old_preload);
	setenv("LD_PRELOAD", preload.buf, 1);
	if (have_cuda) {
		/* The driver loads one injection library: one already named (Nsight Systems,
		 * Nsight Compute, compute-sanitizer) keeps its place. */
		const char *injection = getenv("CUDA_INJECTION64_PATH");
		if (injection && *injection && strcmp(injection, "none") &&
		    strcmp(injection, cuda_library.buf))
			warn("CUDA_INJECTION64_PATH already names '%s' (another CUDA tool): CUDA "
			     "work is not traced", injection);
		else
			setenv("CUDA_INJECTION64_PATH", cuda_library.buf, 1);
	}
	make_markers_findable();
	strbuf_release(&opencl_library);
	strbuf_release(&cuda_library);
	strbuf_release(&preload);
	strbuf_release(&recorder_library);
}

/* Runs the program once as j says, with outputs under `directory`. Returns the
 * program's status as gpuprof's exit code; dies when the program cannot start. */
int trace_job_run(struct job *j, const char *directory, char **command)
{
	const struct trace_options *o = &j->o;
	struct strbuf manifest = STRBUF_INIT;
	struct error err;
	/* a program that cannot start is said first, before what would have been recorded */
	if (!trace_find_program(command[0], NULL))
		die_with(errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN, "%s: cannot run '%s': "
			 "%s", trace_command_name, command[0], strerror(errno));
	check_buffer_sizes(o);
	int bad_name = 0;
	if (check_output_directory(directory, o->file, &bad_name, &err))
		die_with(bad_name ? EXIT_USAGE : EXIT_FAILURE, "%s: %s", trace_command_name, err.message);
	if (prepare_manifest(&manifest, &err))
		die("%s: %s", trace_command_name, err.message);
	if (j->defaulted)
		warn("no tracing option given: tracing kernels (see --runtime-trace, --sys-trace)");
	if (o->mangled == 1)
		setenv("GPUPROF_MANGLED_KERNELS", "1", 1);
	else
		unsetenv("GPUPROF_MANGLED_KERNELS");
	struct strbuf nvtx = STRBUF_INIT;
	if (trace_find_library("libgpuprof-nvtx.so", &nvtx, &err) == 0) {
		/* NVTX loads one injection library; one already named (Nsight Systems) keeps
		 * it */
		const char *named = getenv("NVTX_INJECTION64_PATH");
		int ours = named && !strcmp(named, nvtx.buf);
		if (!strstr(j->trace.buf, "marker")) {
			if (ours)
				unsetenv("NVTX_INJECTION64_PATH");
		} else if (named && *named && !ours) {
			warn("NVTX_INJECTION64_PATH already names '%s' (another tool): NVTX ranges "
			     "are not recorded", named);
		} else {
			setenv("NVTX_INJECTION64_PATH", nvtx.buf, 1);
		}
	}
	strbuf_release(&nvtx);
	if (o->torch_trace == 1)
		torch_trace_setup();
	else
		unsetenv("GPUPROF_TORCH_TRACE");
	if (o->selected_regions == 1)
		setenv("GPUPROF_SELECTED_REGIONS", "1", 1);
	else
		unsetenv("GPUPROF_SELECTED_REGIONS");
	if (o->cuda_graph_trace)
		setenv("GPUPROF_CUDA_GRAPH_TRACE", o->cuda_graph_trace, 1);
	else
		unsetenv("GPUPROF_CUDA_GRAPH_TRACE");
	if (o->nvtx_capture)
		setenv("GPUPROF_CAPTURE_RANGE", o->nvtx_capture, 1);
	else
		unsetenv("GPUPROF_CAPTURE_RANGE");
	if (j->periods.len)
		setenv("GPUPROF_COLLECTION_PERIOD", j->periods.buf, 1);
	else
		unsetenv("GPUPROF_COLLECTION_PERIOD");
	setenv("GPUPROF_TRACE", j->trace.buf, 1);
	if (o->nvtx_include)
		setenv("GPUPROF_NVTX_DOMAIN_INCLUDE", o->nvtx_include, 1);
	else
		unsetenv("GPUPROF_NVTX_DOMAIN_INCLUDE");
	if (o->nvtx_exclude)
		setenv("GPUPROF_NVTX_DOMAIN_EXCLUDE", o->nvtx_exclude, 1);
	else
		unsetenv("GPUPROF_NVTX_DOMAIN_EXCLUDE");
	trace_place_mpi(o->mpi == 1, command[0]);
	trace_place_nccl(o->nccl == 1);
	/* the counters are collected for the kernels the filters keep */
	const struct {
		const char *name, *value;
	} counter_env[] = {
		{ "GPUPROF_PMC", j->pmc.len ? j->pmc.buf : NULL },
		{ "GPUPROF_PMC_MULTIPLEX", j->pmc.len ? o->pmc_multiplex : NULL },
		{ "GPUPROF_KERNEL_INCLUDE_REGEX", j->pmc.len ? o->kernel_include : NULL },
		{ "GPUPROF_KERNEL_EXCLUDE_REGEX", j->pmc.len ? o->kernel_exclude : NULL },
		{ "GPUPROF_KERNEL_ITERATION_RANGE", j->pmc.len ? o->kernel_iterations : NULL },
	};
	for (size_t i = 0; i < sizeof(counter_env) / sizeof(counter_env[0]); i++)
		if (counter_env[i].value)
			setenv(counter_env[i].name, counter_env[i].value, 1);
		else
			unsetenv(counter_env[i].name);
	if (j->sample_freq)
		set_env_number("GPUPROF_SAMPLE_FREQ", j->sample_freq);
	else
		unsetenv("GPUPROF_SAMPLE_FREQ");
	if (j->sample_freq)
		set_env_number("GPUPROF_SAMPLE_STACK_BYTES", j->sample_stack);
	else
		unsetenv("GPUPROF_SAMPLE_STACK_BYTES");
	if (j->sample_realtime)
		setenv("GPUPROF_SAMPLE_REALTIME", "1", 1);
	else
		unsetenv("GPUPROF_SAMPLE_REALTIME");
	if (j->sample_gil)
		setenv("GPUPROF_SAMPLE_GIL", "1", 1);
	else
		unsetenv("GPUPROF_SAMPLE_GIL");
	if (j->pc_sampling[0])
		setenv("GPUPROF_PC_SAMPLING", j->pc_sampling, 1);
	else
		unsetenv("GPUPROF_PC_SAMPLING");
	if (j->launch_stacks)
		set_env_number("GPUPROF_LAUNCH_STACKS", j->launch_stacks);
	else
		unsetenv("GPUPROF_LAUNCH_STACKS");
	/* each allocation's stack (x86-64: the registers read are its) */
#if defined(__x86_64__)
	if (strstr(j->trace.buf, "memory_allocation"))
		set_env_number("GPUPROF_ALLOCATION_STACKS",
			       j->launch_stacks ? j->launch_stacks : SAMPLE_STACK_BYTES);
	else
#endif
		unsetenv("GPUPROF_ALLOCATION_STACKS");
	/* CPython's frames are read from its memory (3.11 to 3.13): its perf trampoline is
	 * never turned on; a perf map the program writes itself (a JIT compiler, a user's
	 * PYTHONPERFSUPPORT) is read as it is */
	/* metrics join the spools: every process has one, whatever it uses */
	if (j->metrics.host || j->metrics.device)
		setenv("GPUPROF_RECORD_AT_START", "1", 1);
	else
		unsetenv("GPUPROF_RECORD_AT_START");
	/* absolute: the program may change directory before it writes its spool */
	struct strbuf absolute = STRBUF_INIT;
	char cwd[PATH_MAX];
	const char *relative = directory;
	while (relative[0] == '.' && relative[1] == '/')
		relative += 2;
	if (relative[0] != '/' && getcwd(cwd, sizeof(cwd)))
		strbuf_addstr(&absolute, cwd);
	if (strcmp(relative, ".") && *relative)
		strbuf_addf(&absolute, "%s%s", absolute.len ? "/" : "", relative);
	setenv("GPUPROF_OUTPUT_PATH", absolute.buf, 1);
	strbuf_release(&absolute);
	setenv("GPUPROF_OUTPUT_FILE", o->file, 1);
	setenv("GPUPROF_MANIFEST", manifest.buf, 1);
	set_env_number("GPUPROF_LAUNCH_TIME", (unsigned long long)time(NULL));
	if (o->buffer_size != TRACE_BUFFER_UNSET)
		set_env_number("GPUPROF_BUFFER_SIZE", o->buffer_size);
	else
		unsetenv("GPUPROF_BUFFER_SIZE");
	if (o->buffer_limit != TRACE_BUFFER_UNSET)
		set_env_number("GPUPROF_BUFFER_LIMIT", o->buffer_limit);
	else
		unsetenv("GPUPROF_BUFFER_LIMIT");

	int status = 0;
	struct strbuf metrics = STRBUF_INIT;
	strbuf_addf(&metrics, "%s.metrics", manifest.buf);
	int rc = run_target(command, &status, &j->metrics, metrics.buf, &err);
	if (rc < 0) {
		unlink(manifest.buf);
		die_with(rc < -1 ? -rc : EXIT_FAILED, "%s: %s", trace_command_name, err.message);
	}
	snprintf(manifest_path, sizeof(manifest_path), "%s", manifest.buf);
	for (int gpu = 0; gpu < 2; gpu++) { /* for the interrupt handler, which cannot allocate */
		struct strbuf path = STRBUF_INIT;
		metrics_file(&path, metrics.buf, gpu);
		snprintf(metrics_paths[gpu], sizeof(metrics_paths[gpu]), "%s", path.buf);
		strbuf_release(&path);
	}
	struct sigaction interrupt = { .sa_handler = interrupt_output, .sa_flags = SA_RESTART };
	sigaction(SIGINT, &interrupt, NULL);
	sigaction(SIGTERM, &interrupt, NULL);
	sigaction(SIGHUP, &interrupt, NULL);
	int failed = trace_post_process(manifest.buf, metrics.buf, directory, &j->request,
				  o->keep_spool == 1);
	unlink(manifest.buf);
	metrics_remove(metrics.buf);
	strbuf_release(&manifest);
	strbuf_release(&metrics);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FAILED;
	return code == 0 && failed ? EXIT_FAILED : code;
}

