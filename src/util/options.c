/* Table-driven option parsing (see options.h). */
#include "util/options.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/strbuf.h"

int options_parse_bool(const char *s)
{
	static const char *yes[] = { "1", "y", "yes", "t", "true", "on" };
	static const char *no[] = { "0", "n", "no", "f", "false", "off" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i]))
			return 1;
		if (!strcasecmp(s, no[i]))
			return 0;
	}
	return -1;
}

int options_parse_size(const char *s, unsigned long long *out)
{
	char *end;
	if (!*s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned long long mult = 1;
	switch (toupper((unsigned char)*end)) {
	case 'K': mult = 1ULL << 10; end++; break;
	case 'M': mult = 1ULL << 20; end++; break;
	case 'G': mult = 1ULL << 30; end++; break;
	case '\0': break;
	default: return -1;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || v > (~0ULL) / mult)
		return -1;
	*out = v * mult;
	return 0;
}

int options_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 99;
	int row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = a[i - 1] == b[j - 1] ? 0 : 1;
			int best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const struct option *find_long(const struct option *table, const char *name, size_t len)
{
	for (const struct option *o = table; o->long_name || o->help; o++)
		if (o->type != OPTION_SECTION && o->long_name && strlen(o->long_name) == len &&
		    !strncmp(o->long_name, name, len))
			return o;
	return NULL;
}

static const struct option *find_short(const struct option *table, char c)
{
	for (const struct option *o = table; o->long_name || o->help; o++)
		if (o->type != OPTION_SECTION && o->short_name == c)
			return o;
	return NULL;
}

static int unknown_option(const struct option *table, const char *arg, size_t len,
			  struct error *err)
{
	const char *best = NULL;
	int best_distance = 99;
	char name[128];
	snprintf(name, sizeof(name), "%.*s", (int)len, arg);
	for (const struct option *o = table; o->long_name || o->help; o++) {
		if (o->type == OPTION_SECTION || !o->long_name)
			continue;
		int d = options_edit_distance(name, o->long_name);
		if (d < best_distance) {
			best_distance = d;
			best = o->long_name;
		}
	}
	int limit = (int)strlen(name) / 3 + 1;
	if (best && best_distance <= limit)
		return error_set(err, "unknown option '--%s'; did you mean '--%s'?", name, best);
	return error_set(err, "unknown option '--%s'", name);
}

/* Every value parsing copies (those of lists): lists share them freely (a job of an input
 * file starts from the command line's lists), and options_release() frees them all. */
static struct copy {
	struct copy *next;
	char text[];
} *copies;

static char *copy_text(const char *text, size_t length)
{
	struct copy *c = malloc(sizeof(*c) + length + 1);
	if (!c)
		return NULL;
	memcpy(c->text, text, length);
	c->text[length] = '\0';
	c->next = copies;
	copies = c;
	return c->text;
}

void options_release(void)
{
	while (copies) {
		struct copy *next = copies->next;
		free(copies);
		copies = next;
	}
}

static int list_add(struct option_list *list, const char *value, const char *label,
		    struct error *err)
{
	for (const char *p = value; *p;) {
		size_t length = strcspn(p, ", ");
		if (!length) {
			p++;
			continue;
		}
		if (list->count == (int)(sizeof(list->items) / sizeof(list->items[0])))
			return error_set(err, "too many values for %s", label);
		if (!(list->items[list->count] = copy_text(p, length)))
			return error_set(err, "out of memory");
		list->count++;
		p += length;
	}
	return 0;
}

/* value is one of the '|'-separated words */
static int is_word(const char *words, const char *value)
{
	size_t n = strlen(value);
	for (const char *p = words; p && *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, value, n))
			return 1;
		p += len + (bar ? 1 : 0);
	}
	return 0;
}

static int enum_check(const struct option *o, const char *value, struct error *err)
{
	if (is_word(o->arg_name, value))
		return 0;
	return error_set(err, "invalid value '%s' for --%s (choose from %s)", value,
			 o->long_name, o->arg_name);
}

/* Stores a value for o. `value` is NULL for a bare boolean flag. */
static int store(const struct option *o, const char *value, const char *label,
		 struct error *err)
{
	switch (o->type) {
	case OPTION_BOOL: {
		int v = value ? options_parse_bool(value) : 1;
		if (v < 0)
			return error_set(err, "invalid value '%s' for %s (expected true or false)",
					 value, label);
		*(int *)o->value = v;
		return 0;
	}
	case OPTION_STRING:
		*(const char **)o->value = value;
		return 0;
	case OPTION_ENUM:
		if (enum_check(o, value, err))
			return -1;
		*(const char **)o->value = value;
		return 0;
	case OPTION_LIST:
		return list_add(o->value, value, label, err);
	case OPTION_SIZE:
		if (options_parse_size(value, o->value))
			return error_set(err, "invalid size '%s' for %s (expected a number of bytes, "
					 "optionally with K, M or G)", value, label);
		return 0;
	case OPTION_SECTION:
		break;
	}
	return error_set(err, "internal error: bad option table");
}

