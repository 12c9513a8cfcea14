/* gpuprof summary: statistics over one or more databases: per-domain tables (kernels by
 * name, copies by direction, allocations, API calls by function, marker ranges), the
 * share of each domain, GPU time per marker range, how busy each device was and the gaps
 * it sat idle, and one row per process (host, pid, rank). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/commands.h"
#include "commands/trace.h"
#include "util/error.h"
#include "util/options.h"
#include "writer/run-summary.h"

static const char usage[] = "gpuprof summary [options] DB...";
static const char description[] =
	"Prints statistics over gpuprof databases, all inputs together: kernels, memory\n"
	"copies, allocations and the API calls of each domain (calls, total, average,\n"
	"percentage of the table's total, min, max, standard deviation), the time of each\n"
	"domain, the GPU time of the kernels launched inside each marker range (by range\n"
	"name, nested ranges included), device busy time and idle gaps per device, and one\n"
	"row per process; device memory (peak, its holders, leaks) where allocations were\n"
	"recorded, NCCL's kernels overlapped with compute or exposed where they ran, and\n"
	"NCCL's calls with their kernels' time and bandwidths where both were recorded.\n"
	"A device is busy while a kernel or copy runs on it; its busy percentage is of its\n"
	"process's recorded duration; its idle gaps lie between its first and last\n"
	"activity. Each recording (a process) counts once: an input holding\n"
	"only recordings of an earlier one is left out, one sharing some is refused.\n"
	"\n"
	"With --mpi, every rank of an MPI run runs it under the launcher that ran the run\n"
	"(mpirun -n N gpuprof summary --mpi 'run/rank%rank%_results.db'): each rank reads\n"
	"its own recording (%rank% is its rank), the ranks exchange over MPI what the\n"
	"cross-rank analysis needs, and rank 0 prints MPI RANKS, MPI CALLS AND THE DEVICE,\n"
	"MPI COLLECTIVES, MPI LATE SENDERS and the straggler's finding, as for the ranks\n"
	"merged (docs/MPI.md).";

/* summary --mpi: this rank becomes the helper of its launcher's MPI (src/ranks). */
static void run_under_launcher(const char *pattern, const char *format, const char *units)
{
	const char *which = getenv("OMPI_COMM_WORLD_SIZE") ? "openmpi"
			  : getenv("PMI_RANK") && getenv("PMI_SIZE") ? "mpich" : NULL;
	if (!which)
		die_with(EXIT_USAGE, "summary --mpi: run it under the MPI launcher of the run, as "
			 "one process per rank (mpirun -n N gpuprof summary --mpi PATTERN, Open "
			 "MPI's or MPICH's): no launcher started this one");
	struct strbuf name = STRBUF_INIT, helper = STRBUF_INIT;
	struct error err;
	strbuf_addf(&name, "gpuprof-ranks-%s", which);
	if (trace_find_library(name.buf, &helper, &err))
		die("summary --mpi: this gpuprof was built without %s's headers (%s missing): "
		    "scripts/install-deps.sh installs them, then rebuild", which, name.buf);
	char *args[] = { helper.buf, (char *)pattern, (char *)format, (char *)units, NULL };
	execv(helper.buf, args);
	die("summary --mpi: cannot run '%s': %s", helper.buf, strerror(errno));
}

int cmd_summary(int argc, char **argv)
{
	int help = -1, mpi = -1;
	const char *format_name = "text", *units = "nsec";
	const struct option table[] = {
		{ OPTION_ENUM, 0, "format", &format_name, "text|csv|md|json",
		  "how the tables are printed (default: text)" },
		{ OPTION_ENUM, 'u', "units", &units, "sec|msec|usec|nsec",
		  "unit of the times (default: nsec)" },
		{ OPTION_BOOL, 0, "mpi", &mpi, NULL,
		  "the cross-rank tables of an MPI run, by every rank under its launcher, each "
		  "reading its own recording: the one input is a pattern whose %rank% is the "
		  "rank (see below)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	char **inputs;
	int count;
	if (command_parse_inputs("summary", usage, description, table, &help, "database", argc, argv,
				 &inputs, &count))
		return 0;
	if (mpi == 1) {
		if (count != 1)
			die_with(EXIT_USAGE, "summary --mpi: give one pattern of the ranks' databases, "
				 "'run/rank%%rank%%_results.db' (got %d inputs)", count);
		run_under_launcher(inputs[0], format_name, units);
	}
	int rc = run_summary_print(inputs, count, format_name, units, &err);
	free(inputs);
	if (rc)
		die("summary: %s", err.message);
	return 0;
}
