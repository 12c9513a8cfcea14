/* Fuzz target: databases edited after gpuprof wrote them, as by hand or by another tool:
 * NULLs and text where numbers belong, extreme numbers, rows deleted or added, ids that
 * point nowhere, views replaced. The input is SQL, run against a copy of a real database
 * (TEMPLATE, from the database target's corpus; run from the repository root, as
 * tests/fuzz/run.sh and make check do); the result is read as fuzz_read_database() says.
 * The SQL may not attach other files (nor VACUUM INTO one). */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define TEMPLATE "tests/fuzz/corpus/database/markers-kernels-allocations.db"

static int no_other_files(void *unused, int action, const char *a, const char *b,
			  const char *c, const char *d)
{
	return action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *template;
	static size_t template_size;
	if (!template) {
		FILE *f = fopen(TEMPLATE, "rb");
		if (!f || fseek(f, 0, SEEK_END) || (long)(template_size = (size_t)ftell(f)) < 0 ||
		    fseek(f, 0, SEEK_SET) || !(template = malloc(template_size)) ||
		    fread(template, 1, template_size, f) != template_size) {
			perror(TEMPLATE);
			abort();
		}
		fclose(f);
	}
	char *path = (char *)fuzz_file("edited.db", template, template_size);
	char *sql = malloc(size + 1);
	memcpy(sql, data, size);
	sql[size] = '\0';
	sqlite3 *db;
	if (sqlite3_open(path, &db) == SQLITE_OK) {
		sqlite3_set_authorizer(db, no_other_files, NULL);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	sqlite3_close(db);
	free(sql);
	fuzz_read_database(path);
	return 0;
}
