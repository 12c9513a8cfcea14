/* The metrics sampler (see metrics.h): one thread in gpuprof that reads /proc, /sys and
 * NVML every interval and writes one spool chunk per round. */
#include "metrics/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/record.h"
#include "core/spool.h"
#include "metrics/nvml.h"
#include "runtime/recorder.h"
#include "util/proc.h"

#define NO_SERIES UINT32_MAX /* a GPU metric the GPU does not support */

/* The series of each traced process, in this order. */
enum process_metric {
	PROCESS_CPU, PROCESS_RSS, PROCESS_VIRTUAL, PROCESS_THREADS, PROCESS_MINOR_FAULTS,
	PROCESS_MAJOR_FAULTS, PROCESS_VOLUNTARY_SWITCHES, PROCESS_INVOLUNTARY_SWITCHES,
	PROCESS_READ, PROCESS_WRITTEN, PROCESS_METRIC_COUNT
};

static const struct {
	const char *name, *unit;
} process_metrics[PROCESS_METRIC_COUNT] = {
	[PROCESS_CPU] = { "CPU", "%" },
	[PROCESS_RSS] = { "RSS", "bytes" },
	[PROCESS_VIRTUAL] = { "virtual memory", "bytes" },
	[PROCESS_THREADS] = { "threads", "count" },
	[PROCESS_MINOR_FAULTS] = { "minor page faults", "1/s" },
	[PROCESS_MAJOR_FAULTS] = { "major page faults", "1/s" },
	[PROCESS_VOLUNTARY_SWITCHES] = { "voluntary context switches", "1/s" },
	[PROCESS_INVOLUNTARY_SWITCHES] = { "involuntary context switches", "1/s" },
	[PROCESS_READ] = { "bytes read", "bytes/s" },
	[PROCESS_WRITTEN] = { "bytes written", "bytes/s" },
};

/* What /proc says of one process; the counters only grow. */
struct process_reading {
	uint64_t cpu_ticks, minor_faults, major_faults, voluntary, involuntary, read, written;
	uint64_t rss, virtual_bytes, threads;
	int have_io;
	int have_switches; /* voluntary and involuntary summed over the threads this reading */
};

/* A thread's context switches when last seen: /proc/PID/status counts the thread it is
 * read for only, so a process's are the sum over its threads and those that ended. */
struct task_switches {
	pid_t tid;
	uint64_t voluntary, involuntary;
};

#define OWN_THREADS 8

struct process {
	pid_t pid;
	uint32_t first_series; /* PROCESS_METRIC_COUNT ids from here */
	uint64_t time_ns;      /* of the last reading */
	struct process_reading last;
	int seen;              /* in this round */
	pid_t own[OWN_THREADS]; /* gpuprof's threads in it */
	int own_count;
	uint64_t threads_seen;  /* the count of threads when they were looked for */
	unsigned readings;
	struct process_reading own_total; /* their counters, at their highest */
	struct task_switches *tasks;      /* the program's threads at the last look, by tid */
	size_t task_count;
	uint64_t ended_voluntary, ended_involuntary; /* of its threads that ended */
	uint64_t switches_ns;             /* when the switches were last summed */
	struct process_reading switches;  /* their sums then */
};

struct cpu_times {
	uint64_t busy, total;
};

struct sampler {
	struct metrics_options o;
	uint32_t first_series; /* ids from here: the two samplers' never meet */
	int fd;
	char *path;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int stop, failed;
	struct error err;
	struct strbuf chunk; /* records of this round */
	uint32_t chunk_records, next_series;
	long ticks_per_second, page_size;
	/* the machine: index 0 is all CPUs, i + 1 is CPU i */
	int cpus;
	struct cpu_times *cpu_last;
	uint32_t utilization_series, frequency_series, memory_series;
	int have_frequency;
	/* the traced processes */
	struct process *processes;
	size_t process_count, process_alloc;
	/* the GPUs */
	struct nvml *nvml;
	uint32_t gpu_series[METRICS_MAX_GPUS][GPU_METRIC_COUNT]; /* 0: not yet made */
	double energy_start[METRICS_MAX_GPUS];
};

/* ---- records ---------------------------------------------------------------------------- */

