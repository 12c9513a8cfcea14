/* PC sampling on CUDA devices (see pc-sampling.h).
 *
 * CUPTI samples one context per device. Each context is enabled when it is created (on
 * the thread that creates it, in CUPTI's resource callback) with every stall reason, the
 * configured period and continuous collection, and a buffer of our own that CUPTI fills
 * by itself when a module is unloaded and when sampling is disabled. The recorder's
 * writer thread asks CUPTI for what it has gathered at every flush
 * (cuptiPCSamplingGetData, which never waits for the device), with the sampled context
 * made current on it first, as CUPTI's own samples do: CUPTI's PC sampling calls act
 * where the context is current. Everything CUPTI hands over
 * is copied at once into a queue of pending buffers, under the context's lock, and
 * translated from the queue on the writer thread: a context destroyed on the program's
 * thread, or a module loaded there, only copies. The modules' binaries are kept, by
 * their CRC, when they carry line information, for the source line of each sampled
 * instruction; a module without it is not kept (PyTorch's libraries hold gigabytes of
 * code without lines) and its samples have no line. */
#include "pc-sampling.h"

#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/recorder.h"

#define MAX_CONTEXTS 1024            /* over the process's life: each is kept */
#define BUFFER_PCS 8192               /* instructions per buffer handed to CUPTI */
#define KEPT_MODULE_BYTES (256u << 20) /* the modules kept for their lines, at most */

static struct {
	int asked;
	uint32_t period_log2; /* 0: CUPTI's default */
	double time_us;       /* > 0: the period from a time at the device's clock */
} config;

struct sampled_context {
	CUcontext context;
	uint32_t device;
	uint32_t period_log2;
	int enabled;
	pthread_mutex_t lock;
	CUpti_PCSamplingData fetched;    /* cuptiPCSamplingGetData's */
	CUpti_PCSamplingData configured; /* CUPTI's own flushes (unload, disable) */
	struct translate_stall_reasons reasons;
	struct totals {                  /* of buffers handed over while more remained */
		uint64_t samples, dropped, other;
	} held;
};

/* A buffer of sampling data copied out of CUPTI's hands, waiting for translation. */
struct pending {
	struct pending *next;
	CUpti_PCSamplingData data; /* its arrays follow in the same allocation */
	uint32_t device, period_log2;
	const struct translate_stall_reasons *reasons; /* the context's: kept for ever */
	struct translate_pc_cursor cursor;
};

static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sampled_context *contexts[MAX_CONTEXTS];
static int context_count;

static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending *pending_head, **pending_tail = &pending_head;

struct module {
	uint64_t crc;
	const void *cubin;
	size_t size;
};

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module *modules;
static size_t module_count, module_capacity, module_bytes;

/* ---- configuration ------------------------------------------------------------------------ */

int pc_sampling_configure(void)
{
	const char *text = getenv("GPUPROF_PC_SAMPLING");
	if (!text || !*text)
		return 0;
	char *end;
	if (!strncmp(text, "period=", 7)) {
		unsigned long period = strtoul(text + 7, &end, 10);
		if (!*end && end != text + 7 && (period == 0 || (period >= 5 && period <= 31))) {
			config.period_log2 = (uint32_t)period;
			return config.asked = 1;
		}
	} else if (!strncmp(text, "time=", 5)) {
		double us = strtod(text + 5, &end);
		if (!*end && end != text + 5 && us > 0) {
			config.time_us = us;
			return config.asked = 1;
		}
	}
	recorder_report("GPUPROF_PC_SAMPLING='%s' is not period=5..31 or time=MICROSECONDS: "
			"no PC sampling", text);
	return 0;
}

/* ---- CUPTI's buffers ------------------------------------------------------------------------ */

static int allocate_buffer(CUpti_PCSamplingData *d, size_t reasons)
{
	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	d->collectNumPcs = BUFFER_PCS;
	d->pPcData = calloc(BUFFER_PCS, sizeof(*d->pPcData));
	CUpti_PCSamplingStallReason *all = calloc(BUFFER_PCS * (reasons ? reasons : 1),
						  sizeof(*all));
	if (!d->pPcData || !all) {
		free(d->pPcData);
		free(all);
		return -1;
	}
	for (size_t i = 0; i < BUFFER_PCS; i++) {
		d->pPcData[i].size = sizeof(d->pPcData[i]);
		d->pPcData[i].stallReason = all + i * reasons;
	}
	return 0;
}

