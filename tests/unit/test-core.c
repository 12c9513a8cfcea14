/* Unit tests of the core: spool format, path templates, options, statistics, names,
 * CSV formatting and the recorder. */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis/pc-samples.h"
#include "analysis/stats.h"
#include "check.h"
#include "core/paths.h"
#include "core/recording.h"
#include "core/spool.h"
#include "runtime/recorder.h"
#include "store/store.h"
#include "util/csv-format.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/unfinished.h"
#include "writer/writer.h"

static char workdir[] = "/tmp/gpuprof-unit-XXXXXX";

static void write_kernels(int fd, int chunks, int per_chunk)
{
	struct record_kernel k[64];
	for (int c = 0; c < chunks; c++) {
		for (int i = 0; i < per_chunk; i++) {
			memset(&k[i], 0, sizeof(k[i]));
			k[i].header = (struct record_header){ sizeof(k[i]), RECORD_KERNEL, 0 };
			k[i].dispatch_id = (uint64_t)(c * per_chunk + i + 1);
		}
		spool_write_chunk(fd, k, (uint32_t)(per_chunk * sizeof(k[0])), (uint32_t)per_chunk, NULL);
	}
}

static int count_records(const char *path, int *kernels, struct error *err)
{
	struct spool_reader r;
	if (spool_reader_open(&r, path, err))
		return -1;
	const struct record_header *h;
	int rc;
	*kernels = 0;
	while ((rc = spool_reader_next(&r, &h, err)) > 0)
		*kernels += h->type == RECORD_KERNEL;
	spool_reader_release(&r);
	return rc;
}

static void test_spool(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/a.spool", workdir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(spool_write_header(fd, NULL) == 0);
	write_kernels(fd, 3, 10);
	close(fd);
	CHECK(spool_is_spool(path));
	struct error err;
	int kernels = -1;
	CHECK(count_records(path, &kernels, &err) == 0);
	CHECK(kernels == 30);

	/* cut inside the last chunk: the complete chunks remain */
	struct stat st;
	stat(path, &st);
	CHECK(truncate(path, st.st_size - 20) == 0);
	struct spool_reader r;
	CHECK(spool_reader_open(&r, path, &err) == 0);
	const struct record_header *h;
	int n = 0, rc;
	while ((rc = spool_reader_next(&r, &h, &err)) > 0)
		n++;
	CHECK(rc == 0);
	CHECK(n == 20);
	CHECK(r.truncated_bytes == sizeof(struct spool_chunk_header) + 10 * sizeof(struct record_kernel) - 20);
	spool_reader_release(&r);

	/* a flipped byte inside a chunk is corruption, reported with its offset */
	fd = open(path, O_RDWR);
	unsigned char byte;
	off_t at = sizeof(struct spool_file_header) + sizeof(struct spool_chunk_header) + 40;
	pread(fd, &byte, 1, at);
	byte ^= 0xff;
	pwrite(fd, &byte, 1, at);
	close(fd);
	CHECK(count_records(path, &kernels, &err) < 0);
	CHECK(strstr(err.message, "checksum mismatch") != NULL);

	/* not a spool, and too short */
	snprintf(path, sizeof(path), "%s/b.spool", workdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(fd, "hello", 5);
	close(fd);
	CHECK(!spool_is_spool(path));
	CHECK(spool_reader_open(&r, path, &err) < 0);
	CHECK(strstr(err.message, "not a gpuprof spool") != NULL);
}

/* The chunks' checksum is zlib's CRC-32 however it is computed (ISA-L's where built with
 * it): spools stay readable by every build. Every length to 4 KiB past each alignment, then
 * lengths about the sizes the folding steps take. */
/* Under a file-size limit (ulimit -f) a chunk that would pass it is not written: an
 * error, the spool left whole, and no SIGXFSZ, which would end the recorded program
 * (the child below exits 0 only when every check held). */
static void test_spool_file_size_limit(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/limited.spool", workdir);
	pid_t child = fork();
	if (child == 0) {
		struct rlimit limit = { 4096, 4096 };
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || setrlimit(RLIMIT_FSIZE, &limit) < 0 || spool_write_header(fd, NULL) < 0)
			_exit(2);
		unsigned char payload[1100] = { 0 }; /* 3 chunks and the header fit in 4096 bytes */
		struct error err = { 0 };
		int written = 0;
		while (spool_write_chunk(fd, payload, sizeof(payload), 0, &err) == 0)
			written++;
		off_t size = lseek(fd, 0, SEEK_END);
		_exit(written == 3 && size <= 4096 && strstr(err.message, "file size limit") ? 0 : 3);
	}
	int status = -1;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct stat st;
	CHECK(stat(path, &st) == 0 && st.st_size <= 4096);
}