static void add_record(struct sampler *m, const void *record, uint32_t size)
{
	strbuf_add(&m->chunk, record, size);
	m->chunk_records++;
}

static uint32_t new_series(struct sampler *m, enum metric_source source, int device,
			   pid_t pid, const char *name, const char *unit)
{
	struct record_metric_series r;
	memset(&r, 0, sizeof(r));
	r.header.size = sizeof(r);
	r.header.type = RECORD_METRIC_SERIES;
	r.id = ++m->next_series;
	r.source = source;
	r.device = device;
	r.pid = (uint32_t)pid;
	snprintf(r.name, sizeof(r.name), "%s", name);
	snprintf(r.unit, sizeof(r.unit), "%s", unit);
	add_record(m, &r, sizeof(r));
	return r.id;
}

static void record_value(struct sampler *m, uint32_t series, uint64_t time_ns, double v)
{
	struct record_metric r = {
		.header = { .size = sizeof(r), .type = RECORD_METRIC },
		.series_id = series, .time_ns = time_ns, .value = v,
	};
	add_record(m, &r, sizeof(r));
}

static void flush(struct sampler *m)
{
	if (!m->chunk_records)
		return;
	if (!m->failed && spool_write_chunk(m->fd, m->chunk.buf, (uint32_t)m->chunk.len,
					    m->chunk_records, &m->err))
		m->failed = 1;
	strbuf_reset(&m->chunk);
	m->chunk_records = 0;
}

/* ---- the machine -------------------------------------------------------------------------- */

/* Fills times[0] (all CPUs) and times[i + 1] from /proc/stat; returns the number of CPUs
 * seen, at most max. A CPU that is offline keeps total 0. */
static int read_cpu_times(struct cpu_times *times, int max)
{
	FILE *f = fopen("/proc/stat", "re");
	if (!f)
		return 0;
	char line[512];
	int cpus = 0;
	memset(times, 0, (size_t)(max + 1) * sizeof(*times));
	while (fgets(line, sizeof(line), f) && !strncmp(line, "cpu", 3)) {
		unsigned long long v[8] = { 0 };
		char *p = line + 3;
		int index = -1;
		if (*p != ' ')
			index = (int)strtol(p, &p, 10);
		if (index >= max)
			continue;
		if (sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7]) < 4)
			continue;
		/* user nice system idle iowait irq softirq steal */
		uint64_t total = 0;
		for (int i = 0; i < 8; i++)
			total += v[i];
		struct cpu_times *t = &times[index + 1];
		t->total = total;
		t->busy = total - v[3] - v[4];
		if (index + 1 > cpus)
			cpus = index + 1;
	}
	fclose(f);
	return cpus;
}

static void sample_cpus(struct sampler *m, uint64_t now)
{
	struct cpu_times *times = xcalloc((size_t)m->cpus + 1, sizeof(*times));
	read_cpu_times(times, m->cpus);
	for (int i = 0; i <= m->cpus; i++) {
		uint64_t total = times[i].total - m->cpu_last[i].total;
		if (m->cpu_last[i].total && times[i].total > m->cpu_last[i].total &&
		    times[i].busy >= m->cpu_last[i].busy)
			record_value(m, m->utilization_series + (uint32_t)i, now,
				     100.0 * (double)(times[i].busy - m->cpu_last[i].busy) / (double)total);
		if (times[i].total)
			m->cpu_last[i] = times[i];
	}
	free(times);
	for (int i = 0; m->have_frequency && i < m->cpus; i++) {
		char path[96], text[64];
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", i);
		if (proc_read(path, text, sizeof(text)) > 0)
			record_value(m, m->frequency_series + (uint32_t)i, now,
				     strtod(text, NULL) / 1000.0);
	}
	char meminfo[4096];
	if (proc_read("/proc/meminfo", meminfo, sizeof(meminfo)) > 0) {
		const char *total = strstr(meminfo, "MemTotal:");
		const char *available = strstr(meminfo, "MemAvailable:");
		if (total && available) {
			double t = strtod(total + 9, NULL), a = strtod(available + 13, NULL);
			record_value(m, m->memory_series, now, (t - a) * 1024.0); /* kB */
		}
	}
}

/* ---- the traced processes ----------------------------------------------------------------- */

