/* read-db: the floor under every export from a database. Steps through every row of
 * the timed tables and reads every column, as `gpuprof convert` must, and does nothing
 * with them; prints "ROWS SECONDS".
 *
 *   read-db DB */
#include <sqlite3.h>
#include <stdio.h>
#include <time.h>

static const char *const tables[] = { "gpuprof_kernel", "gpuprof_memory_copy",
				      "gpuprof_memory_allocation", "gpuprof_api_call" };

int main(int argc, char **argv)
{
	sqlite3 *db;
	if (argc != 2) {
		fprintf(stderr, "usage: read-db DB\n");
		return 2;
	}
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) ||
	    sqlite3_exec(db, "PRAGMA mmap_size = 2147418112", NULL, NULL, NULL)) {
		fprintf(stderr, "read-db: %s: %s\n", argv[1], sqlite3_errmsg(db));
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long long rows = 0, sum = 0;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		char sql[128];
		sqlite3_stmt *s;
		snprintf(sql, sizeof(sql), "SELECT * FROM %s ORDER BY id", tables[t]);
		if (sqlite3_prepare_v2(db, sql, -1, &s, NULL)) {
			fprintf(stderr, "read-db: %s: %s\n", argv[1], sqlite3_errmsg(db));
			return 1;
		}
		int columns = sqlite3_column_count(s);
		for (; sqlite3_step(s) == SQLITE_ROW; rows++)
			for (int c = 0; c < columns; c++)
				sum += sqlite3_column_int64(s, c);
		sqlite3_finalize(s);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* the sum keeps the reads from being optimised away */
	printf("%lld %.3f\n", rows + (sum == 42), (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	sqlite3_close(db);
	return 0;
}