/* Threads that make an output file while a second interrupt removes the unfinished ones
 * (util/unfinished.h): the file of one that registered before the removal and creates it
 * after is removed by it; one that registers after never returns, so never creates. */
static char unfinished_paths[3][300];
static atomic_int created, trying, returned[2];

static int poll_until(atomic_int *flag)
{
	for (int i = 0; i < 2000 && !atomic_load(flag); i++)
		usleep(1000);
	return atomic_load(flag);
}

static void *create_registered(void *unused)
{
	int fd = open(unfinished_paths[1], O_WRONLY | O_CREAT, 0644);
	close(fd);
	atomic_store(&created, fd >= 0);
	unfinished_created(unfinished_paths[1]);
	atomic_store(&returned[0], 1);
	return unused;
}

static void *register_late(void *unused)
{
	atomic_store(&trying, 1);
	unfinished_add(unfinished_paths[2]);
	close(open(unfinished_paths[2], O_WRONLY | O_CREAT, 0644));
	atomic_store(&returned[1], 1);
	return unused;
}

static void test_unfinished_after_removal(void)
{
	for (int i = 0; i < 3; i++)
		snprintf(unfinished_paths[i], sizeof(unfinished_paths[i]), "%s/out%d.partial",
			 workdir, i);
	pid_t child = fork();
	if (child == 0) { /* the removal is for a process that ends: a child's */
		struct stat st;
		unfinished_add(unfinished_paths[0]);
		close(open(unfinished_paths[0], O_WRONLY | O_CREAT, 0644));
		unfinished_created(unfinished_paths[0]);
		unfinished_add(unfinished_paths[1]); /* listed, not made yet */
		unfinished_remove_all();
		pthread_t a, b;
		if (pthread_create(&a, NULL, create_registered, NULL) ||
		    pthread_create(&b, NULL, register_late, NULL))
			_exit(2);
		if (!poll_until(&created) || !poll_until(&trying))
			_exit(3);
		for (int i = 0; i < 2000 && stat(unfinished_paths[1], &st) == 0; i++)
			usleep(1000);
		usleep(100000); /* a thread let through would have made its file by now */
		int ok = stat(unfinished_paths[0], &st) < 0 && stat(unfinished_paths[1], &st) < 0 &&
			 stat(unfinished_paths[2], &st) < 0 && !atomic_load(&returned[0]) &&
			 !atomic_load(&returned[1]);
		_exit(ok ? 0 : 4);
	}
	int status = -1;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct stat st;
	for (int i = 0; i < 3; i++)
		CHECK(stat(unfinished_paths[i], &st) < 0);
}

/* A second interrupt that comes while another thread is making a listed file (between
 * unfinished_add() and the file's existence, the thread perhaps preempted there) waits
 * for it before it removes the files: removing first would let that file appear after
 * the removal, and the _exit() that follows end the thread before it removes it. */
static atomic_int making_added, making_go, making_made, removal_started, removal_done;

static void *make_when_told(void *unused)
{
	unfinished_add(unfinished_paths[0]);
	atomic_store(&making_added, 1);
	poll_until(&making_go);
	close(open(unfinished_paths[0], O_WRONLY | O_CREAT, 0644));
	atomic_store(&making_made, 1);
	unfinished_created(unfinished_paths[0]);
	return unused;
}

static void *remove_all(void *unused)
{
	atomic_store(&removal_started, 1);
	unfinished_remove_all();
	atomic_store(&removal_done, 1);
	return unused;
}

static void test_unfinished_removal_waits_for_a_file_being_made(void)
{
	snprintf(unfinished_paths[0], sizeof(unfinished_paths[0]), "%s/making.partial",
		 workdir);
	pid_t child = fork();
	if (child == 0) {
		pthread_t maker, remover;
		struct stat st;
		if (pthread_create(&maker, NULL, make_when_told, NULL) || !poll_until(&making_added) ||
		    pthread_create(&remover, NULL, remove_all, NULL) || !poll_until(&removal_started))
			_exit(2);
		usleep(50000); /* the removal, begun, has had time to finish if it would not wait */
		if (atomic_load(&removal_done))
			_exit(3); /* it did not wait for the file being made */
		atomic_store(&making_go, 1);
		if (!poll_until(&removal_done) || pthread_join(remover, NULL))
			_exit(4);
		_exit(atomic_load(&making_made) && stat(unfinished_paths[0], &st) < 0 ? 0 : 5);
	}
	int status = -1;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct stat st;
	CHECK(stat(unfinished_paths[0], &st) < 0);
}

