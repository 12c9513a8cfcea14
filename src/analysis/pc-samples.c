/* PC samples as tables and folded stacks (see pc-samples.h). The aggregation is SQL:
 * each input gives its rows grouped by kernel, instruction and reason, and the tables
 * are queries over those rows. */
#include "analysis/pc-samples.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"
#include "store/store.h"
#include "util/csv.h"
#include "util/table.h"
#include "util/csv-format.h"

static const char schema[] =
	"CREATE TABLE pcs (kernel TEXT, crc TEXT, pc INTEGER, file TEXT, line INTEGER, "
	"reason TEXT, not_issued INTEGER, samples INTEGER);"
	"CREATE TABLE launches (kernel TEXT, count INTEGER, device_ns INTEGER);";

int pc_samples_init(struct pc_samples *p, struct error *err)
{
	memset(p, 0, sizeof(*p));
	if (sqlite3_open(":memory:", &p->db) != SQLITE_OK)
		return error_set(err, "cannot open an in-memory database: %s",
				 p->db ? sqlite3_errmsg(p->db) : "out of memory");
	return store_exec(p->db, schema, err);
}

void pc_samples_release(struct pc_samples *p)
{
	sqlite3_close(p->db);
	memset(p, 0, sizeof(*p));
}

static void bind_filter(sqlite3_stmt *s, const char *kernel)
{
	if (kernel)
		sqlite3_bind_text(s, 1, kernel, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 1);
}

/* Copies the rows of a query over the input into a table of the in-memory database with
 * as many columns. */
static int copy_rows(struct pc_samples *p, sqlite3 *db, const char *query, const char *insert,
		     const char *kernel, struct error *err)
{
	sqlite3_stmt *from, *to;
	if (store_prepare(db, query, &from, err))
		return -1;
	if (store_prepare(p->db, insert, &to, err)) {
		sqlite3_finalize(from);
		return -1;
	}
	bind_filter(from, kernel);
	int rc;
	int columns = sqlite3_column_count(from);
	while ((rc = sqlite3_step(from)) == SQLITE_ROW) {
		for (int c = 0; c < columns; c++)
			sqlite3_bind_value(to, c + 1, sqlite3_column_value(from, c));
		if (sqlite3_step(to) != SQLITE_DONE) {
			rc = SQLITE_ERROR;
			error_set(err, "cannot gather PC samples: %s", sqlite3_errmsg(p->db));
			break;
		}
		sqlite3_reset(to);
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ERROR)
		error_set(err, "cannot read PC samples: %s", sqlite3_errmsg(db));
	sqlite3_finalize(from);
	sqlite3_finalize(to);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int count_samples(struct pc_samples *p, struct error *err);

int pc_samples_gather(struct pc_samples *p, sqlite3 *db, const char *kernel,
		      struct error *err)
{
	if (!store_has_table(db, "gpuprof_pc_sample")) /* a database before schema 3.5 */
		return 0;
	if (copy_rows(p, db,
		      "SELECT kernel_name, cubin_crc, pc_offset, source_file, line, reason, "
		      "not_issued, sum(samples) FROM pc_samples WHERE ?1 IS NULL OR "
		      "instr(kernel_name, ?1) > 0 GROUP BY 1, 2, 3, 4, 5, 6, 7",
		      "INSERT INTO pcs VALUES (?,?,?,?,?,?,?,?)", kernel, err) ||
	    copy_rows(p, db,
		      "SELECT name, count(*), sum(duration) FROM kernels WHERE ?1 IS NULL OR "
		      "instr(name, ?1) > 0 GROUP BY name",
		      "INSERT INTO launches VALUES (?,?,?)", kernel, err))
		return -1;
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT sum(samples), sum(dropped), sum(other_samples), "
			  "min(period_log2), max(period_log2), count(*) FROM pc_sampling", &s, err))
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 5) > 0) {
		p->taken += (uint64_t)sqlite3_column_int64(s, 0);
		p->dropped += (uint64_t)sqlite3_column_int64(s, 1);
		p->other += (uint64_t)sqlite3_column_int64(s, 2);
		uint32_t lo = (uint32_t)sqlite3_column_int(s, 3), hi = (uint32_t)sqlite3_column_int(s, 4);
		if (lo && (!p->period_min || lo < p->period_min))
			p->period_min = lo;
		if (hi > p->period_max)
			p->period_max = hi;
		p->inputs_with_samples++;
	}
	sqlite3_finalize(s);
	return count_samples(p, err);
}