/* d read: nothing in it is taken again (CUPTI's next fill sets what it fills). */
static void empty(CUpti_PCSamplingData *d)
{
	d->totalNumPcs = 0;
	d->totalSamples = d->droppedSamples = d->nonUsrKernelsTotalSamples = 0;
	d->hardwareBufferFull = 0;
}

/* Copies the data of d into the pending queue (one allocation), and empties d. The
 * function names stay CUPTI's: it keeps one per function for the process's life. */
static void queue_copy(CUpti_PCSamplingData *d, const struct sampled_context *c)
{
	if (!d->totalNumPcs && !d->totalSamples && !d->droppedSamples)
		return;
	size_t reasons = 0;
	for (size_t i = 0; i < d->totalNumPcs; i++)
		reasons += d->pPcData[i].stallReasonCount;
	struct pending *p = malloc(sizeof(*p) + d->totalNumPcs * sizeof(CUpti_PCSamplingPCData) +
				   reasons * sizeof(CUpti_PCSamplingStallReason));
	if (!p) { /* no memory: counted as lost, never taken twice */
		recorder_count_dropped(DROPPED_BY_TRACER, d->totalNumPcs);
		empty(d);
		return;
	}
	memset(p, 0, sizeof(*p));
	p->data = *d;
	p->data.pPcData = (CUpti_PCSamplingPCData *)(p + 1);
	CUpti_PCSamplingStallReason *r = (CUpti_PCSamplingStallReason *)(p->data.pPcData +
									   d->totalNumPcs);
	for (size_t i = 0; i < d->totalNumPcs; i++) {
		p->data.pPcData[i] = d->pPcData[i];
		p->data.pPcData[i].stallReason = r;
		memcpy(r, d->pPcData[i].stallReason,
		       d->pPcData[i].stallReasonCount * sizeof(*r));
		r += d->pPcData[i].stallReasonCount;
	}
	p->device = c->device;
	p->period_log2 = c->period_log2;
	p->reasons = &c->reasons;
	pthread_mutex_lock(&pending_lock);
	*pending_tail = p;
	pending_tail = &p->next;
	pthread_mutex_unlock(&pending_lock);
	empty(d);
}

/* The driver's context calls, found at run time (the library loads whatever the
 * driver's version); NULL where the driver has none. */
static struct {
	CUresult (*get)(CUcontext *context);
	CUresult (*push)(CUcontext context);
	CUresult (*pop)(CUcontext *context);
	int (*attribute)(int *value, int attribute, int device);
} driver;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

static void find_driver(void)
{
	void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); /* kept: it is loaded */
	if (!library)
		return;
	*(void **)&driver.get = dlsym(library, "cuCtxGetCurrent");
	*(void **)&driver.push = dlsym(library, "cuCtxPushCurrent_v2");
	*(void **)&driver.pop = dlsym(library, "cuCtxPopCurrent_v2");
	*(void **)&driver.attribute = dlsym(library, "cuDeviceGetAttribute");
}

/* Makes context current on the calling thread (the writer's has none) for CUPTI's calls;
 * returns 1 when it pushed it, to be popped by leave_context(). */
static int enter_context(CUcontext context)
{
	pthread_once(&driver_once, find_driver);
	CUcontext current = NULL;
	if (!driver.get || !driver.push || !driver.pop ||
	    (driver.get(&current) == CUDA_SUCCESS && current == context))
		return 0;
	return driver.push(context) == CUDA_SUCCESS;
}

static void leave_context(int pushed)
{
	CUcontext popped;
	if (pushed)
		driver.pop(&popped);
}

/* CUPTI hands a range's instructions over in several buffers when they outnumber one
 * (remainingNumPcs > 0 after a call), and its documentation does not say whether each
 * buffer repeats the range's totals or holds them once. So the totals of such a run of
 * buffers are counted once whichever it does: the largest of each, given with the run's
 * last buffer, the others' set to 0. */