int options_parse(const struct option *table, int argc, char **argv, int *next,
		  struct error *err)
{
	int i = 1;
	while (i < argc) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-' || arg[1] == '\0')
			break;
		const struct option *o;
		const char *inline_value = NULL;
		char label[160];
		if (arg[1] == '-') {
			const char *name = arg + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			o = find_long(table, name, len);
			/* --no-NAME turns a boolean off, as --NAME=false does */
			const struct option *negated = !o && !eq && len > 3 && !strncmp(name, "no-", 3)
						       ? find_long(table, name + 3, len - 3) : NULL;
			if (negated && negated->type == OPTION_BOOL) {
				snprintf(label, sizeof(label), "--%s", name);
				if (store(negated, "false", label, err))
					return -1;
				i++;
				continue;
			}
			if (!o)
				return unknown_option(table, name, len, err);
			inline_value = eq ? eq + 1 : NULL;
			snprintf(label, sizeof(label), "--%s", o->long_name);
		} else {
			o = find_short(table, arg[1]);
			if (!o)
				return error_set(err, "unknown option '-%c'", arg[1]);
			if (arg[2])
				inline_value = arg + 2;
			snprintf(label, sizeof(label), "-%c", o->short_name);
		}
		i++;
		if (o->type == OPTION_BOOL) {
			if (store(o, inline_value, label, err))
				return -1;
			continue;
		}
		const char *value = inline_value;
		if (!value && o->type == OPTION_ENUM && o->words &&
		    (i >= argc || argv[i][0] == '-'))
			value = o->words; /* a value that may be left out, and was (before an
					   * option or --; a word is the value, checked) */
		if (!value) {
			/* "--" ends the options: it is never a value (-d -- ./app) */
			if (i >= argc || !strcmp(argv[i], "--"))
				return error_set(err, "option %s needs a value (%s)", label,
						 o->arg_name ? o->arg_name : "VALUE");
			value = argv[i++];
		}
		if (store(o, value, label, err))
			return -1;
		if (o->type == OPTION_LIST)
			while (i < argc && is_word(o->words, argv[i]))
				if (store(o, argv[i++], label, err))
					return -1;
	}
	*next = i;
	return 0;
}

void options_print_help(FILE *out, const char *usage, const char *description,
			const struct option *table)
{
	fprintf(out, "usage: %s\n", usage);
	if (description)
		fprintf(out, "\n%s\n", description);
	for (const struct option *o = table; o->long_name || o->help; o++) {
		if (o->type == OPTION_SECTION) {
			fprintf(out, "\n%s:\n", o->help);
			continue;
		}
		char left[96];
		int n = 0;
		if (o->short_name)
			n = snprintf(left, sizeof(left), "  -%c, ", o->short_name);
		else
			n = snprintf(left, sizeof(left), "      ");
		const char *arg = o->type == OPTION_BOOL ? NULL : o->arg_name;
		if (!o->long_name) /* a short form alone: an older spelling kept */
			snprintf(left, sizeof(left), "  -%c%s%s", o->short_name, arg ? " " : "",
				 arg ? arg : "");
		else if (o->type == OPTION_ENUM)
			snprintf(left + n, sizeof(left) - (size_t)n, "--%s {%s}", o->long_name, arg);
		else
			snprintf(left + n, sizeof(left) - (size_t)n, "--%s%s%s", o->long_name,
				 arg ? " " : "", arg ? arg : "");
		if (strlen(left) > 32)
			fprintf(out, "%s\n%34s%s\n", left, "", o->help);
		else
			fprintf(out, "%-34s%s\n", left, o->help);
	}
}

int options_parse_mixed(const struct option *table, int argc, char **argv, char ***operands,
			int *count, struct error *err)
{
	char **found = xcalloc((size_t)argc + 1, sizeof(*found));
	int n = 0, next;
	/* in rounds: options up to an operand, then the operands up to an option */
	for (int at = 0; at < argc;) {
		if (options_parse(table, argc - at, argv + at, &next, err)) {
			free(found);
			return -1;
		}
		int after_dashes = !strcmp(argv[at + next - 1], "--");
		at += next;
		while (at < argc && (after_dashes || argv[at][0] != '-' || !argv[at][1]))
			found[n++] = argv[at++];
		if (at < argc)
			at--; /* options_parse skips argv[0] */
	}
	*operands = found;
	*count = n;
	return 0;
}