/* The counters of a process (dir "/proc/PID") or of one of its threads
 * ("/proc/PID/task/TID"): the files have the same form (its context switches are a
 * thread's only: find_threads() sums them). */
static int read_counters(const char *dir, long page_size, struct process_reading *r)
{
	char path[96], text[4096];
	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), "%s/stat", dir);
	if (proc_read(path, text, sizeof(text)) <= 0)
		return -1;
	const char *p = strrchr(text, ')'); /* the command may hold spaces and parentheses */
	if (p && (p[2] == 'Z' || p[2] == 'X')) /* ended, not yet reaped: nothing to measure */
		return -1;
	unsigned long long minflt, majflt, utime, stime, threads, vsize;
	long long rss;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu %*u %llu %llu "
			 "%*d %*d %*d %*d %llu %*d %*s %llu %lld", &minflt, &majflt, &utime,
			 &stime, &threads, &vsize, &rss) != 7)
		return -1;
	r->minor_faults = minflt;
	r->major_faults = majflt;
	r->cpu_ticks = utime + stime;
	r->threads = threads;
	r->virtual_bytes = vsize;
	r->rss = rss > 0 ? (uint64_t)rss * (uint64_t)page_size : 0;
	snprintf(path, sizeof(path), "%s/io", dir);
	if (proc_read(path, text, sizeof(text)) > 0) {
		const char *rchar = strstr(text, "rchar:");
		const char *wchar = strstr(text, "wchar:");
		if (rchar && wchar) {
			r->read = strtoull(rchar + 6, NULL, 10);
			r->written = strtoull(wchar + 6, NULL, 10);
			r->have_io = 1;
		}
	}
	return 0;
}

static int by_tid(const void *a, const void *b)
{
	pid_t x = ((const struct task_switches *)a)->tid, y = ((const struct task_switches *)b)->tid;
	return (x > y) - (x < y);
}

/* The threads of process p, looked for again at every reading of a process of up to 64
 * threads; in a larger one, whenever its count of threads changed and every 16 readings:
 * gpuprof's own threads (RECORDER_THREAD_PREFIX) into p->own, and the context switches
 * of the program's threads summed into r (have_switches), those of a thread that ended
 * since the last look as it was last seen. Returns the threads the look saw, 0 when it
 * did not look. */
static uint64_t find_threads(struct process *p, uint64_t threads, struct process_reading *r)
{
	/* a thread just started may not have its name yet: looked for at every reading in
	 * a process of a few threads (a name missed for one reading lets what the thread
	 * did before be counted as the program's), every 16 readings in a larger one */
	if (threads > 64 && threads == p->threads_seen && p->readings++ % 16)
		return 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	p->threads_seen = threads;
	p->own_count = 0;
	struct task_switches *seen = NULL;
	size_t count = 0, alloc = 0;
	struct dirent *e;
	uint64_t tasks = 0;
	while ((e = readdir(d))) {
		char file[400], text[4096];
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(file, sizeof(file), "%s/%s/status", path, e->d_name);
		if (proc_read(file, text, sizeof(text)) <= 0 || strncmp(text, "Name:\t", 6))
			continue; /* ended meanwhile */
		tasks++;
		if (!strncmp(text + 6, RECORDER_THREAD_PREFIX, strlen(RECORDER_THREAD_PREFIX))) {
			if (p->own_count < OWN_THREADS)
				p->own[p->own_count++] = (pid_t)atoi(e->d_name);
			continue;
		}
		const char *v = strstr(text, "\nvoluntary_ctxt_switches:");
		const char *i = strstr(text, "\nnonvoluntary_ctxt_switches:");
		if (count == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			seen = xrealloc(seen, alloc * sizeof(*seen));
		}
		seen[count++] = (struct task_switches){ (pid_t)atoi(e->d_name),
							v ? strtoull(v + 25, NULL, 10) : 0,
							i ? strtoull(i + 28, NULL, 10) : 0 };
	}
	closedir(d);
	qsort(seen, count, sizeof(*seen), by_tid);
	/* a thread of the last look that this one did not see ended: its counts stay; one
	 * seen with fewer switches than then ended too, its tid taken by a new thread */
	for (size_t k = 0, j = 0; k < p->task_count; k++) {
		while (j < count && seen[j].tid < p->tasks[k].tid)
			j++;
		if (j == count || seen[j].tid != p->tasks[k].tid ||
		    seen[j].voluntary < p->tasks[k].voluntary ||
		    seen[j].involuntary < p->tasks[k].involuntary) {
			p->ended_voluntary += p->tasks[k].voluntary;
			p->ended_involuntary += p->tasks[k].involuntary;
		}
	}
	free(p->tasks);
	p->tasks = seen;
	p->task_count = count;
	r->voluntary = p->ended_voluntary;
	r->involuntary = p->ended_involuntary;
	for (size_t k = 0; k < count; k++) {
		r->voluntary += seen[k].voluntary;
		r->involuntary += seen[k].involuntary;
	}
	r->have_switches = 1;
	return tasks;
}

