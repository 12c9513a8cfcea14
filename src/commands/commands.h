/* The gpuprof commands: one file each (src/commands/<name>.c), dispatched by the table in
 * main.c, which also drives `gpuprof --help` and "did you mean". */
#ifndef GPUPROF_COMMANDS_COMMANDS_H
#define GPUPROF_COMMANDS_COMMANDS_H

#include <stdio.h>

#include "util/strbuf.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	const char *summary;               /* one line for `gpuprof --help` */
};

extern const struct command commands[];

/* The command called `name`, or NULL. */
const struct command *command_find(const char *name);
/* The closest command name to a misspelt one, or NULL when none is close. */
const char *command_suggest(const char *name);

/* gpuprof's own process ignores SIGXFSZ (main): a write past the file-size limit (ulimit
 * -f) fails with EFBIG and is reported like a full disk, rather than ending gpuprof with
 * the program's outputs unwritten and its exit status lost. A program gpuprof starts
 * gets the disposition gpuprof was given back before it runs. */
void commands_restore_signals(void);

struct error;

int cmd_trace(int argc, char **argv);
int cmd_sys(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_compute(int argc, char **argv);
int cmd_roofline(int argc, char **argv);
/* A commented configuration file of gpuprof sys's defaults (gpuprof avail -G). */
void trace_config_template(struct strbuf *out);
int cmd_convert(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* gpuprof advise's findings for `count` databases, printed on out in `format` (text,
 * csv, md, json). */
int advise_print(char *const *inputs, int count, const char *format, FILE *out,
		 struct error *err);
int cmd_merge(int argc, char **argv);
int cmd_avail(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);

struct option;

/* The command line of a command that takes inputs anywhere among its options (convert,
 * summary, query, merge): a bad one, or one without inputs ("no WHAT given"), exits
 * with a usage error. Returns 1 when *help was set and the help was printed: the command
 * then returns 0. *inputs is malloc'd. */
int command_parse_inputs(const char *name, const char *usage, const char *description,
			 const struct option *table, const int *help, const char *what,
			 int argc, char **argv, char ***inputs, int *count);

/* Prints the top-level usage and the command list. */
void commands_print_usage(FILE *out);

#endif