/* p->samples again, after rows were added or removed. */
static int count_samples(struct pc_samples *p, struct error *err)
{
	sqlite3_stmt *s;
	if (store_prepare(p->db, "SELECT coalesce(sum(samples), 0) FROM pcs WHERE NOT not_issued",
			  &s, err))
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		p->samples = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return 0;
}

int pc_samples_keep_kernels(struct pc_samples *p, const char *const *kernels, int count,
			    struct error *err)
{
	if (!count)
		return 0;
	struct strbuf sql = STRBUF_INIT;
	strbuf_addstr(&sql, "DELETE FROM pcs WHERE NOT (");
	for (int i = 0; i < count; i++)
		strbuf_addf(&sql, "%sinstr(kernel, ?%d) > 0", i ? " OR " : "", i + 1);
	strbuf_addstr(&sql, ")");
	sqlite3_stmt *s;
	int rc = store_prepare(p->db, sql.buf, &s, err);
	strbuf_release(&sql);
	if (rc)
		return -1;
	for (int i = 0; i < count; i++)
		sqlite3_bind_text(s, i + 1, kernels[i], -1, SQLITE_STATIC);
	rc = sqlite3_step(s) == SQLITE_DONE ? 0 : error_set(err, "cannot select PC samples: %s",
							     sqlite3_errmsg(p->db));
	sqlite3_finalize(s);
	return rc ? rc : count_samples(p, err);
}

/* ---- pc_sampling.csv --------------------------------------------------------------------- */

static const char *const csv_columns[] = { "Kernel_Name", "Cubin_Crc", "Pc_Offset",
					   "Source_File", "Line", "Stall_Reason", "Not_Issued",
					   "Samples" };
#define CSV_COLUMNS (sizeof(csv_columns) / sizeof(csv_columns[0]))

int pc_samples_write_csv(sqlite3 *db, FILE *out, size_t *rows, struct error *err)
{
	struct strbuf line = STRBUF_INIT;
	for (size_t i = 0; i < CSV_COLUMNS; i++)
		csv_text(&line, csv_columns[i]);
	strbuf_addch(&line, '\n');
	fputs(line.buf, out);
	*rows = 0;
	if (!store_has_table(db, "gpuprof_pc_sample")) {
		strbuf_release(&line);
		return 0;
	}
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT kernel_name, cubin_crc, pc_offset, source_file, line, "
			  "reason, not_issued, sum(samples) FROM pc_samples GROUP BY 1, 2, 3, 4, 5, "
			  "6, 7 ORDER BY 1, 2, 3, 6, 7", &s, err)) {
		strbuf_release(&line);
		return -1;
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		strbuf_reset(&line);
		csv_text(&line, (const char *)sqlite3_column_text(s, 0));
		csv_text(&line, (const char *)sqlite3_column_text(s, 1));
		csv_int(&line, sqlite3_column_int64(s, 2));
		csv_text(&line, sqlite3_column_type(s, 3) == SQLITE_NULL ? ""
				: (const char *)sqlite3_column_text(s, 3));
		csv_int(&line, sqlite3_column_int64(s, 4));
		csv_text(&line, (const char *)sqlite3_column_text(s, 5));
		csv_int(&line, sqlite3_column_int64(s, 6));
		csv_int(&line, sqlite3_column_int64(s, 7));
		strbuf_addch(&line, '\n');
		fputs(line.buf, out);
		++*rows;
	}
	sqlite3_finalize(s);
	strbuf_release(&line);
	return ferror(out) ? error_set(err, "cannot write the PC samples") : 0;
}

