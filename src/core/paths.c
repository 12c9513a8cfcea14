/* Output path templates (see paths.h). */
#include "core/paths.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int env_int(const char *name, int *out)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	long n = strtol(v, &end, 10);
	if (*end || n < 0 || n > INT_MAX)
		return 0;
	*out = (int)n;
	return 1;
}

void path_launcher_rank(int *rank, int *size)
{
	/* the last: torch.distributed.run's (torchrun's) */
	static const char *rank_vars[] = { "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					   "PMIX_RANK", "MV2_COMM_WORLD_RANK", "MPI_RANK",
					   "MPI_RANKID", "RANK", NULL };
	static const char *size_vars[] = { "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
					   "MV2_COMM_WORLD_SIZE", "MPI_SIZE", "WORLD_SIZE", NULL };
	*rank = -1;
	*size = -1;
	for (int i = 0; rank_vars[i]; i++)
		if (env_int(rank_vars[i], rank))
			break;
	for (int i = 0; size_vars[i]; i++)
		if (env_int(size_vars[i], size))
			break;
}

void path_context_current(struct path_context *ctx)
{
	static char hostname[256];
	if (!hostname[0] && gethostname(hostname, sizeof(hostname) - 1) < 0)
		strcpy(hostname, "localhost");
	ctx->pid = getpid();
	ctx->ppid = getppid();
	ctx->hostname = hostname;
	path_launcher_rank(&ctx->rank, &ctx->size);
	const char *launch = getenv("GPUPROF_LAUNCH_TIME");
	char *end;
	long long t = launch ? strtoll(launch, &end, 10) : 0;
	ctx->launch_time = launch && !*end && t > 0 ? (time_t)t : time(NULL);
}

/* Environment values lose leading '/', spaces and tabs, and inner ones become '_' so
 * they cannot escape the output directory. */
static void add_env_value(struct strbuf *out, const char *value)
{
	while (*value == '/' || *value == ' ' || *value == '\t')
		value++;
	for (; *value; value++)
		strbuf_addch(out, *value == '/' || *value == ' ' || *value == '\t' ? '_' : *value);
}

static void add_time(struct strbuf *out, time_t t, int with_time)
{
	char text[64];
	struct tm tm;
	localtime_r(&t, &tm);
	if (with_time)
		strftime(text, sizeof(text), "%F_%H.%M", &tm);
	else
		strftime(text, sizeof(text), "%F", &tm);
	strbuf_addstr(out, text);
}

int path_expand(const char *template, const struct path_context *ctx, struct strbuf *out,
		struct error *err)
{
	strbuf_reset(out);
	for (const char *p = template; *p;) {
		if (*p != '%') {
			strbuf_addch(out, *p++);
			continue;
		}
		const char *key = p + 1;
		if (!strncmp(key, "env{", 4) || !strncmp(key, "q{", 2)) {
			const char *open = strchr(key, '{');
			const char *close = strchr(open, '}');
			if (!close)
				return error_set(err, "unterminated placeholder in '%s'", template);
			char name[256];
			snprintf(name, sizeof(name), "%.*s", (int)(close - open - 1), open + 1);
			const char *value = getenv(name);
			add_env_value(out, value ? value : "");
			p = close + 1;
			if (key[0] == 'e') {
				if (*p != '%')
					return error_set(err, "placeholder %%env{%s} must end with '%%' "
							 "in '%s'", name, template);
				p++;
			}
			continue;
		}
		const char *end = strchr(key, '%');
		size_t len = end ? (size_t)(end - key) : 0;
		int rank = ctx->rank >= 0 ? ctx->rank : (int)ctx->pid;
		int size = ctx->size >= 0 ? ctx->size : 1;
		int nid = ctx->rank >= 0 ? ctx->rank : (int)ctx->pid;
#define IS(word) (end && len == sizeof(word) - 1 && !strncmp(key, word, len))
		if (end && len == 0)
			strbuf_addch(out, '%');
		else if (IS("pid"))
			strbuf_addf(out, "%d", (int)ctx->pid);
		else if (IS("ppid"))
			strbuf_addf(out, "%d", (int)ctx->ppid);
		else if (IS("hostname"))
			strbuf_addstr(out, ctx->hostname);
		else if (IS("rank"))
			strbuf_addf(out, "%d", rank);
		else if (IS("size"))
			strbuf_addf(out, "%d", size);
		else if (IS("nid"))
			strbuf_addf(out, "%d", nid);
		else if (IS("launch_date"))
			add_time(out, ctx->launch_time, 0);
		else if (IS("launch_time"))
			add_time(out, ctx->launch_time, 1);
		else if (strchr("hprs", *key) && *key && !(isalnum((unsigned char)key[1]) || key[1] == '_')) {
			/* the one-letter forms: %h %p %r %s */
			if (*key == 'h')
				strbuf_addstr(out, ctx->hostname);
			else
				strbuf_addf(out, "%d", *key == 'p' ? (int)ctx->pid : *key == 'r' ? rank : size);
			p = key + 1;
			continue;
		} else if (!end)
			return error_set(err, "unterminated placeholder in '%s' (a literal '%%' is "
					 "written '%%%%')", template);
		else
			return error_set(err, "unknown placeholder '%%%.*s%%' in '%s' (known: %%pid%%, "
					 "%%ppid%%, %%hostname%%, %%rank%%, %%size%%, %%nid%%, "
					 "%%env{NAME}%%, %%q{NAME}, %%launch_date%%, %%launch_time%%; "
					 "a literal '%%' is written '%%%%')",
					 (int)len, key, template);
#undef IS
		p = end + 1;
	}
	if (out->len >= PATH_MAX)
		return error_set(err, "output path too long (%zu bytes) from '%s'", out->len,
				 template);
	return 0;
}

int path_make_parents(const char *path, int leaf_is_file, struct error *err)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return error_set(err, "path too long: '%s'", path);
	if (leaf_is_file) {
		char *slash = strrchr(buf, '/');
		if (!slash)
			return 0;
		*slash = '\0';
	}
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (buf[0] && mkdir(buf, 0777) < 0 && errno != EEXIST)
			return error_set(err, "cannot create directory '%s': %s", buf, strerror(errno));
		if (saved == '\0')
			break;
		*p = saved;
	}
	struct stat st;
	if (buf[0] && (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode)))
		return error_set(err, "cannot create directory '%s': not a directory", buf);
	return 0;
}

int path_check_writable(const char *path, struct error *err)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", *path ? path : ".") >= (int)sizeof(buf))
		return error_set(err, "path too long: '%s'", path);
	struct stat st;
	for (;;) {
		if (stat(buf, &st) == 0) {
			if (!S_ISDIR(st.st_mode))
				return error_set(err, "cannot write to '%s': '%s' is not a directory",
						 path, buf);
			if (access(buf, W_OK | X_OK) < 0)
				return error_set(err, "cannot write to '%s': %s", path, strerror(errno));
			return 0;
		}
		if (errno != ENOENT && errno != ENOTDIR)
			return error_set(err, "cannot write to '%s': %s", path, strerror(errno));
		char *slash = strrchr(buf, '/');
		if (!slash) {
			strcpy(buf, ".");
			continue;
		}
		if (slash == buf)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

void path_output_template(struct strbuf *out, const char *dir, const char *file)
{
	if (file[0] == '/')
		strbuf_addstr(out, file);
	else
		strbuf_addf(out, "%s/%s", dir, file);
}
