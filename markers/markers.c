/* libgpuprof-markers: the public marker API (include/gpuprof/markers.h). */
#include "gpuprof/markers.h"

#include "bind.h"

#include <string.h>

#define API __attribute__((visibility("default")))

/* A domain's id, the recorder's interned name; the thread's last domain is remembered, so
 * that the pushes and pops of one domain (PyTorch's operators) take the recorder's lock
 * for its name once, not at every call. */
static uint32_t domain_id(const struct marker_recorder *r, const char *domain)
{
	static __thread char last[64] __attribute__((tls_model("initial-exec")));
	static __thread uint32_t last_id __attribute__((tls_model("initial-exec")));
	if (!domain || !*domain)
		return 0;
	if (last_id && !strcmp(domain, last))
		return last_id;
	uint32_t id = r->intern(domain);
	size_t length = strnlen(domain, sizeof(last));
	if (id && length < sizeof(last)) {
		memcpy(last, domain, length + 1);
		last_id = id;
	}
	return id;
}

API int gpuprof_range_push(const char *message)
{
	const struct marker_recorder *r = marker_recorder();
	return r ? r->push(message, 0) : marker_depth_push();
}

API int gpuprof_domain_range_push(const char *domain, const char *message)
{
	const struct marker_recorder *r = marker_recorder();
	return r ? r->push(message, domain_id(r, domain)) : marker_depth_push();
}

API int gpuprof_domain_range_push_module(const char *domain, const char *message,
					 const char *module)
{
	const struct marker_recorder *r = marker_recorder();
	return r ? r->push_module(message, module, domain_id(r, domain)) : marker_depth_push();
}

API int gpuprof_range_pop(void)
{
	const struct marker_recorder *r = marker_recorder();
	return r ? r->pop() : marker_depth_pop();
}

API int gpuprof_domain_range_pop(const char *domain)
{
	const struct marker_recorder *r = marker_recorder();
	return r ? r->domain_pop(domain_id(r, domain)) : marker_depth_pop();
}

API uint64_t gpuprof_range_start(const char *message)
{
	const struct marker_recorder *r = marker_recorder();
	return r ? r->start(message, 0) : marker_next_id();
}

API void gpuprof_range_stop(uint64_t id)
{
	const struct marker_recorder *r = marker_recorder();
	if (r)
		r->stop(id);
}

API void gpuprof_mark(const char *message)
{
	const struct marker_recorder *r = marker_recorder();
	if (r)
		r->mark(message, 0);
}

API void gpuprof_name_thread(const char *name)
{
	const struct marker_recorder *r = marker_recorder();
	if (r)
		r->name_thread(name);
}

API void gpuprof_pause(void)
{
	const struct marker_recorder *r = marker_recorder();
	if (r)
		r->pause();
}

API void gpuprof_resume(void)
{
	const struct marker_recorder *r = marker_recorder();
	if (r)
		r->resume();
}