#define RAISE(field) own->field = sum.field > own->field ? sum.field : own->field

/* What process p did, gpuprof's own threads in it left out: their counters, summed, at
 * their highest (a thread that ended leaves its counts in the process's). */
static int read_process(struct process *p, long page_size, struct process_reading *r)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d", (int)p->pid);
	if (read_counters(dir, page_size, r))
		return -1;
	/* the program's threads from one look at its tasks where there was one: the count
	 * of /proc/PID/stat, read before, may miss a thread the look finds named gpuprof's */
	pid_t before[OWN_THREADS];
	int before_count = p->own_count, ended = 0;
	memcpy(before, p->own, sizeof(before));
	uint64_t tasks = find_threads(p, r->threads, r);
	for (int i = 0; i < before_count; i++) {
		int found = 0;
		for (int j = 0; j < p->own_count && !found; j++)
			found = p->own[j] == before[i];
		ended |= !found;
	}
	struct process_reading sum = { 0 }, one, *own = &p->own_total;
	for (int i = 0; i < p->own_count; i++) {
		char task[96];
		snprintf(task, sizeof(task), "%s/task/%d", dir, (int)p->own[i]);
		if (read_counters(task, page_size, &one)) {
			ended = 1;
			continue;
		}
		sum.cpu_ticks += one.cpu_ticks;
		sum.minor_faults += one.minor_faults;
		sum.major_faults += one.major_faults;
		sum.read += one.read;
		sum.written += one.written;
		sum.threads++;
	}
	RAISE(cpu_ticks);
	RAISE(minor_faults);
	RAISE(major_faults);
	RAISE(read);
	RAISE(written);
	/* A thread of gpuprof's that ended since the last reading (the recorder stopping, at
	 * the program's exit or exec) left in the process's counters what it did after that
	 * reading (the writer's last flush), no longer in its own: the interval is given to
	 * gpuprof's threads, the program's counters stay as they were. */
#define HOLD(field) \
	if (r->field > p->last.field && r->field - p->last.field > own->field) \
		own->field = r->field - p->last.field
	if (ended && p->time_ns) {
		HOLD(cpu_ticks);
		HOLD(minor_faults);
		HOLD(major_faults);
		if (p->last.have_io) {
			HOLD(read);
			HOLD(written);
		}
	}
#undef HOLD
#define TAKE(field) r->field = r->field > own->field ? r->field - own->field : 0
	TAKE(cpu_ticks);
	TAKE(minor_faults);
	TAKE(major_faults);
	TAKE(read);
	TAKE(written);
#undef TAKE
	uint64_t all = tasks ? tasks : r->threads, own_threads = tasks ? (uint64_t)p->own_count
									 : sum.threads;
	r->threads = all > own_threads ? all - own_threads : 0;
	return 0;
}

#undef RAISE

static struct process *find_process(struct sampler *m, pid_t pid)
{
	for (size_t i = 0; i < m->process_count; i++)
		if (m->processes[i].pid == pid)
			return &m->processes[i];
	return NULL;
}

static double per_second(uint64_t now, uint64_t then, uint64_t before, uint64_t after)
{
	return after >= before && now > then ? (double)(after - before) * 1e9 / (double)(now - then)
					      : 0;
}