static void test_spool_checksum(void)
{
	unsigned char data[8192 + 64];
	uint32_t seed = 12345;
	for (size_t i = 0; i < sizeof(data); i++) {
		seed = seed * 1103515245u + 12345u;
		data[i] = (unsigned char)(seed >> 16);
	}
	int wrong = 0, checked = 0;
	for (size_t offset = 0; offset < 16; offset++)
		for (size_t len = 0; len <= 4096; len++, checked++)
			wrong += spool_crc32(data + offset, len) !=
				 (uint32_t)crc32(0, data + offset, (uInt)len);
	static const size_t lengths[] = { 8191, 8192, 8192 + 63, 5000, 1 << 12 | 17 };
	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++, checked++)
		wrong += spool_crc32(data, lengths[i]) != (uint32_t)crc32(0, data, (uInt)lengths[i]);
	/* a payload in two pieces (a ring's bytes where they wrap): the whole's value */
	for (size_t cut = 0; cut <= 4096; cut++, checked++)
		wrong += spool_crc32_more(spool_crc32(data, cut), data + cut, 4096 - cut) !=
			 (uint32_t)crc32(0, data, 4096);
	CHECK(checked == 16 * 4097 + 5 + 4097);
	CHECK(wrong == 0);
	CHECK(spool_crc32("123456789", 9) == 0xcbf43926u); /* CRC-32's check value */
}

static void test_paths(void)
{
	struct path_context ctx = { .pid = 42, .ppid = 7, .hostname = "node1", .rank = -1,
				    .size = -1, .launch_time = 86400 * 365 };
	struct strbuf out = STRBUF_INIT;
	struct error err;
	CHECK(path_expand("out/%hostname%/%pid%_%ppid%", &ctx, &out, &err) == 0);
	CHECK_STR(out.buf, "out/node1/42_7");
	CHECK(path_expand("r%rank%of%size%", &ctx, &out, &err) == 0);
	CHECK_STR(out.buf, "r42of1"); /* outside a launcher: rank is the pid, size 1 */
	ctx.rank = 3;
	ctx.size = 8;
	CHECK(path_expand("r%rank%of%size%-%nid%-%h-%p", &ctx, &out, &err) == 0);
	CHECK_STR(out.buf, "r3of8-3-node1-42");
	setenv("GPUPROF_UNIT_VALUE", "/a b/c", 1);
	CHECK(path_expand("x_%env{GPUPROF_UNIT_VALUE}%_%q{GPUPROF_UNIT_VALUE}", &ctx, &out, &err) == 0);
	CHECK_STR(out.buf, "x_a_b_c_a_b_c");
	CHECK(path_expand("100%%", &ctx, &out, &err) == 0);
	CHECK_STR(out.buf, "100%");
	CHECK(path_expand("%bogus%", &ctx, &out, &err) < 0);
	CHECK(strstr(err.message, "unknown placeholder '%bogus%'") != NULL);
	CHECK(path_expand("a%pidx", &ctx, &out, &err) < 0);
	CHECK(path_expand("%launch_date%", &ctx, &out, &err) == 0);
	CHECK(strlen(out.buf) == 10 && out.buf[4] == '-');
	strbuf_release(&out);

	int rank, size;
	setenv("OMPI_COMM_WORLD_RANK", "5", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "6", 1);
	path_launcher_rank(&rank, &size);
	CHECK(rank == 5 && size == 6);
	setenv("SLURM_PROCID", "2", 1); /* Slurm wins over the MPI library's variables */
	path_launcher_rank(&rank, &size);
	CHECK(rank == 2 && size == 6);
	unsetenv("SLURM_PROCID");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("OMPI_COMM_WORLD_SIZE");
	setenv("PMI_RANK", "1", 1);
	setenv("PMI_SIZE", "4", 1);
	path_launcher_rank(&rank, &size);
	CHECK(rank == 1 && size == 4);
	unsetenv("PMI_RANK");
	unsetenv("PMI_SIZE");
	path_launcher_rank(&rank, &size);
	CHECK(rank == -1 && size == -1);
}

