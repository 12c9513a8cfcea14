/* What every part of the findings' engine uses (see insight-internal.h): the names met,
 * read once by their id; the first error, kept; statements; which calls wait for the
 * device. Below the rules' passes (insight.c), the run's layout (insight-build.c) and
 * the idle gaps (insight-gaps.c). */
#include <stdlib.h>
#include <string.h>

#include "analysis/insight-internal.h"
#include "util/hash.h"

/* ---- names ------------------------------------------------------------------------------ */

/* Names repeat (a kernel launched a million times): one copy each, found by hash. */
const char *insight_intern(struct insight_engine *e, const unsigned char *text)
{
	const char *s = text ? (const char *)text : "";
	struct insight_names *n = &e->names;
	if (2 * (n->used + 1) > n->size) {
		size_t size = n->size ? 2 * n->size : 256;
		char **grown = xcalloc(size, sizeof(*grown));
		for (size_t i = 0; i < n->size; i++) {
			if (!n->slots[i])
				continue;
			size_t j = hash_string(n->slots[i]) & (size - 1);
			while (grown[j])
				j = (j + 1) & (size - 1);
			grown[j] = n->slots[i];
		}
		free(n->slots);
		n->slots = grown;
		n->size = size;
	}
	size_t j = hash_string(s) & (n->size - 1);
	while (n->slots[j] && strcmp(n->slots[j], s))
		j = (j + 1) & (n->size - 1);
	if (!n->slots[j]) {
		n->slots[j] = xstrdup(s);
		n->used++;
	}
	return n->slots[j];
}

/* A name by its id in gpuprof_string, looked up once ("" for NULL or an unknown id). */
const char *insight_name(struct insight_engine *e, int has_name, int64_t id)
{
	if (!has_name)
		return insight_intern(e, NULL);
	struct insight_ids *m = &e->ids;
	if (2 * (m->used + 1) > m->size) {
		size_t size = m->size ? 2 * m->size : 256;
		struct insight_id *grown = xcalloc(size, sizeof(*grown));
		for (size_t i = 0; i < m->size; i++) {
			if (!m->slots[i].name)
				continue;
			size_t j = hash_int((uint64_t)m->slots[i].id) & (size - 1);
			while (grown[j].name)
				j = (j + 1) & (size - 1);
			grown[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = grown;
		m->size = size;
	}
	size_t j = hash_int((uint64_t)id) & (m->size - 1);
	while (m->slots[j].name && m->slots[j].id != id)
		j = (j + 1) & (m->size - 1);
	if (m->slots[j].name)
		return m->slots[j].name;
	if (!e->string)
		e->string = insight_prepare(e, "SELECT string FROM gpuprof_string WHERE id = ?");
	const char *name = insight_intern(e, NULL);
	if (e->string) {
		sqlite3_bind_int64(e->string, 1, id);
		if (sqlite3_step(e->string) == SQLITE_ROW)
			name = insight_intern(e, sqlite3_column_text(e->string, 0));
		sqlite3_reset(e->string);
	}
	m->slots[j] = (struct insight_id){ id, name };
	m->used++;
	return name;
}

/* ---- errors ------------------------------------------------------------------------------- */

/* The first error is kept; later steps see it and do nothing. */
void insight_fail(struct insight_engine *e)
{
	if (!e->failed)
		error_set(e->err, "cannot read '%s': %s", e->path, sqlite3_errmsg(e->db));
	e->failed = 1;
}

sqlite3_stmt *insight_prepare(struct insight_engine *e, const char *sql)
{
	sqlite3_stmt *s = NULL;
	if (!e->failed && sqlite3_prepare_v2(e->db, sql, -1, &s, NULL) != SQLITE_OK) {
		insight_fail(e);
		sqlite3_finalize(s);
		s = NULL;
	}
	return s;
}

/* ---- calls ------------------------------------------------------------------------------- */

/* Calls that wait for the device (CUDA's runtime names carry a _vNNNN suffix). */
static const char *const waits[] = {
	"clFinish", "clWaitForEvents", "cudaDeviceSynchronize", "cudaStreamSynchronize",
	"cudaEventSynchronize", "cudaThreadSynchronize", "cuCtxSynchronize",
	"cuStreamSynchronize", "cuEventSynchronize",
};

int insight_is_wait(const char *name)
{
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		size_t n = strlen(waits[i]);
		if (!strncmp(name, waits[i], n) && (name[n] == '\0' || name[n] == '_'))
			return 1;
	}
	return 0;
}