static void count_totals_once(struct totals *held, CUpti_PCSamplingData *d, int more)
{
	held->samples = d->totalSamples > held->samples ? d->totalSamples : held->samples;
	held->dropped = d->droppedSamples > held->dropped ? d->droppedSamples : held->dropped;
	held->other = d->nonUsrKernelsTotalSamples > held->other ? d->nonUsrKernelsTotalSamples
								 : held->other;
	if (more) {
		d->totalSamples = d->droppedSamples = d->nonUsrKernelsTotalSamples = 0;
		return;
	}
	d->totalSamples = held->samples;
	d->droppedSamples = held->dropped;
	d->nonUsrKernelsTotalSamples = held->other;
	*held = (struct totals){ 0, 0, 0 };
}

static void report_once(const char *what, CUptiResult rc)
{
	static _Atomic int reported;
	if (atomic_exchange(&reported, 1))
		return;
	const char *message = NULL;
	cuptiGetResultString(rc, &message);
	recorder_report("PC sampling: %s: %s", what, message ? message : "CUPTI error");
}

/* Asks CUPTI for what it gathered in c until it has no more (or only once, unless all),
 * copying each buffer into the queue. Under c->lock. */
static void fetch(struct sampled_context *c, int all)
{
	int pushed = enter_context(c->context);
	for (int round = 0; round < 1024; round++) {
		CUpti_PCSamplingGetDataParams params = {
			.size = CUpti_PCSamplingGetDataParamsSize,
			.ctx = c->context,
			.pcSamplingData = &c->fetched,
		};
		CUptiResult rc = cuptiPCSamplingGetData(&params);
		int more = c->fetched.remainingNumPcs > 0;
		if (rc != CUPTI_SUCCESS && !c->fetched.hardwareBufferFull) {
			report_once("cannot read the samples", rc);
			break;
		}
		if (c->fetched.hardwareBufferFull) {
			static _Atomic int reported;
			if (!atomic_exchange(&reported, 1))
				recorder_report("PC sampling: the device's sample buffer filled up: "
						"samples were lost (a longer --pc-sampling-interval "
						"samples less often)");
		}
		count_totals_once(&c->held, &c->fetched, more);
		queue_copy(&c->fetched, c);
		if (!all || !more)
			break;
	}
	leave_context(pushed);
}

/* Ends sampling of c: what CUPTI holds, then what it flushes into its configured buffer
 * as it is disabled, go to the queue. Under c->lock. */
static void disable(struct sampled_context *c)
{
	if (!c->enabled)
		return;
	fetch(c, 1);
	CUpti_PCSamplingDisableParams params = {
		.size = CUpti_PCSamplingDisableParamsSize,
		.ctx = c->context,
	};
	int pushed = enter_context(c->context);
	cuptiPCSamplingDisable(&params);
	leave_context(pushed);
	/* totals held for a run of buffers that an error cut short go with CUPTI's last */
	c->configured.totalSamples += c->held.samples;
	c->configured.droppedSamples += c->held.dropped;
	c->configured.nonUsrKernelsTotalSamples += c->held.other;
	c->held = (struct totals){ 0, 0, 0 };
	queue_copy(&c->configured, c);
	c->enabled = 0;
}

/* ---- contexts ------------------------------------------------------------------------------ */

static int device_clock_khz(uint32_t device)
{
	pthread_once(&driver_once, find_driver);
	int khz = 0;
	if (!driver.attribute || driver.attribute(&khz, 13 /* CU_DEVICE_ATTRIBUTE_CLOCK_RATE */,
						  (int)device) != 0)
		khz = 0;
	return khz;
}

static int read_stall_reasons(struct sampled_context *c)
{
	size_t count = 0;
	CUpti_PCSamplingGetNumStallReasonsParams number = {
		.size = CUpti_PCSamplingGetNumStallReasonsParamsSize,
		.ctx = c->context,
		.numStallReasons = &count,
	};
	CUptiResult rc = cuptiPCSamplingGetNumStallReasons(&number);
	if (rc != CUPTI_SUCCESS) {
		report_once("cannot list the stall reasons", rc);
		return -1;
	}
	uint32_t *index = calloc(count ? count : 1, sizeof(*index));
	char **names = calloc(count ? count : 1, sizeof(*names));
	int ok = index && names;
	for (size_t i = 0; ok && i < count; i++)
		ok = (names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE)) != NULL;
	CUpti_PCSamplingGetStallReasonsParams list = {
		.size = CUpti_PCSamplingGetStallReasonsParamsSize,
		.ctx = c->context,
		.numStallReasons = count,
		.stallReasonIndex = index,
		.stallReasons = names,
	};
	if (ok && (rc = cuptiPCSamplingGetStallReasons(&list)) != CUPTI_SUCCESS) {
		report_once("cannot list the stall reasons", rc);
		ok = 0;
	}
	if (!ok) {
		for (size_t i = 0; names && i < count; i++)
			free(names[i]);
		free(names);
		free(index);
		return -1;
	}
	c->reasons = (struct translate_stall_reasons){ count, index, names };
	return 0;
}