static void test_options(void)
{
	int flag = -1, other = -1;
	const char *dir = NULL;
	struct option_list list = { 0 };
	unsigned long long size = 0;
	const struct option table[] = {
		{ OPTION_BOOL, 0, "kernel-trace", &flag, NULL, "" },
		{ OPTION_BOOL, 's', "sys-trace", &other, NULL, "" },
		{ OPTION_STRING, 'd', "output-directory", &dir, "DIR", "" },
		{ OPTION_LIST, 'f', "output-format", &list, "F", "", "csv|sqlite|json" },
		{ OPTION_SIZE, 0, "buffer-size", &size, "SIZE", "" },
		OPTION_END,
	};
	char *argv1[] = { "x", "--kernel-trace=false", "-s", "-dout", "-f", "csv,sqlite", "json",
			  "--buffer-size", "4M", "--", "prog", "-a", NULL };
	int next;
	struct error err;
	CHECK(options_parse(table, 12, argv1, &next, &err) == 0);
	CHECK(flag == 0 && other == 1);
	CHECK_STR(dir, "out");
	CHECK(list.count == 3);
	CHECK_STR(list.items[2], "json");
	CHECK(size == 4u << 20);
	CHECK(next == 10);
	CHECK_STR(argv1[next], "prog");

	/* an enum whose value may be left out: before an option or --, it is the default */
	const char *mode = NULL;
	const struct option optional[] = {
		{ OPTION_ENUM, 0, "multiplex", &mode, "kernel|launch", "", "launch" },
		{ OPTION_BOOL, 0, "kernel-trace", &flag, NULL, "" },
		OPTION_END,
	};
	char *alone[] = { "x", "--multiplex", "--", "prog", NULL };
	CHECK(options_parse(optional, 4, alone, &next, &err) == 0);
	CHECK_STR(mode, "launch");
	CHECK(next == 3);
	char *before_option[] = { "x", "--multiplex", "--kernel-trace", NULL };
	CHECK(options_parse(optional, 3, before_option, &next, &err) == 0 && flag == 1);
	CHECK_STR(mode, "launch");
	char *given[] = { "x", "--multiplex", "kernel", "prog", NULL };
	CHECK(options_parse(optional, 4, given, &next, &err) == 0 && next == 3);
	CHECK_STR(mode, "kernel");
	char *wrong[] = { "x", "--multiplex", "sometimes", "--", "prog", NULL };
	CHECK(options_parse(optional, 5, wrong, &next, &err) < 0); /* a word is the value */

	char *argv2[] = { "x", "--kernel-trase", NULL };
	CHECK(options_parse(table, 2, argv2, &next, &err) < 0);
	CHECK_STR(err.message, "unknown option '--kernel-trase'; did you mean '--kernel-trace'?");
	char *argv3[] = { "x", "--kernel-trace=maybe", NULL };
	CHECK(options_parse(table, 2, argv3, &next, &err) < 0);
	char *argv4[] = { "x", "--output-directory", NULL };
	CHECK(options_parse(table, 2, argv4, &next, &err) < 0);
	CHECK(strstr(err.message, "needs a value") != NULL);
	char *argv5[] = { "x", "--buffer-size", "12Q", NULL };
	CHECK(options_parse(table, 3, argv5, &next, &err) < 0);
	char *argv6[] = { "x", "--completely-unrelated", NULL };
	CHECK(options_parse(table, 2, argv6, &next, &err) < 0);
	CHECK_STR(err.message, "unknown option '--completely-unrelated'");
	CHECK(options_edit_distance("trace", "trcae") == 2);
	options_release();
}

/* Welch's test against Student's t table (two-sided p of the critical values) and a
 * case where it is Student's test: equal sizes and variances, t = -2 on 8 degrees of
 * freedom, p = 0.080516 */
static void test_welch(void)
{
	const struct {
		double t, df, p;
	} table[] = { { 2.228139, 10, 0.05 }, { 12.706205, 1, 0.05 }, { 4.032143, 5, 0.01 },
		      { 2.042272, 30, 0.05 }, { 0, 7, 1 } };
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		double x = table[i].df / (table[i].df + table[i].t * table[i].t);
		CHECK(fabs(stats_incomplete_beta(x, table[i].df / 2, 0.5) - table[i].p) < 2e-6);
	}
	CHECK(fabs(stats_incomplete_beta(0.3, 2.5, 1) - pow(0.3, 2.5)) < 1e-12);
	CHECK(fabs(stats_incomplete_beta(0.3, 1, 4) - (1 - pow(0.7, 4))) < 1e-12);
	/* Student's two-sided tail: with 2 degrees of freedom 1 - t / sqrt(2 + t^2); the
	 * tables' 5 % of 4 and 1 % of 2 degrees */
	double t2 = 60 / (10 * sqrt(4.0 / 3));
	CHECK(fabs(stats_student_p(t2, 2) - (1 - t2 / sqrt(2 + t2 * t2))) < 1e-12);
	CHECK(fabs(stats_student_p(-t2, 2) - stats_student_p(t2, 2)) < 1e-15);
	CHECK(fabs(stats_student_p(2.776445, 4) - 0.05) < 1e-6);
	CHECK(fabs(stats_student_p(9.924843, 2) - 0.01) < 1e-6);
	struct stats_table t;
	stats_init(&t);
	stats_add(&t, "k", 10);
	stats_add(&t, "k", 20);
	CHECK(stats_find(&t, "k") && stats_find(&t, "k")->calls == 2 && !stats_find(&t, "j"));
	stats_release(&t);
}

