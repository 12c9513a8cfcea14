/* libgpuprof-nvtx.so: receives NVTX calls (what PyTorch's torch.cuda.nvtx, emit_nvtx and
 * NCCL emit) and records them as markers. NVTX v3 is header-only: each library that
 * uses it loads the library named in NVTX_INJECTION64_PATH on its first NVTX call and
 * calls InitializeInjectionNvtx2, which fills NVTX's function slots with the handlers
 * below. No CUPTI is involved, so this works without a GPU and beside other CUDA tools.
 *
 * NVTX domains: each domain's push/pop ranges are a stack of their own, as the NVTX
 * specification has it (a pop closes its domain's innermost range, though another
 * domain's range opened after it may still be open); the domain's name is kept with each
 * marker. GPUPROF_NVTX_DOMAIN_INCLUDE or GPUPROF_NVTX_DOMAIN_EXCLUDE (gpuprof trace
 * --nvtx-domain-include/-exclude: comma-separated names, "default" for the default
 * domain, "\," a comma in a name) choose the domains recorded; the calls of the others
 * return at once. Category names, resource naming and synchronisation callbacks are not
 * recorded. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "runtime/recorder.h"
#include "util/strbuf.h"

#define EXPORT __attribute__((visibility("default")))

/* Domain and registered-string handles are ours: a domain is its interned name's id,
 * a registered string a copy of its text. Both live as long as the process. */
struct domain {
	uint32_t name_id;
	int recorded; /* by the domain filter */
};

/* ---- the domain filter ---- */

static pthread_once_t filter_once = PTHREAD_ONCE_INIT;
static const char *filter_list; /* the variable's value; NULL: every domain */
static int filter_includes;     /* 1: filter_list names the domains recorded */
static int default_recorded = 1;

/* Whether name (NULL: the default domain) is in the comma-separated list. */
static int listed(const char *list, const char *name)
{
	const char *want = name ? name : "default";
	while (*list) {
		const char *w = want;
		int match = 1;
		for (; *list && *list != ','; list++) {
			if (*list == '\\' && list[1])
				list++;
			match = match && *w == *list;
			if (*w)
				w++;
		}
		if (match && !*w)
			return 1;
		if (*list)
			list++;
	}
	return 0;
}

static void filter_read(void)
{
	const char *include = getenv("GPUPROF_NVTX_DOMAIN_INCLUDE");
	const char *exclude = getenv("GPUPROF_NVTX_DOMAIN_EXCLUDE");
	if (include && *include) {
		filter_list = include;
		filter_includes = 1;
	} else if (exclude && *exclude) {
		filter_list = exclude;
	}
	default_recorded = !filter_list || listed(filter_list, NULL) == filter_includes;
}

static int domain_recorded(const char *name)
{
	pthread_once(&filter_once, filter_read);
	return !filter_list || listed(filter_list, name) == filter_includes;
}

/* Ranges of domains not recorded, open on this thread: what their pushes return. */
static __thread int unrecorded_depth;

static void utf8_from_wide(const wchar_t *w, struct strbuf *out)
{
	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			c = 0xfffd;
		if (c < 0x80) {
			strbuf_addch(out, (char)c);
		} else if (c < 0x800) {
			strbuf_addch(out, (char)(0xc0 | c >> 6));
			strbuf_addch(out, (char)(0x80 | (c & 0x3f)));
		} else if (c < 0x10000) {
			strbuf_addch(out, (char)(0xe0 | c >> 12));
			strbuf_addch(out, (char)(0x80 | ((c >> 6) & 0x3f)));
			strbuf_addch(out, (char)(0x80 | (c & 0x3f)));
		} else {
			strbuf_addch(out, (char)(0xf0 | c >> 18));
			strbuf_addch(out, (char)(0x80 | ((c >> 12) & 0x3f)));
			strbuf_addch(out, (char)(0x80 | ((c >> 6) & 0x3f)));
			strbuf_addch(out, (char)(0x80 | (c & 0x3f)));
		}
	}
}

/* The message of an event's attributes, as UTF-8 (`wide` holds a converted one). */
static const char *message_of(const nvtxEventAttributes_t *a, struct strbuf *wide)
{
	if (!a)
		return "";
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return a->message.ascii ? a->message.ascii : "";
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return a->message.registered ? (const char *)a->message.registered : "";
	case NVTX_MESSAGE_TYPE_UNICODE:
		utf8_from_wide(a->message.unicode, wide);
		return wide->buf;
	}
	return "";
}

static uint32_t domain_id(nvtxDomainHandle_t d)
{
	return d ? ((const struct domain *)(const void *)d)->name_id : 0;
}