static void sample_process(struct sampler *m, struct process *p, uint64_t now)
{
	struct process_reading r;
	if (read_process(p, m->page_size, &r))
		return;
	if (!p->first_series) {
		for (int k = 0; k < PROCESS_METRIC_COUNT; k++) {
			uint32_t id = new_series(m, METRIC_PROCESS, -1, p->pid, process_metrics[k].name,
						 process_metrics[k].unit);
			if (k == 0)
				p->first_series = id;
		}
	}
	uint32_t s = p->first_series;
	record_value(m, s + PROCESS_RSS, now, (double)r.rss);
	record_value(m, s + PROCESS_VIRTUAL, now, (double)r.virtual_bytes);
	record_value(m, s + PROCESS_THREADS, now, (double)r.threads);
	if (p->time_ns) { /* rates need a reading before */
		const struct process_reading *b = &p->last;
		double seconds = (double)(now - p->time_ns) / 1e9;
		if (seconds > 0 && r.cpu_ticks >= b->cpu_ticks)
			record_value(m, s + PROCESS_CPU, now,
				     100.0 * (double)(r.cpu_ticks - b->cpu_ticks) /
					     (double)m->ticks_per_second / seconds);
		record_value(m, s + PROCESS_MINOR_FAULTS, now,
			     per_second(now, p->time_ns, b->minor_faults, r.minor_faults));
		record_value(m, s + PROCESS_MAJOR_FAULTS, now,
			     per_second(now, p->time_ns, b->major_faults, r.major_faults));
		if (r.have_io && b->have_io) {
			record_value(m, s + PROCESS_READ, now,
				     per_second(now, p->time_ns, b->read, r.read));
			record_value(m, s + PROCESS_WRITTEN, now,
				     per_second(now, p->time_ns, b->written, r.written));
		}
	}
	/* the switches over the time since they were last summed (a reading of a large
	 * process that did not look at its threads has none) */
	if (r.have_switches && p->switches_ns) {
		record_value(m, s + PROCESS_VOLUNTARY_SWITCHES, now,
			     per_second(now, p->switches_ns, p->switches.voluntary, r.voluntary));
		record_value(m, s + PROCESS_INVOLUNTARY_SWITCHES, now,
			     per_second(now, p->switches_ns, p->switches.involuntary,
					r.involuntary));
	}
	if (r.have_switches) {
		p->switches = r;
		p->switches_ns = now;
	}
	p->last = r;
	p->time_ns = now;
}

static void sample_processes(struct sampler *m, uint64_t now)
{
	pid_t *pids = NULL;
	size_t count = 0;
	if (m->o.root) { /* a process attached to, itself too */
		pids = xrealloc(pids, sizeof(*pids));
		pids[count++] = (pid_t)m->o.root;
	}
	proc_descendants(m->o.root ? (pid_t)m->o.root : getpid(), &pids, &count);
	for (size_t i = 0; i < m->process_count; i++)
		m->processes[i].seen = 0;
	for (size_t i = 0; i < count; i++) {
		struct process *p = find_process(m, pids[i]);
		if (!p) {
			if (m->process_count == m->process_alloc) {
				m->process_alloc = m->process_alloc ? 2 * m->process_alloc : 16;
				m->processes = xrealloc(m->processes,
							m->process_alloc * sizeof(*m->processes));
			}
			p = &m->processes[m->process_count++];
			memset(p, 0, sizeof(*p));
			p->pid = pids[i];
		}
		p->seen = 1;
		sample_process(m, p, now);
	}
	/* processes that ended are forgotten: a later one with the same pid is new */
	size_t kept = 0;
	for (size_t i = 0; i < m->process_count; i++)
		if (m->processes[i].seen)
			m->processes[kept++] = m->processes[i];
		else
			free(m->processes[i].tasks);
	m->process_count = kept;
	free(pids);
}

/* ---- the GPUs ------------------------------------------------------------------------------ */