static void test_stats(void)
{
	struct stats_table t;
	stats_init(&t);
	uint64_t a[] = { 2, 4, 4, 4, 5, 5, 7, 9 }; /* mean 5, population stddev 2 */
	for (int i = 0; i < 8; i++)
		stats_add(&t, "a", a[i]);
	stats_add(&t, "b", 100);
	for (int i = 0; i < 1000; i++) /* many names force the index to grow */
		stats_add(&t, i % 2 ? "c" : "d", 1);
	stats_finish(&t);
	CHECK(t.count == 4);
	CHECK_STR(t.rows[0].name, "c");
	CHECK_STR(t.rows[1].name, "d");
	CHECK_STR(t.rows[2].name, "b");
	const struct stats_row *r = &t.rows[3];
	CHECK(r->calls == 8 && r->total_ns == 40 && r->min_ns == 2 && r->max_ns == 9);
	CHECK(fabs(r->mean_ns - 5.0) < 1e-9);
	CHECK(fabs(r->stddev_ns - 2.0) < 1e-9);
	CHECK(fabs(r->percentage - 100.0 * 40 / 1140) < 1e-9);
	stats_release(&t);
}

/* An append that finds no memory, in gpuprof's libraries inside a program (this test
 * links the recorder, which makes its process fail softly): left out, the buffer as it
 * was, `failed` set; later appends go on. */
/* Appends a string record (id, text) to a chunk. */
static size_t add_string(unsigned char *chunk, size_t used, uint32_t id, const char *text)
{
	struct record_string *r = (void *)(chunk + used);
	uint32_t length = (uint32_t)strlen(text);
	r->header = (struct record_header){ RECORD_PADDED(sizeof(*r) + length), RECORD_STRING, 0 };
	r->id = id;
	r->length = length;
	memcpy(r->text, text, length);
	return used + r->header.size;
}

/* PC samples from a spool through the database into a compute workload's pc_sampling.csv
 * and back: the same rows, each sample counted once. */