/* Whether the domain's calls are recorded (a null handle: the default domain). */
static int recorded(nvtxDomainHandle_t d)
{
	if (d)
		return ((const struct domain *)(const void *)d)->recorded;
	pthread_once(&filter_once, filter_read);
	return default_recorded;
}

/* ---- the core module: the default domain ---- */

static void mark_ex(const nvtxEventAttributes_t *a)
{
	if (!recorded(NULL))
		return;
	struct strbuf w = STRBUF_INIT;
	recorder_mark(message_of(a, &w), 0);
	strbuf_release(&w);
}

static void mark_a(const char *message)
{
	if (!recorded(NULL))
		return;
	recorder_mark(message ? message : "", 0);
}

static void mark_w(const wchar_t *message)
{
	if (!recorded(NULL))
		return;
	struct strbuf w = STRBUF_INIT;
	utf8_from_wide(message, &w);
	recorder_mark(w.buf, 0);
	strbuf_release(&w);
}

static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a)
{
	if (!recorded(NULL))
		return 0;
	struct strbuf w = STRBUF_INIT;
	nvtxRangeId_t id = recorder_range_start(message_of(a, &w), 0);
	strbuf_release(&w);
	return id;
}

static nvtxRangeId_t start_a(const char *message)
{
	if (!recorded(NULL))
		return 0;
	return recorder_range_start(message ? message : "", 0);
}

static nvtxRangeId_t start_w(const wchar_t *message)
{
	if (!recorded(NULL))
		return 0;
	struct strbuf w = STRBUF_INIT;
	utf8_from_wide(message, &w);
	nvtxRangeId_t id = recorder_range_start(w.buf, 0);
	strbuf_release(&w);
	return id;
}

static void range_end(nvtxRangeId_t id)
{
	if (id) /* 0: a range of a domain not recorded */
		recorder_range_stop(id);
}

static int push_ex(const nvtxEventAttributes_t *a)
{
	if (!recorded(NULL))
		return unrecorded_depth++;
	struct strbuf w = STRBUF_INIT;
	int depth = recorder_range_push(message_of(a, &w), 0);
	strbuf_release(&w);
	return depth;
}

static int push_a(const char *message)
{
	if (!recorded(NULL))
		return unrecorded_depth++;
	return recorder_range_push(message ? message : "", 0);
}

static int push_w(const wchar_t *message)
{
	if (!recorded(NULL))
		return unrecorded_depth++;
	struct strbuf w = STRBUF_INIT;
	utf8_from_wide(message, &w);
	int depth = recorder_range_push(w.buf, 0);
	strbuf_release(&w);
	return depth;
}

/* Pops of a domain not recorded: the depth left, -1 when none was open. */
static int unrecorded_pop(void)
{
	return unrecorded_depth > 0 ? --unrecorded_depth : -1;
}

static int pop(void)
{
	return recorded(NULL) ? recorder_domain_range_pop(0) : unrecorded_pop();
}

/* NVTX names a thread by id; the recorder names the calling thread, which is what
 * programs pass in practice (their own gettid()). */
static void name_thread_a(uint32_t tid, const char *name)
{
	recorder_name_thread(name ? name : "");
}

/* ---- the core2 module: named domains ---- */

static void domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	if (!recorded(d))
		return;
	struct strbuf w = STRBUF_INIT;
	recorder_mark(message_of(a, &w), domain_id(d));
	strbuf_release(&w);
}

static nvtxRangeId_t domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	if (!recorded(d))
		return 0;
	struct strbuf w = STRBUF_INIT;
	nvtxRangeId_t id = recorder_range_start(message_of(a, &w), domain_id(d));
	strbuf_release(&w);
	return id;
}

static void domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	if (id)
		recorder_range_stop(id);
}

static int domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	if (!recorded(d))
		return unrecorded_depth++;
	struct strbuf w = STRBUF_INIT;
	int depth = recorder_range_push(message_of(a, &w), domain_id(d));
	strbuf_release(&w);
	return depth;
}

static int domain_pop(nvtxDomainHandle_t d)
{
	return recorded(d) ? recorder_domain_range_pop(domain_id(d)) : unrecorded_pop();
}

/* Handles live as long as the process: NVTX has no call that ends a registered string,
 * and a destroyed domain may still be named by the program's other libraries. They are
 * listed here, so that they stay reachable. */
static struct handle {
	struct handle *next;
	union {
		struct domain domain;
		char text[1];
	} u;
} *handles;
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

/* NULL when memory cannot be had: NVTX takes a null domain for the default one and a
 * null registered string for an empty one. */
static void *new_handle(const void *value, size_t size)
{
	size_t bytes = offsetof(struct handle, u) + size;
	struct handle *h = calloc(1, bytes > sizeof(*h) ? bytes : sizeof(*h));
	if (!h)
		return NULL;
	memcpy(&h->u, value, size);
	pthread_mutex_lock(&handles_lock);
	h->next = handles;
	handles = h;
	pthread_mutex_unlock(&handles_lock);
	return &h->u;
}

