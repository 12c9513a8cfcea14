/* The recorder's collection control (recorder.h): pause and resume, the periods of
 * GPUPROF_COLLECTION_PERIOD on a thread of their own, and the history of the state that
 * recorder_collected_at() reads. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "runtime/recorder-internal.h"
#include "runtime/recorder.h"

_Atomic uint32_t recorder_period_tid;

/* ---- collection control ------------------------------------------------------------- */

#define TRANSITIONS 4096 /* changes of the collection state remembered for _collected_at */

static _Atomic int paused, period_off;
static _Atomic int collecting = 1;
static pthread_mutex_t transition_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t ns;
	int on;
} transitions[TRANSITIONS];
static _Atomic uint32_t transition_count;

static void update_collecting(void)
{
	pthread_mutex_lock(&transition_lock);
	int on = !atomic_load(&paused) && !atomic_load(&period_off);
	uint32_t n = atomic_load(&transition_count);
	if (on != atomic_load(&collecting) || n == 0) {
		atomic_store(&collecting, on);
		if (n < TRANSITIONS) {
			transitions[n].ns = clock_now_ns();
			transitions[n].on = on;
			atomic_store_explicit(&transition_count, n + 1, memory_order_release);
		} else { /* the history is full: the latest state stands for every later time */
			transitions[n - 1].on = on;
		}
	}
	pthread_mutex_unlock(&transition_lock);
}

void recorder_pause(void)
{
	atomic_store(&paused, 1);
	update_collecting();
}

void recorder_resume(void)
{
	atomic_store(&paused, 0);
	update_collecting();
}

int recorder_collecting(void)
{
	return atomic_load_explicit(&collecting, memory_order_relaxed);
}

int recorder_collected_at(uint64_t ns)
{
	uint32_t n = atomic_load_explicit(&transition_count, memory_order_acquire);
	uint32_t lo = 0, hi = n; /* the last transition at or before ns */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (transitions[mid].ns <= ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? transitions[lo - 1].on : n ? transitions[0].on : 1;
}

uint64_t recorder_process_start_ns(void)
{
	char stat[1024];
	int fd = recorder_open_private("/proc/self/stat", O_RDONLY, 0);
	ssize_t n = fd >= 0 ? read(fd, stat, sizeof(stat) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0)
		stat[n] = '\0';
	return clock_process_start_ns(n > 0 ? stat : NULL, clock_now_ns());
}

struct period {
	uint64_t delay, duration, repeat; /* ns, ns, count (0: for ever) */
};

static struct period periods[64];
static int period_count;

static void sleep_until(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

static void *period_main(void *arg)
{
	uint64_t at = *(uint64_t *)arg;
	free(arg);
	atomic_store(&recorder_period_tid, (uint32_t)syscall(SYS_gettid));
	pthread_setname_np(pthread_self(), RECORDER_THREAD_PREFIX "period");
	for (int i = 0; i < period_count; i++) {
		for (uint64_t r = 0; periods[i].repeat == 0 || r < periods[i].repeat; r++) {
			at += periods[i].delay;
			sleep_until(at);
			atomic_store(&period_off, 0);
			update_collecting();
			at += periods[i].duration;
			sleep_until(at);
			atomic_store(&period_off, 1);
			update_collecting();
		}
	}
	return NULL;
}

/* ---- capture ranges (--nvtx-capture) ------------------------------------------------ */

static char capture_name[1024];  /* "" when none */
static char capture_domain[256]; /* its domain's name; "" the default domain */
static int capture_any_domain;
static _Atomic uint32_t capture_domain_id; /* its string id, once interned; 0: default */
static _Atomic int capture_domain_known;
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static int captures_open;

static void capture_configure(const char *spec)
{
	capture_name[0] = capture_domain[0] = '\0';
	capture_any_domain = 0;
	atomic_store(&capture_domain_known, 0);
	captures_open = 0;
	if (!spec || !*spec)
		return;
	const char *at = strrchr(spec, '@');
	size_t name_length = at ? (size_t)(at - spec) : strlen(spec);
	if (name_length >= sizeof(capture_name))
		name_length = sizeof(capture_name) - 1;
	memcpy(capture_name, spec, name_length);
	capture_name[name_length] = '\0';
	if (at && !strcmp(at + 1, "*"))
		capture_any_domain = 1;
	else if (at)
		snprintf(capture_domain, sizeof(capture_domain), "%s", at + 1);
}

int recorder_capture_begin(const char *text, uint32_t domain_id)
{
	if (!capture_name[0] || !text || strcmp(text, capture_name))
		return 0;
	if (!capture_any_domain) {
		if (!atomic_load(&capture_domain_known)) {
			atomic_store(&capture_domain_id,
				     capture_domain[0] ? recorder_intern(capture_domain) : 0);
			atomic_store(&capture_domain_known, 1);
		}
		if (domain_id != atomic_load(&capture_domain_id))
			return 0;
	}
	pthread_mutex_lock(&capture_lock);
	if (captures_open++ == 0)
		recorder_resume();
	pthread_mutex_unlock(&capture_lock);
	return 1;
}

void recorder_capture_end(void)
{
	pthread_mutex_lock(&capture_lock);
	if (captures_open > 0 && --captures_open == 0)
		recorder_pause();
	pthread_mutex_unlock(&capture_lock);
}

/* GPUPROF_COLLECTION_PERIOD: "DELAY:DURATION:REPEAT" triples in ns, ';'-separated, as
 * `gpuprof trace` wrote them (it checked the syntax). */
void recorder_control_start(void)
{
	const char *selected = getenv("GPUPROF_SELECTED_REGIONS");
	const char *spec = getenv("GPUPROF_COLLECTION_PERIOD");
	const char *capture = getenv("GPUPROF_CAPTURE_RANGE");
	capture_configure(capture);
	atomic_store(&paused, (selected && !strcmp(selected, "1")) || capture_name[0]);
	period_count = 0;
	for (const char *p = spec; p && *p && period_count < 64;) {
		unsigned long long d, l, r;
		int used = 0;
		if (sscanf(p, "%llu:%llu:%llu%n", &d, &l, &r, &used) != 3)
			break;
		periods[period_count++] = (struct period){ d, l, r };
		p += used;
		p += *p == ';';
	}
	atomic_store(&period_off, period_count > 0);
	atomic_store(&transition_count, 0);
	update_collecting();
	if (!period_count)
		return;
	pthread_t thread;
	pthread_attr_t attr;
	uint64_t *origin = malloc(sizeof(*origin));
	if (!origin)
		return;
	*origin = recorder_process_start_ns(); /* collection periods count from it */
	pthread_attr_init(&attr);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&thread, &attr, period_main, origin)) {
		free(origin);
		recorder_report("cannot start the collection period thread: nothing is collected");
	} else { /* named at once, as the ticker is (sampler.c) */
		pthread_setname_np(thread, RECORDER_THREAD_PREFIX "period");
		pthread_detach(thread);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}