static void test_pc_samples_csv(void)
{
	_Alignas(8) unsigned char chunk[4096];
	memset(chunk, 0, sizeof(chunk));
	size_t used = 0;
	const char *strings[] = { "host", "./app", "k(int)",
				  "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
				  "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
				  "smsp__pcsamp_warps_issue_stalled_wait", "/src/a \"b\".cu" };
	for (uint32_t i = 0; i < 7; i++)
		used = add_string(chunk, used, i + 1, strings[i]);
	struct record_process *p = (void *)(chunk + used);
	*p = (struct record_process){ .header = { sizeof(*p), RECORD_PROCESS, 0 }, .pid = 7,
				      .start_ns = 1000, .hostname_id = 1, .command_id = 2,
				      .rank = -1, .size = -1 };
	used += sizeof(*p);
	const struct { uint64_t pc; uint32_t reason, samples, file, line; } rows[] = {
		{ 0x20, 4, 30, 7, 9 }, { 0x20, 5, 25, 7, 9 }, { 0x30, 6, 10, 0, 0 },
		{ 0x20, 4, 5, 7, 9 }, /* a second buffer of the same instruction: added up */
	};
	for (int i = 0; i < 4; i++) {
		struct record_pc_sample *r = (void *)(chunk + used);
		*r = (struct record_pc_sample){ .header = { sizeof(*r), RECORD_PC_SAMPLE, 0 },
						.cubin_crc = 0xab, .pc_offset = rows[i].pc,
						.agent_id = 1, .function_id = 3,
						.reason_id = rows[i].reason, .samples = rows[i].samples,
						.file_id = rows[i].file, .line = rows[i].line };
		used += sizeof(*r);
	}
	char spool[256], db_path[256], csv[256];
	snprintf(spool, sizeof(spool), "%s/pc.spool", workdir);
	snprintf(db_path, sizeof(db_path), "%s/pc.db", workdir);
	snprintf(csv, sizeof(csv), "%s/pc_sampling.csv", workdir);
	int fd = open(spool, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(spool_write_header(fd, NULL) == 0);
	CHECK(spool_write_chunk(fd, chunk, (uint32_t)used, 12, NULL) == 0);
	close(fd);
	struct recording rec;
	struct error err;
	CHECK(recording_read(&rec, spool, &err) == 0);
	CHECK(store_write(&rec, spool, db_path, &err) == 0);
	recording_release(&rec);
	sqlite3 *db;
	CHECK(store_open(db_path, &db, &err) == 0);
	FILE *out = fopen(csv, "w");
	size_t written = 0;
	CHECK(pc_samples_write_csv(db, out, &written, &err) == 0 && written == 3);
	fclose(out);
	sqlite3_close(db);
	struct strbuf text = STRBUF_INIT;
	FILE *in = fopen(csv, "r");
	char buffer[1024];
	size_t n = fread(buffer, 1, sizeof(buffer), in);
	fclose(in);
	strbuf_add(&text, buffer, n);
	CHECK_STR(text.buf, "\"Kernel_Name\",\"Cubin_Crc\",\"Pc_Offset\",\"Source_File\",\"Line\","
			    "\"Stall_Reason\",\"Not_Issued\",\"Samples\"\n"
			    "\"k(int)\",\"00000000000000ab\",32,\"/src/a \"\"b\"\".cu\",9,"
			    "\"long_scoreboard\",0,35\n"
			    "\"k(int)\",\"00000000000000ab\",32,\"/src/a \"\"b\"\".cu\",9,"
			    "\"long_scoreboard\",1,25\n"
			    "\"k(int)\",\"00000000000000ab\",48,\"\",0,\"wait\",0,10\n");
	struct pc_samples ps;
	CHECK(pc_samples_init(&ps, &err) == 0);
	CHECK(pc_samples_read_csv(&ps, csv, text.buf, text.len, &err) == 0);
	CHECK(ps.samples == 45); /* 35 + 10: the not-issued 25 are among the 35 */
	const char *other[] = { "other" };
	CHECK(pc_samples_keep_kernels(&ps, other, 1, &err) == 0 && ps.samples == 0);
	pc_samples_release(&ps);
	/* a damaged row is refused with its line */
	CHECK(pc_samples_init(&ps, &err) == 0);
	strbuf_addstr(&text, "\"k\",\"ab\",x,\"\",0,\"wait\",0,1\n");
	CHECK(pc_samples_read_csv(&ps, "pc_sampling.csv", text.buf, text.len, &err) < 0);
	CHECK(strstr(err.message, "pc_sampling.csv:5:") != NULL);
	pc_samples_release(&ps);
	strbuf_release(&text);
}

static void test_strbuf_without_memory(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("skipped: strbuf without memory (a sanitizer's allocator ends a process that "
	       "asks for more memory than it can give)\n");
#else
	strbuf_fail_softly();
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "kept");
	CHECK(strbuf_grow(&sb, (size_t)1 << 60) == -1);
	CHECK(sb.failed && sb.len == 4);
	CHECK_STR(sb.buf, "kept");
	CHECK(strbuf_grow(&sb, SIZE_MAX) == -1); /* no overflow: refused */
	strbuf_addstr(&sb, "!");
	CHECK_STR(sb.buf, "kept!");
	strbuf_release(&sb);
	CHECK(!sb.failed && sb.len == 0);
#endif
}

static void test_names_and_csv(void)
{
	struct strbuf out = STRBUF_INIT;
	writer_truncate_name("void at::native::kernel<4, at::Functor<float> >(int, float*)", &out);
	CHECK_STR(out.buf, "kernel");
	writer_truncate_name("ns::inner::k(float*)", &out);
	CHECK_STR(out.buf, "k");
	writer_truncate_name("vecCopy", &out);
	CHECK_STR(out.buf, "vecCopy");
	writer_truncate_name("Functor::operator()(int)", &out);
	CHECK_STR(out.buf, "operator()");

	strbuf_reset(&out);
	csv_text(&out, "a \"quoted\", name");
	csv_int(&out, -12);
	csv_int(&out, 0);
	csv_int(&out, INT64_MAX);
	CHECK_STR(out.buf, "\"a \"\"quoted\"\", name\",-12,0,9223372036854775807");
	strbuf_release(&out);
}