static void sample_gpus(struct sampler *m, uint64_t now)
{
	unsigned count = nvml_device_count(m->nvml);
	for (unsigned d = 0; d < count && d < METRICS_MAX_GPUS; d++)
		for (int k = 0; k < GPU_METRIC_COUNT; k++) {
			uint32_t *series = &m->gpu_series[d][k];
			double v;
			if (*series == NO_SERIES)
				continue;
			int rc = nvml_read(m->nvml, d, (enum gpu_metric)k, &v);
			if (rc > 0)
				*series = NO_SERIES;
			if (rc)
				continue;
			if (!*series) {
				*series = new_series(m, METRIC_GPU, (int)d, 0, nvml_metric_name(k),
						     nvml_metric_unit(k));
				if (k == GPU_ENERGY)
					m->energy_start[d] = v;
			}
			/* energy since sampling began: NVML counts from the driver's start */
			record_value(m, *series, now, k == GPU_ENERGY ? v - m->energy_start[d] : v);
		}
}

/* ---- the thread ---------------------------------------------------------------------------- */

static void sample(struct sampler *m)
{
	uint64_t now = clock_now_ns();
	if (m->o.host) {
		sample_cpus(m, now);
		sample_processes(m, now);
	}
	if (m->nvml)
		sample_gpus(m, now);
	flush(m);
}

static void *run(void *arg)
{
	struct sampler *m = arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		pthread_mutex_unlock(&m->lock);
		sample(m);
		pthread_mutex_lock(&m->lock);
		/* rounds on a fixed grid: a slow round does not shift the ones after it */
		next.tv_nsec += (long)(m->o.interval_ms % 1000) * 1000000;
		next.tv_sec += m->o.interval_ms / 1000 + next.tv_nsec / 1000000000;
		next.tv_nsec %= 1000000000;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
			next = now; /* too slow for the interval: the next round starts at once */
		while (!m->stop && pthread_cond_timedwait(&m->wake, &m->lock, &next) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&m->lock);
	sample(m); /* the last state, once the program has ended */
	return NULL;
}

/* Everything of a sampler but its spool, which the caller closes. */
static void sampler_free(struct sampler *m)
{
	nvml_close(m->nvml);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->wake);
	free(m->cpu_last);
	for (size_t i = 0; i < m->process_count; i++)
		free(m->processes[i].tasks);
	free(m->processes);
	strbuf_release(&m->chunk);
	free(m->path);
	free(m);
}

static struct sampler *sampler_start(const struct metrics_options *o, uint32_t first_series,
				     const char *spool_path, struct error *err)
{
	struct sampler *m = xcalloc(1, sizeof(*m));
	m->o = *o;
	m->next_series = first_series;
	m->path = xstrdup(spool_path);
	strbuf_init(&m->chunk);
	m->fd = open(spool_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (m->fd < 0 || spool_write_header(m->fd, err)) {
		if (m->fd < 0)
			error_set(err, "cannot create '%s': %s", spool_path, strerror(errno));
		else
			close(m->fd);
		free(m->path);
		free(m);
		return NULL;
	}
	m->ticks_per_second = sysconf(_SC_CLK_TCK);
	m->page_size = sysconf(_SC_PAGESIZE);
	if (o->host) {
		long configured = sysconf(_SC_NPROCESSORS_CONF);
		m->cpus = configured > 0 ? (int)configured : 1;
		m->cpu_last = xcalloc((size_t)m->cpus + 1, sizeof(*m->cpu_last));
		m->utilization_series = new_series(m, METRIC_HOST, -1, 0, "CPU utilization", "%");
		for (int i = 0; i < m->cpus; i++)
			new_series(m, METRIC_HOST, i, 0, "CPU utilization", "%");
		m->have_frequency = access("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
					   R_OK) == 0;
		if (m->have_frequency) {
			m->frequency_series = m->next_series + 1;
			for (int i = 0; i < m->cpus; i++)
				new_series(m, METRIC_HOST, i, 0, "CPU frequency", "MHz");
		} else {
			fprintf(stderr, "gpuprof: CPU frequency is not sampled: this system does not "
					"expose it (no /sys/devices/system/cpu/cpu0/cpufreq)\n");
		}
		m->memory_series = new_series(m, METRIC_HOST, -1, 0, "memory used", "bytes");
	}
	if (o->device) {
		struct strbuf why = STRBUF_INIT;
		m->nvml = nvml_open(&why);
		if (!m->nvml)
			fprintf(stderr, "gpuprof: GPU metrics are not sampled: %s\n", why.buf);
		strbuf_release(&why);
	}
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&m->wake, &attr);
	pthread_condattr_destroy(&attr);
	/* the program's signals are for gpuprof's main thread, which forwards them */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&m->thread, NULL, run, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		error_set(err, "cannot start a thread: %s", strerror(rc));
		close(m->fd);
		unlink(m->path);
		sampler_free(m);
		return NULL;
	}
	return m;
}