static int configure_context(struct sampled_context *c)
{
	CUpti_PCSamplingConfigurationInfo info[4];
	memset(info, 0, sizeof(info));
	int n = 0;
	info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
	info[n].attributeData.stallReasonData.stallReasonCount = c->reasons.count;
	info[n++].attributeData.stallReasonData.pStallReasonIndex = (uint32_t *)c->reasons.index;
	info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	info[n++].attributeData.samplingDataBufferData.samplingDataBuffer = &c->configured;
	info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	info[n++].attributeData.collectionModeData.collectionMode =
		CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
	if (c->period_log2) {
		info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
		info[n++].attributeData.samplingPeriodData.samplingPeriod = c->period_log2;
	}
	CUpti_PCSamplingConfigurationInfoParams params = {
		.size = CUpti_PCSamplingConfigurationInfoParamsSize,
		.ctx = c->context,
		.numAttributes = (size_t)n,
		.pPCSamplingConfigurationInfo = info,
	};
	CUptiResult rc = cuptiPCSamplingSetConfigurationAttribute(&params);
	if (rc != CUPTI_SUCCESS) {
		report_once("cannot configure sampling", rc);
		return -1;
	}
	if (!c->period_log2) { /* CUPTI's default: read back for the records */
		CUpti_PCSamplingConfigurationInfo period;
		memset(&period, 0, sizeof(period));
		period.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
		params.numAttributes = 1;
		params.pPCSamplingConfigurationInfo = &period;
		if (cuptiPCSamplingGetConfigurationAttribute(&params) == CUPTI_SUCCESS)
			c->period_log2 = period.attributeData.samplingPeriodData.samplingPeriod;
	}
	return 0;
}

static void release_buffer(CUpti_PCSamplingData *d)
{
	if (d->pPcData)
		free(d->pPcData[0].stallReason); /* one allocation for all */
	free(d->pPcData);
}