int pc_samples_read_csv(struct pc_samples *p, const char *name, const char *text, size_t size,
			struct error *err)
{
	struct csv_row *rows;
	size_t count;
	int bad_line;
	if (csv_parse(text, size, &rows, &count, &bad_line))
		return error_set(err, "%s:%d: a quoted field is not closed", name, bad_line);
	int rc = 0;
	if (!count || rows[0].count != CSV_COLUMNS)
		rc = error_set(err, "%s: not a PC sampling file (its header is not %zu columns "
			       "Kernel_Name...Samples)", name, CSV_COLUMNS);
	for (size_t c = 0; rc == 0 && c < CSV_COLUMNS; c++)
		if (strcmp(rows[0].fields[c], csv_columns[c]))
			rc = error_set(err, "%s: column %zu is '%s', not %s", name, c + 1,
				       rows[0].fields[c], csv_columns[c]);
	sqlite3_stmt *insert = NULL;
	if (rc == 0)
		rc = store_prepare(p->db, "INSERT INTO pcs VALUES (?,?,?,?,?,?,?,?)", &insert, err);
	for (size_t i = 1; rc == 0 && i < count; i++) {
		const struct csv_row *r = &rows[i];
		char *end;
		long long pc = 0, line = 0, not_issued = 0, samples = 0;
		int ok = r->count == CSV_COLUMNS;
		const int numeric[] = { 2, 4, 6, 7 };
		long long *values[] = { &pc, &line, &not_issued, &samples };
		for (size_t k = 0; ok && k < 4; k++) {
			*values[k] = strtoll(r->fields[numeric[k]], &end, 10);
			ok = *r->fields[numeric[k]] && !*end && *values[k] >= 0;
		}
		if (!ok || not_issued > 1) {
			rc = error_set(err, "%s:%d: not a row of %zu fields with a whole offset, "
				       "line, not-issued flag (0 or 1) and samples", name, r->line,
				       CSV_COLUMNS);
			break;
		}
		sqlite3_bind_text(insert, 1, r->fields[0], -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(insert, 2, r->fields[1], -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(insert, 3, pc);
		if (*r->fields[3]) {
			sqlite3_bind_text(insert, 4, r->fields[3], -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(insert, 5, line);
		} else {
			sqlite3_bind_null(insert, 4);
			sqlite3_bind_null(insert, 5);
		}
		sqlite3_bind_text(insert, 6, r->fields[5], -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(insert, 7, not_issued);
		sqlite3_bind_int64(insert, 8, samples);
		if (sqlite3_step(insert) != SQLITE_DONE)
			rc = error_set(err, "cannot gather PC samples: %s", sqlite3_errmsg(p->db));
		sqlite3_reset(insert);
	}
	sqlite3_finalize(insert);
	csv_rows_release(rows, count);
	return rc ? rc : count_samples(p, err);
}

/* ---- tables ------------------------------------------------------------------------------ */

static const char kernels_sql[] =
	"WITH names AS (SELECT kernel FROM launches UNION SELECT kernel FROM pcs), "
	"r AS (SELECT kernel, reason, sum(samples) n FROM pcs WHERE NOT not_issued "
	"      GROUP BY kernel, reason), "
	"top AS (SELECT kernel, reason, n, sum(n) OVER (PARTITION BY kernel) total, "
	"        row_number() OVER (PARTITION BY kernel ORDER BY n DESC, reason) k FROM r) "
	"SELECT names.kernel, (SELECT sum(count) FROM launches l WHERE l.kernel = names.kernel), "
	"       (SELECT sum(device_ns) FROM launches l WHERE l.kernel = names.kernel), "
	"       coalesce(top.total, 0) AS samples, top.reason, top.n "
	"FROM names LEFT JOIN top ON top.kernel = names.kernel AND top.k = 1 "
	"ORDER BY samples DESC, 3 DESC, names.kernel";

static const char reasons_sql[] =
	"SELECT reason, sum(CASE WHEN NOT not_issued THEN samples ELSE 0 END) n, "
	"       sum(CASE WHEN not_issued THEN samples ELSE 0 END) FROM pcs "
	"GROUP BY reason ORDER BY n DESC, reason";

/* The rows of pcs grouped by `key`, with the group's samples, its top reason and that
 * reason's samples (the key's columns first). */
#define GROUPED(key, extra) \
	"WITH r AS (SELECT " key ", " extra " reason, sum(samples) n FROM pcs " \
	"           WHERE NOT not_issued GROUP BY " key ", reason), " \
	"t AS (SELECT *, sum(n) OVER (PARTITION BY " key ") total, row_number() OVER " \
	"      (PARTITION BY " key " ORDER BY n DESC, reason) k FROM r) " \
	"SELECT * FROM t WHERE k = 1 ORDER BY total DESC, " key

static const char lines_sql[] = GROUPED("kernel, file, line", "");
static const char instructions_sql[] = GROUPED("kernel, crc, pc", "max(file) file, max(line) line,");
/* the same, in the order of the code: kernel, module, offset */
static const char instructions_by_offset_sql[] =
	"WITH r AS (SELECT kernel, crc, pc, max(file) file, max(line) line, reason, sum(samples) n "
	"           FROM pcs WHERE NOT not_issued GROUP BY kernel, crc, pc, reason), "
	"t AS (SELECT *, sum(n) OVER (PARTITION BY kernel, crc, pc) total, row_number() OVER "
	"      (PARTITION BY kernel, crc, pc ORDER BY n DESC, reason) k FROM r) "
	"SELECT * FROM t WHERE k = 1 ORDER BY kernel, crc, pc";

static void percent_cell(struct table *t, const struct pc_samples *p, int64_t n)
{
	table_double(t, p->samples ? 100.0 * (double)n / (double)p->samples : 0, 2);
}

/* "file:line" of a row's file and line columns, or "(no line information)". */
static const char *source_text(sqlite3_stmt *s, int file, int line, char *text, size_t size)
{
	const char *path = (const char *)sqlite3_column_text(s, file);
	if (!path)
		return "(no line information)";
	snprintf(text, size, "%s:%d", path, sqlite3_column_int(s, line));
	return text;
}

static void source_cell(struct table *t, sqlite3_stmt *s, int file, int line)
{
	char text[4200];
	table_text(t, source_text(s, file, line, text, sizeof(text)));
}

int pc_samples_tables(const struct pc_samples *p, FILE *out, int format, size_t limit,
		      struct error *err)
{
	enum table_format f = (enum table_format)format;
	struct strbuf title = STRBUF_INIT;
	sqlite3_stmt *s;
	int rc = 0;
	size_t rows;

	strbuf_addf(&title, "PC SAMPLES BY KERNEL (%llu samples", (unsigned long long)p->samples);
	if (p->taken)
		strbuf_addf(&title, "; the devices took %llu, %llu of them lost and %llu in "
			    "kernels not the program's", (unsigned long long)p->taken,
			    (unsigned long long)p->dropped, (unsigned long long)p->other);
	if (p->period_min)
		strbuf_addf(&title, p->period_min == p->period_max ? "; a sample every 2^%u cycles"
				    : "; a sample every 2^%u to 2^%u cycles", p->period_min,
			    p->period_max);
	strbuf_addstr(&title, ")");
	const char *kernel_columns[] = { "Kernel", "Launches", "Device ns", "Samples",
					 "Samples %", "Top reason", "Top reason %" };
	if (store_prepare(p->db, kernels_sql, &s, err))
		return -1;
	struct table *t = table_begin(out, f, "kernels", title.buf, 7, kernel_columns);
	for (rows = 0; sqlite3_step(s) == SQLITE_ROW && (!limit || rows < limit); rows++) {
		int64_t samples = sqlite3_column_int64(s, 3);
		table_text(t, (const char *)sqlite3_column_text(s, 0));
		if (sqlite3_column_type(s, 1) == SQLITE_NULL) { /* no kernel records: not traced */
			table_null(t);
			table_null(t);
		} else {
			table_int(t, sqlite3_column_int64(s, 1));
			table_int(t, sqlite3_column_int64(s, 2));
		}
		table_int(t, samples);
		percent_cell(t, p, samples);
		if (sqlite3_column_type(s, 4) == SQLITE_NULL) {
			table_null(t);
			table_null(t);
		} else {
			table_text(t, (const char *)sqlite3_column_text(s, 4));
			table_double(t, 100.0 * (double)sqlite3_column_int64(s, 5) / (double)samples, 2);
		}
	}
	sqlite3_finalize(s);
	rc = table_end(t, err);

	const char *reason_columns[] = { "Reason", "Samples", "Samples %", "Not issued" };
	if (rc == 0 && store_prepare(p->db, reasons_sql, &s, err) == 0) {
		t = table_begin(out, f, "stall_reasons", "STALL REASONS (each sample's warp: why it "
				"did not issue, or 'selected' when it issued; 'Not issued': the "
				"vendor's not-issued subset of the same samples)", 4, reason_columns);
		while (sqlite3_step(s) == SQLITE_ROW) {
			table_text(t, (const char *)sqlite3_column_text(s, 0));
			table_int(t, sqlite3_column_int64(s, 1));
			percent_cell(t, p, sqlite3_column_int64(s, 1));
			table_int(t, sqlite3_column_int64(s, 2));
		}
		sqlite3_finalize(s);
		rc = table_end(t, err);
	} else if (rc == 0) {
		rc = -1;
	}

	/* lines: kernel, file, line, reason, n, total, k */
	const char *line_columns[] = { "Source", "Kernel", "Samples", "Samples %", "Top reason",
				       "Top reason %" };
	if (rc == 0 && store_prepare(p->db, lines_sql, &s, err) == 0) {
		t = table_begin(out, f, "source_lines", "HOT SOURCE LINES", 6, line_columns);
		for (rows = 0; sqlite3_step(s) == SQLITE_ROW && (!limit || rows < limit); rows++) {
			int64_t total = sqlite3_column_int64(s, 5);
			source_cell(t, s, 1, 2);
			table_text(t, (const char *)sqlite3_column_text(s, 0));
			table_int(t, total);
			percent_cell(t, p, total);
			table_text(t, (const char *)sqlite3_column_text(s, 3));
			table_double(t, 100.0 * (double)sqlite3_column_int64(s, 4) / (double)total, 2);
		}
		sqlite3_finalize(s);
		rc = table_end(t, err);
	} else if (rc == 0) {
		rc = -1;
	}

	if (rc == 0)
		rc = pc_samples_instructions(p, out, format, "instructions", "HOT INSTRUCTIONS "
					     "(offsets into the kernel's SASS code: cuobjdump -sass "
					     "shows them)", limit, 0, err);
	strbuf_release(&title);
	return rc;
}

int pc_samples_instructions(const struct pc_samples *p, FILE *out, int format, const char *key,
			    const char *title, size_t limit, int by_offset, struct error *err)
{
	/* rows: kernel, crc, pc, file, line, reason, n, total, k */
	const char *columns[] = { "Kernel", "PC offset", "Source", "Samples", "Samples %",
				  "Top reason", "Top reason %" };
	sqlite3_stmt *s;
	if (store_prepare(p->db, by_offset ? instructions_by_offset_sql : instructions_sql, &s, err))
		return -1;
	struct table *t = table_begin(out, (enum table_format)format, key, title, 7, columns);
	for (size_t rows = 0; sqlite3_step(s) == SQLITE_ROW && (!limit || rows < limit); rows++) {
		int64_t total = sqlite3_column_int64(s, 7);
		char offset[32];
		snprintf(offset, sizeof(offset), "0x%llx", (unsigned long long)sqlite3_column_int64(s, 2));
		table_text(t, (const char *)sqlite3_column_text(s, 0));
		table_text(t, offset);
		source_cell(t, s, 3, 4);
		table_int(t, total);
		percent_cell(t, p, total);
		table_text(t, (const char *)sqlite3_column_text(s, 5));
		table_double(t, 100.0 * (double)sqlite3_column_int64(s, 6) / (double)total, 2);
	}
	sqlite3_finalize(s);
	return table_end(t, err);
}

int pc_samples_folded(const struct pc_samples *p, struct strbuf *out, struct error *err)
{
	sqlite3_stmt *s;
	if (store_prepare(p->db, "SELECT kernel, file, line, reason, sum(samples) FROM pcs "
			  "WHERE NOT not_issued GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4", &s, err))
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		char text[4200];
		const char *frames[] = { (const char *)sqlite3_column_text(s, 0),
					 source_text(s, 1, 2, text, sizeof(text)),
					 (const char *)sqlite3_column_text(s, 3) };
		profile_folded_line(out, frames, 3, (uint64_t)sqlite3_column_int64(s, 4));
	}
	sqlite3_finalize(s);
	return 0;
}