static int sampler_stop(struct sampler *m, struct error *err)
{
	pthread_mutex_lock(&m->lock);
	m->stop = 1;
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	int rc = 0;
	if (m->failed) {
		*err = m->err;
		rc = -1;
	}
	if (close(m->fd) < 0 && rc == 0)
		rc = error_set(err, "cannot write '%s': %s", m->path, strerror(errno));
	sampler_free(m);
	return rc;
}

/* Two samplers, each on a thread and into a file of its own: NVML can be slow (its PCIe
 * throughput waits 21 ms per direction and GPU on an H100), and the machine's series keep
 * their interval whatever the GPUs take. */
struct metrics {
	struct sampler *host, *gpu;
};

void metrics_file(struct strbuf *out, const char *base, int gpu)
{
	strbuf_reset(out);
	strbuf_addf(out, "%s.%s", base, gpu ? "gpu" : "host");
}

struct metrics *metrics_start(const struct metrics_options *o, const char *base,
			      struct error *err)
{
	struct metrics *m = xcalloc(1, sizeof(*m));
	struct strbuf path = STRBUF_INIT;
	if (o->host) {
		struct metrics_options host = *o;
		host.device = 0;
		metrics_file(&path, base, 0);
		m->host = sampler_start(&host, 0, path.buf, err);
	}
	if (o->device && (m->host || !o->host)) {
		struct metrics_options device = *o;
		device.host = 0;
		metrics_file(&path, base, 1);
		m->gpu = sampler_start(&device, METRICS_GPU_SERIES_FROM, path.buf, err);
	}
	strbuf_release(&path);
	if ((o->host && !m->host) || (o->device && !m->gpu)) {
		struct error ignored;
		if (m->host)
			sampler_stop(m->host, &ignored);
		metrics_remove(base);
		free(m);
		return NULL;
	}
	return m;
}

int metrics_stop(struct metrics *m, struct error *err)
{
	int rc = 0;
	struct error gpu_err;
	if (m->host)
		rc = sampler_stop(m->host, err);
	if (m->gpu && sampler_stop(m->gpu, &gpu_err) && rc == 0) {
		*err = gpu_err;
		rc = -1;
	}
	free(m);
	return rc;
}

void metrics_remove(const char *base)
{
	struct strbuf path = STRBUF_INIT;
	for (int gpu = 0; gpu < 2; gpu++) {
		metrics_file(&path, base, gpu);
		unlink(path.buf);
	}
	strbuf_release(&path);
}

void metrics_describe(struct strbuf *out)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	strbuf_addf(out, "host metrics: per-CPU utilization (%ld CPUs, /proc/stat), memory used "
			 "(/proc/meminfo), per process CPU, RSS, virtual memory, threads, page "
			 "faults, context switches, bytes read and written (/proc/PID)\n", cpus);
	if (access("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", R_OK) == 0)
		strbuf_addstr(out, "host metrics: CPU frequency (/sys/devices/system/cpu/*/cpufreq)\n");
	else
		strbuf_addstr(out, "host metrics: no CPU frequency: this system does not expose it "
				   "(no /sys/devices/system/cpu/cpu0/cpufreq)\n");
	struct strbuf why = STRBUF_INIT;
	struct nvml *n = nvml_open(&why);
	if (!n) {
		strbuf_addf(out, "device metrics: none: %s\n", why.buf);
	} else {
		for (unsigned d = 0; d < nvml_device_count(n); d++) {
			strbuf_addf(out, "device metrics: GPU %u %s:", d, nvml_device_name(n, d));
			for (int k = 0; k < GPU_METRIC_COUNT; k++) {
				double v;
				int rc = nvml_read(n, d, (enum gpu_metric)k, &v);
				strbuf_addf(out, "%s %s%s", k ? "," : "", nvml_metric_name(k),
					    rc > 0 ? " (not supported)" : "");
			}
			strbuf_addch(out, '\n');
		}
		nvml_close(n);
	}
	strbuf_release(&why);
}