/* The recorder, for real: four threads emit records concurrently; the spool must hold
 * every one exactly once, with the strings and the process record. */
#define THREADS 4
#define PER_THREAD 20000

static void *emit_kernels(void *arg)
{
	uint32_t name = recorder_intern("unit_kernel");
	for (int i = 0; i < PER_THREAD; i++) {
		struct record_kernel k = {
			.header = { sizeof(k), RECORD_KERNEL, 0 },
			.name_id = name,
			.dispatch_id = (uint64_t)(uintptr_t)arg * PER_THREAD + (uint64_t)i + 1,
		};
		while (recorder_emit(&k) < 0) /* a full buffer: wait for the writer */
			usleep(1000);
	}
	return NULL;
}

/* A backend whose records arrive only in the final collection at exit (CUPTI's last
 * buffers): the names it interns then must reach the spool like any other. */
static int final_collect(int final)
{
	static int done;
	if (!final || done++)
		return 0;
	struct record_kernel k = {
		.header = { sizeof(k), RECORD_KERNEL, 0 },
		.name_id = recorder_intern("final_kernel"),
		.dispatch_id = THREADS * PER_THREAD + 1,
	};
	CHECK(k.name_id != 0);
	CHECK(recorder_emit(&k) == 0);
	return 0;
}

/* Points the recorder at workdir/<subdir>/<pid>.spool, as `gpuprof trace` would. */
static void recorder_environment(const char *file, const char *manifest)
{
	close(open(manifest, O_WRONLY | O_CREAT | O_TRUNC, 0644));
	setenv("GPUPROF_OUTPUT_PATH", workdir, 1);
	setenv("GPUPROF_OUTPUT_FILE", file, 1);
	setenv("GPUPROF_MANIFEST", manifest, 1);
	setenv("GPUPROF_BUFFER_SIZE", "65536", 1);
}

static void test_recorder(void)
{
	char manifest[300];
	snprintf(manifest, sizeof(manifest), "%s/manifest", workdir);
	recorder_environment("rec/%pid%", manifest);
	CHECK(recorder_ready() == 1);
	pthread_t t[THREADS];
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, emit_kernels, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	recorder_add_collector(final_collect);
	char spool[300];
	snprintf(spool, sizeof(spool), "%s", recorder_spool_path());
	recorder_stop();
	CHECK(recorder_emit(&(struct record_process_end){ { sizeof(struct record_process_end),
							    RECORD_PROCESS_END, 0 }, 0 }) < 0);

	char expected[300], line[300] = "";
	snprintf(expected, sizeof(expected), "%s/rec/%d.spool\n", workdir, (int)getpid());
	CHECK_STR(spool, (expected[strlen(expected) - 1] = '\0', expected));
	FILE *f = fopen(manifest, "r");
	size_t got = f ? fread(line, 1, sizeof(line) - 1, f) : 0;
	if (f)
		fclose(f);
	CHECK(got == strlen(spool) + 1 && line[got - 1] == '\0'); /* the path and its NUL */
	CHECK_STR(line, spool);

	struct spool_reader r;
	struct error err;
	CHECK(spool_reader_open(&r, spool, &err) == 0);
	static unsigned char seen[THREADS * PER_THREAD + 1];
	int kernels = 0, duplicates = 0, processes = 0, ends = 0, strings = 0, hosts = 0;
	uint32_t final_name = 0, final_kernel_name = UINT32_MAX;
	const struct record_header *h;
	while (spool_reader_next(&r, &h, &err) > 0) {
		if (h->type == RECORD_STRING) {
			const struct record_string *s = (const struct record_string *)h;
			if (s->length == strlen("final_kernel") &&
			    !memcmp(s->text, "final_kernel", s->length))
				final_name = s->id;
		}
		if (h->type == RECORD_KERNEL &&
		    ((const struct record_kernel *)h)->dispatch_id == THREADS * PER_THREAD + 1)
			final_kernel_name = ((const struct record_kernel *)h)->name_id;
		hosts += h->type == RECORD_AGENT && ((const struct record_agent *)h)->id == 0 &&
			 ((const struct record_agent *)h)->type == AGENT_CPU;
		if (h->type == RECORD_KERNEL) {
			uint64_t id = ((const struct record_kernel *)h)->dispatch_id;
			if (id <= THREADS * PER_THREAD)
				duplicates += seen[id]++ > 0;
			kernels++;
		}
		processes += h->type == RECORD_PROCESS;
		ends += h->type == RECORD_PROCESS_END;
		strings += h->type == RECORD_STRING;
	}
	spool_reader_release(&r);
	CHECK(kernels == THREADS * PER_THREAD + 1);
	CHECK(duplicates == 0);
	CHECK(final_name != 0 && final_kernel_name == final_name);
	CHECK(processes == 1);
	CHECK(ends == 1);
	CHECK(hosts == 1); /* the recorder describes the host CPU itself */
	CHECK(strings == 6); /* hostname, command line, CPU model, "", unit_kernel, final_kernel */
}

