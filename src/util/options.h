/* Table-driven command-line options: one table per command drives parsing, `-h`
 * output and "did you mean" suggestions.
 *
 * Contract: options_parse() never exits and never prints; on a bad command line it
 * returns -1 with a one-line message in err. Parsing stops at the first operand or
 * after `--`; *next receives the index of the first unparsed argument. */
#ifndef GPUPROF_UTIL_OPTIONS_H
#define GPUPROF_UTIL_OPTIONS_H

#include <stdio.h>

#include "util/error.h"

enum option_type {
	OPTION_SECTION, /* not an option: a heading in the help output */
	OPTION_BOOL,    /* int: -1 unset, 0 or 1; `--x`, `--x=false`, `--x no` is not accepted */
	OPTION_STRING,  /* const char *: the last value given wins */
	OPTION_LIST,    /* struct option_list: values split at commas; the arguments that
	                   follow are taken too while they are among `words` (`-f csv sqlite`) */
	OPTION_SIZE,    /* unsigned long long: bytes, with an optional K, M or G suffix */
	OPTION_ENUM,    /* const char *: one of the '|'-separated words in arg_name; with
	                   `words` set, the value may be left out before an option or `--`
	                   (`--x -- cmd`, `--x --y`): it is then `words` */
};

struct option_list {
	int count;
	char *items[256];
};

struct option {
	enum option_type type;
	char short_name;       /* 0 when the option has no short form */
	const char *long_name; /* without the leading "--"; NULL for a short form alone
				* (then help must be set) */
	void *value;           /* where the parsed value is stored (see option_type) */
	const char *arg_name;  /* shown in help: "DIR"; for OPTION_ENUM the choices */
	const char *help;      /* one line */
	const char *words;     /* OPTION_LIST: '|'-separated values that may follow as
	                          separate arguments; NULL when only commas separate values.
	                          OPTION_ENUM: the value when none follows; NULL: one must */
};

#define OPTION_END { .type = OPTION_SECTION, .long_name = NULL, .help = NULL }

int options_parse(const struct option *table, int argc, char **argv, int *next,
		  struct error *err);

/* Parses options that may come before, between and after operands (everything after
 * `--` is an operand). *operands is a malloc'd array of the operands, in order. */
int options_parse_mixed(const struct option *table, int argc, char **argv, char ***operands,
			int *count, struct error *err);

/* Frees every value parsing copied (the items of every OPTION_LIST): no list filled since
 * the program started, or since the last call, may be used after it. */
void options_release(void);

/* Prints "usage: <usage>" and the table, grouped by section. */
void options_print_help(FILE *out, const char *usage, const char *description,
			const struct option *table);

/* Edit distance between two strings, used for "did you mean" suggestions. */
int options_edit_distance(const char *a, const char *b);

/* Parses "true/yes/on/1" and "false/no/off/0" (any case); -1 for anything else. */
int options_parse_bool(const char *s);

/* Parses a size such as "64M"; returns -1 on bad syntax. */
int options_parse_size(const char *s, unsigned long long *out);

#endif