static nvtxStringHandle_t register_string_a(nvtxDomainHandle_t d, const char *text)
{
	text = text ? text : "";
	return (nvtxStringHandle_t)new_handle(text, strlen(text) + 1);
}

static nvtxStringHandle_t register_string_w(nvtxDomainHandle_t d, const wchar_t *text)
{
	struct strbuf w = STRBUF_INIT;
	utf8_from_wide(text, &w);
	nvtxStringHandle_t h = register_string_a(d, w.buf);
	strbuf_release(&w);
	return h;
}

static nvtxDomainHandle_t domain_create_a(const char *name)
{
	struct domain d = { .name_id = recorder_intern(name ? name : ""),
			    .recorded = domain_recorded(name ? name : "") };
	return (nvtxDomainHandle_t)new_handle(&d, sizeof(d));
}

static nvtxDomainHandle_t domain_create_w(const wchar_t *name)
{
	struct strbuf w = STRBUF_INIT;
	utf8_from_wide(name, &w);
	nvtxDomainHandle_t d = domain_create_a(w.buf);
	strbuf_release(&w);
	return d;
}

/* The handle is kept (see new_handle). */
static void domain_destroy(nvtxDomainHandle_t d)
{
}

/* ---- injection ---- */

static void fill(NvtxGetExportTableFunc_t get_table, NvtxCallbackModule module,
		 const NvtxFunctionPointer *handlers, unsigned count)
{
	const NvtxExportTableCallbacks *callbacks =
		(const NvtxExportTableCallbacks *)get_table(NVTX_ETID_CALLBACKS);
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;
	if (!callbacks || !callbacks->GetModuleFunctionTable ||
	    !callbacks->GetModuleFunctionTable(module, &table, &size) || !table)
		return;
	for (unsigned i = 1; i < count && i < size; i++)
		if (handlers[i] && table[i])
			*table[i] = handlers[i];
}

#define HANDLER(f) ((NvtxFunctionPointer)(void (*)(void))(f))

/* This library lives in the program: running out of memory never ends it. */
__attribute__((constructor)) static void in_program(void)
{
	strbuf_fail_softly();
}

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
	if (!get_table)
		return 0;
	NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE] = { 0 };
	core[NVTX_CBID_CORE_MarkEx] = HANDLER(mark_ex);
	core[NVTX_CBID_CORE_MarkA] = HANDLER(mark_a);
	core[NVTX_CBID_CORE_MarkW] = HANDLER(mark_w);
	core[NVTX_CBID_CORE_RangeStartEx] = HANDLER(start_ex);
	core[NVTX_CBID_CORE_RangeStartA] = HANDLER(start_a);
	core[NVTX_CBID_CORE_RangeStartW] = HANDLER(start_w);
	core[NVTX_CBID_CORE_RangeEnd] = HANDLER(range_end);
	core[NVTX_CBID_CORE_RangePushEx] = HANDLER(push_ex);
	core[NVTX_CBID_CORE_RangePushA] = HANDLER(push_a);
	core[NVTX_CBID_CORE_RangePushW] = HANDLER(push_w);
	core[NVTX_CBID_CORE_RangePop] = HANDLER(pop);
	core[NVTX_CBID_CORE_NameOsThreadA] = HANDLER(name_thread_a);
	fill(get_table, NVTX_CB_MODULE_CORE, core, NVTX_CBID_CORE_SIZE);

	NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE] = { 0 };
	core2[NVTX_CBID_CORE2_DomainMarkEx] = HANDLER(domain_mark_ex);
	core2[NVTX_CBID_CORE2_DomainRangeStartEx] = HANDLER(domain_start_ex);
	core2[NVTX_CBID_CORE2_DomainRangeEnd] = HANDLER(domain_end);
	core2[NVTX_CBID_CORE2_DomainRangePushEx] = HANDLER(domain_push_ex);
	core2[NVTX_CBID_CORE2_DomainRangePop] = HANDLER(domain_pop);
	core2[NVTX_CBID_CORE2_DomainRegisterStringA] = HANDLER(register_string_a);
	core2[NVTX_CBID_CORE2_DomainRegisterStringW] = HANDLER(register_string_w);
	core2[NVTX_CBID_CORE2_DomainCreateA] = HANDLER(domain_create_a);
	core2[NVTX_CBID_CORE2_DomainCreateW] = HANDLER(domain_create_w);
	core2[NVTX_CBID_CORE2_DomainDestroy] = HANDLER(domain_destroy);
	fill(get_table, NVTX_CB_MODULE_CORE2, core2, NVTX_CBID_CORE2_SIZE);
	return 1;
}