/* fork(): the child records into a spool of its own that starts with the inherited
 * strings; the parent's records stay in the parent's spool only. */
static void count_spool(const char *path, int *kernels, int *strings, int *processes)
{
	struct spool_reader r;
	struct error err;
	*kernels = *strings = *processes = -1;
	if (spool_reader_open(&r, path, &err))
		return;
	*kernels = *strings = *processes = 0;
	const struct record_header *h;
	while (spool_reader_next(&r, &h, &err) > 0) {
		*kernels += h->type == RECORD_KERNEL;
		*strings += h->type == RECORD_STRING;
		*processes += h->type == RECORD_PROCESS;
	}
	spool_reader_release(&r);
}

static void emit_one(uint32_t name)
{
	struct record_kernel k = { .header = { sizeof(k), RECORD_KERNEL, 0 }, .name_id = name };
	recorder_emit(&k);
}

#ifdef __SANITIZE_THREAD__
static const int thread_sanitizer = 1;
#else
static const int thread_sanitizer = 0;
#endif

static void test_recorder_fork(void)
{
	char manifest[300];
	snprintf(manifest, sizeof(manifest), "%s/fork-manifest", workdir);
	recorder_environment("fork/%pid%", manifest);
	CHECK(recorder_ready() == 1);
	uint32_t name = recorder_intern("before_fork");
	for (int i = 0; i < 10; i++)
		emit_one(name); /* not flushed yet when fork() happens */
	char parent_spool[300];
	snprintf(parent_spool, sizeof(parent_spool), "%s", recorder_spool_path());
	pid_t pid = fork();
	if (pid == 0) {
		uint32_t own = recorder_intern("in_child");
		for (int i = 0; i < 3; i++)
			emit_one(own);
		recorder_stop();
		_exit(own == name + 1 ? 0 : 1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	emit_one(name);
	recorder_stop();
	char child_spool[300];
	snprintf(child_spool, sizeof(child_spool), "%s/fork/%d.spool", workdir, (int)pid);
	int kernels, strings, processes;
	count_spool(parent_spool, &kernels, &strings, &processes);
	CHECK(kernels == 11 && processes == 1);
	count_spool(child_spool, &kernels, &strings, &processes);
	CHECK(kernels == 3 && processes == 1);
	CHECK(strings >= 2); /* the inherited ones and its own */
}

/* The recorder starts once per process: the fork test runs in a child of its own, so
 * that the recorder test (last) gets a fresh one. */
static void test_recorder_in_child(void)
{
	if (thread_sanitizer) {
		printf("skipped: the fork test (ThreadSanitizer cannot follow a thread started "
		       "after a multi-threaded fork)\n");
		return;
	}
	int failed_before = check_failed, status = -1;
	pid_t runner = fork();
	if (runner == 0) {
		test_recorder_fork();
		_exit(check_failed != failed_before ? 1 : 0);
	}
	waitpid(runner, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
	static const struct check_test tests[] = {
		CHECK_TEST(spool), CHECK_TEST(spool_file_size_limit), CHECK_TEST(unfinished_after_removal),
		CHECK_TEST(unfinished_removal_waits_for_a_file_being_made),
		CHECK_TEST(spool_checksum), CHECK_TEST(paths), CHECK_TEST(options), CHECK_TEST(stats),
		CHECK_TEST(welch), CHECK_TEST(names_and_csv), CHECK_TEST(strbuf_without_memory),
		CHECK_TEST(pc_samples_csv), CHECK_TEST(recorder_in_child), CHECK_TEST(recorder),
	};
	if (!mkdtemp(workdir)) {
		perror("mkdtemp");
		return 1;
	}
	int rc = check_main(argc, argv, "test-core", tests, sizeof(tests) / sizeof(tests[0]));
	char command[400];
	snprintf(command, sizeof(command), "rm -rf '%s'", workdir);
	if (system(command) != 0)
		fprintf(stderr, "cannot remove %s\n", workdir);
	return rc;
}