static void release_context(struct sampled_context *c)
{
	release_buffer(&c->fetched);
	release_buffer(&c->configured);
	for (size_t i = 0; i < c->reasons.count; i++)
		free(c->reasons.name[i]);
	free((void *)(uintptr_t)c->reasons.name);
	free((void *)(uintptr_t)c->reasons.index);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static void context_created(CUcontext context)
{
	struct sampled_context *c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->context = context;
	pthread_mutex_init(&c->lock, NULL);
	if (cuptiGetDeviceId(context, &c->device) != CUPTI_SUCCESS)
		c->device = 0;
	c->period_log2 = config.period_log2;
	if (config.time_us > 0) {
		int khz = device_clock_khz(c->device);
		c->period_log2 = khz > 0 ? translator_pc_period(config.time_us, khz) : 0;
	}
	CUpti_PCSamplingEnableParams enable = {
		.size = CUpti_PCSamplingEnableParamsSize,
		.ctx = context,
	};
	CUptiResult rc = cuptiPCSamplingEnable(&enable);
	if (rc != CUPTI_SUCCESS) {
		/* CUPTI samples one context per device: a second one is refused */
		recorder_report("PC sampling: a context on CUDA device %u is not sampled: %s",
				c->device, rc == CUPTI_ERROR_NOT_SUPPORTED ? "the device does not "
				"support it (compute capability 7.0 and later do)"
				: "CUPTI samples one context per device, or is in use");
		release_context(c);
		return;
	}
	c->enabled = 1;
	if (read_stall_reasons(c) || allocate_buffer(&c->fetched, c->reasons.count) ||
	    allocate_buffer(&c->configured, c->reasons.count) || configure_context(c)) {
		CUpti_PCSamplingDisableParams off = {
			.size = CUpti_PCSamplingDisableParamsSize,
			.ctx = context,
		};
		cuptiPCSamplingDisable(&off);
		release_context(c);
		return;
	}
	pthread_mutex_lock(&contexts_lock);
	int kept = context_count < MAX_CONTEXTS;
	if (kept)
		contexts[context_count++] = c;
	pthread_mutex_unlock(&contexts_lock);
	if (!kept) { /* its samples could never be read: not sampled, and said */
		CUpti_PCSamplingDisableParams off = {
			.size = CUpti_PCSamplingDisableParamsSize,
			.ctx = context,
		};
		cuptiPCSamplingDisable(&off);
		recorder_report("PC sampling: more than %d CUDA contexts in this process: the "
				"later ones are not sampled", MAX_CONTEXTS);
		release_context(c);
	}
}

static struct sampled_context *find_context(CUcontext context)
{
	struct sampled_context *found = NULL;
	pthread_mutex_lock(&contexts_lock);
	for (int i = 0; i < context_count && !found; i++)
		if (contexts[i]->context == context && contexts[i]->enabled)
			found = contexts[i];
	pthread_mutex_unlock(&contexts_lock);
	return found;
}

/* ---- modules --------------------------------------------------------------------------- */

/* Whether an ELF image (a cubin) has line information: a section named .debug_line or
 * .nv_debug_line_sass (nvcc -lineinfo or -G). */
static int has_lines(const unsigned char *elf, size_t size)
{
	if (size < sizeof(Elf64_Ehdr) || memcmp(elf, ELFMAG, SELFMAG) || elf[EI_CLASS] != ELFCLASS64)
		return 0;
	const Elf64_Ehdr *e = (const void *)elf;
	if (e->e_shoff > size || e->e_shentsize != sizeof(Elf64_Shdr) ||
	    e->e_shnum > (size - e->e_shoff) / sizeof(Elf64_Shdr) || e->e_shstrndx >= e->e_shnum)
		return 0;
	const Elf64_Shdr *sections = (const void *)(elf + e->e_shoff);
	const Elf64_Shdr *names = &sections[e->e_shstrndx];
	if (names->sh_offset > size || names->sh_size > size - names->sh_offset)
		return 0;
	const char *strings = (const char *)elf + names->sh_offset;
	for (unsigned i = 0; i < e->e_shnum; i++) {
		uint32_t at = sections[i].sh_name;
		if (at >= names->sh_size)
			continue;
		const char *name = strings + at;
		size_t room = names->sh_size - at;
		if (!strncmp(name, ".debug_line", room < 12 ? room : 12) ||
		    !strncmp(name, ".nv_debug_line_sass", room < 20 ? room : 20))
			return 1;
	}
	return 0;
}

static void module_loaded(const CUpti_ModuleResourceData *m)
{
	if (!m || !m->pCubin || !has_lines((const unsigned char *)m->pCubin, m->cubinSize))
		return;
	CUpti_GetCubinCrcParams crc = {
		.size = CUpti_GetCubinCrcParamsSize,
		.cubinSize = m->cubinSize,
		.cubin = m->pCubin,
	};
	if (cuptiGetCubinCrc(&crc) != CUPTI_SUCCESS)
		return;
	pthread_mutex_lock(&modules_lock);
	int known = 0;
	for (size_t i = 0; i < module_count && !known; i++)
		known = modules[i].crc == crc.cubinCrc;
	if (!known && module_bytes + m->cubinSize > KEPT_MODULE_BYTES) {
		static int reported;
		if (!reported++)
			recorder_report("PC sampling: more than %u MiB of modules with line "
					"information: the samples of later ones have no source "
					"line", KEPT_MODULE_BYTES >> 20);
	} else if (!known) {
		if (module_count == module_capacity) {
			size_t capacity = module_capacity ? module_capacity * 2 : 16;
			struct module *grown = realloc(modules, capacity * sizeof(*grown));
			if (grown) {
				modules = grown;
				module_capacity = capacity;
			}
		}
		void *copy = module_count < module_capacity ? malloc(m->cubinSize) : NULL;
		if (copy) {
			memcpy(copy, m->pCubin, m->cubinSize);
			modules[module_count++] = (struct module){ crc.cubinCrc, copy, m->cubinSize };
			module_bytes += m->cubinSize;
		}
	}
	pthread_mutex_unlock(&modules_lock);
}

void pc_sampling_source_line(void *ctx, uint64_t cubin_crc, const char *function,
			     uint64_t pc_offset, uint32_t *file_id, uint32_t *line)
{
	/* the last answers, by instruction: each is asked for at every fetch */
	enum { CACHE = 4096 };
	static struct {
		uint64_t crc, pc;
		const char *function;
		uint32_t file_id, line;
	} cache[CACHE];
	size_t slot = (size_t)((cubin_crc * 31 + pc_offset) ^ (uintptr_t)function) % CACHE;
	if (cache[slot].function == function && cache[slot].crc == cubin_crc &&
	    cache[slot].pc == pc_offset) {
		*file_id = cache[slot].file_id;
		*line = cache[slot].line;
		return;
	}
	*file_id = *line = 0;
	pthread_mutex_lock(&modules_lock);
	for (size_t i = 0; i < module_count; i++) {
		if (modules[i].crc != cubin_crc)
			continue;
		CUpti_GetSassToSourceCorrelationParams p = {
			.size = CUpti_GetSassToSourceCorrelationParamsSize,
			.cubin = modules[i].cubin,
			.cubinSize = modules[i].size,
			.functionName = function,
			.pcOffset = pc_offset,
		};
		if (cuptiGetSassToSourceCorrelation(&p) == CUPTI_SUCCESS) {
			char path[4096];
			const char *dir = p.dirName ? p.dirName : "", *file = p.fileName ? p.fileName : "";
			snprintf(path, sizeof(path), "%s%s%s", file[0] == '/' ? "" : dir,
				 file[0] == '/' || !dir[0] ? "" : "/", file);
			if (file[0]) {
				*file_id = recorder_intern(path);
				*line = p.lineNumber;
			}
			free(p.fileName);
			free(p.dirName);
		}
		break;
	}
	pthread_mutex_unlock(&modules_lock);
	cache[slot].crc = cubin_crc;
	cache[slot].pc = pc_offset;
	cache[slot].function = function;
	cache[slot].file_id = *file_id;
	cache[slot].line = *line;
}

/* ---- callbacks and collection ------------------------------------------------------------ */

void pc_sampling_resource(CUpti_CallbackId cbid, const void *data)
{
	const CUpti_ResourceData *r = data;
	struct sampled_context *c;
	switch (cbid) {
	case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
		context_created(r->context);
		break;
	case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
		if ((c = find_context(r->context))) {
			pthread_mutex_lock(&c->lock);
			disable(c);
			pthread_mutex_unlock(&c->lock);
		}
		break;
	case CUPTI_CBID_RESOURCE_MODULE_LOADED:
		module_loaded(r->resourceDescriptor);
		/* CUPTI flushes the samples of an unloaded module into the configured
		 * buffer when the next one loads */
		__attribute__((fallthrough));
	case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
		if ((c = find_context(r->context))) {
			pthread_mutex_lock(&c->lock);
			queue_copy(&c->configured, c);
			pthread_mutex_unlock(&c->lock);
		}
		break;
	default:
		break;
	}
}

void pc_sampling_after_fork(void)
{
	/* the parent's contexts and samples: the parent writes them */
	context_count = 0;
	pending_head = NULL;
	pending_tail = &pending_head;
	pthread_mutex_init(&contexts_lock, NULL);
	pthread_mutex_init(&pending_lock, NULL);
	pthread_mutex_init(&modules_lock, NULL);
}

int pc_sampling_collect(struct translator *t, int final)
{
	if (!config.asked)
		return 0;
	pthread_mutex_lock(&contexts_lock);
	int n = context_count; /* entries are only added, never moved */
	pthread_mutex_unlock(&contexts_lock);
	struct sampled_context **all = contexts;
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&all[i]->lock);
		if (all[i]->enabled) {
			if (final)
				disable(all[i]);
			else
				fetch(all[i], 0);
		}
		pthread_mutex_unlock(&all[i]->lock);
	}
	for (;;) {
		pthread_mutex_lock(&pending_lock);
		struct pending *p = pending_head;
		pthread_mutex_unlock(&pending_lock);
		if (!p)
			return 0;
		if (translator_pc_samples(t, &p->data, p->device, p->period_log2, p->reasons,
					  &p->cursor) < 0)
			return 1; /* resumes at the cursor */
		pthread_mutex_lock(&pending_lock);
		if (!(pending_head = p->next))
			pending_tail = &pending_head;
		pthread_mutex_unlock(&pending_lock);
		free(p);
	}
}
