/* gpuprof summary's MPI tables (see mpi-summary.h). */
#include "writer/mpi-summary.h"

#include <stdio.h>
#include <string.h>

struct mpi_summary_units mpi_summary_units_of(const char *name)
{
	struct mpi_summary_units u = { 1, name, 0 };
	if (!strcmp(name, "usec"))
		u.divisor = 1e3;
	else if (!strcmp(name, "msec"))
		u.divisor = 1e6;
	else if (!strcmp(name, "sec"))
		u.divisor = 1e9;
	u.decimals = u.divisor > 1 ? 3 : 0;
	return u;
}

static double in_units(const struct mpi_summary_units *u, int64_t ns)
{
	return (double)ns / u->divisor;
}

static int ranks_table(FILE *out, enum table_format format,
		       const struct mpi_summary_units *u, const struct mpi_ranks *runs,
		       const int64_t *inputs, size_t count, struct error *err)
{
	char c[6][48];
	snprintf(c[0], sizeof(c[0]), "Window (%s)", u->name);
	snprintf(c[1], sizeof(c[1]), "Computing (%s)", u->name);
	snprintf(c[2], sizeof(c[2]), "In MPI (%s)", u->name);
	snprintf(c[3], sizeof(c[3]), "Waiting (%s)", u->name);
	snprintf(c[4], sizeof(c[4]), "Device busy in MPI (%s)", u->name);
	snprintf(c[5], sizeof(c[5]), "Device idle in MPI (%s)", u->name);
	const char *names[] = { "Input", "Rank", "Host", "Pid", c[0], c[1], c[2], "MPI %", c[3],
				"Wait %", "Calls", "Bytes sent", "Bytes received",
				"Last at collectives", c[4], c[5] };
	struct table *t = table_begin(out, format, "mpi_ranks", "MPI RANKS (computing, in MPI "
				      "and waiting for other ranks, between MPI_Init and "
				      "MPI_Finalize; the rank's device busy or idle during its "
				      "MPI calls)", 16, names);
	for (size_t r = 0; r < count; r++)
		for (size_t i = 0; i < runs[r].rank_count; i++) {
			const struct mpi_rank *k = &runs[r].ranks[i];
			double window = (double)k->window_ns;
			table_int(t, inputs[r]);
			table_int(t, k->rank);
			table_text(t, k->host);
			table_int(t, k->pid);
			table_double(t, in_units(u, k->window_ns), u->decimals);
			table_double(t, in_units(u, k->window_ns - k->mpi_ns), u->decimals);
			table_double(t, in_units(u, k->mpi_ns), u->decimals);
			table_double(t, window > 0 ? 100.0 * (double)k->mpi_ns / window : 0, 2);
			table_double(t, in_units(u, k->wait_ns), u->decimals);
			table_double(t, window > 0 ? 100.0 * (double)k->wait_ns / window : 0, 2);
			table_int(t, k->calls);
			table_int(t, k->bytes_sent);
			table_int(t, k->bytes_received);
			table_int(t, k->last_arrivals);
			if (k->device_known) {
				table_double(t, in_units(u, k->device_busy_ns), u->decimals);
				table_double(t, in_units(u, k->mpi_ns - k->device_busy_ns),
					     u->decimals);
			} else { /* no device work: no device to be busy or idle */
				table_null(t);
				table_null(t);
			}
		}
	return table_end(t, err);
}

static int collectives_table(FILE *out, enum table_format format,
			     const struct mpi_summary_units *u, const struct mpi_ranks *runs,
			     const int64_t *inputs, size_t count, struct error *err)
{
	char c[2][40];
	snprintf(c[0], sizeof(c[0]), "Waited (%s)", u->name);
	snprintf(c[1], sizeof(c[1]), "Longest wait (%s)", u->name);
	const char *names[] = { "Input", "Function", "Communicator", "Instances", "Ranks", c[0],
				c[1], "Last rank", "Last times" };
	struct table *t = table_begin(out, format, "mpi_collectives", "MPI COLLECTIVES (the "
				      "time ranks waited in them for the last to arrive, and who "
				      "it was most often)", 9, names);
	for (size_t r = 0; r < count; r++)
		for (size_t i = 0; i < runs[r].collective_count; i++) {
			const struct mpi_collective *k = &runs[r].collectives[i];
			table_int(t, inputs[r]);
			table_text(t, k->function);
			table_text(t, k->communicator);
			table_int(t, k->instances);
			table_int(t, k->ranks);
			table_double(t, in_units(u, k->wait_ns), u->decimals);
			table_double(t, in_units(u, k->max_wait_ns), u->decimals);
			table_int(t, k->last_rank);
			table_int(t, k->last_count);
		}
	return table_end(t, err);
}

static int late_senders_table(FILE *out, enum table_format format,
			      const struct mpi_summary_units *u, const struct mpi_ranks *runs,
			      const int64_t *inputs, size_t count, struct error *err)
{
	size_t rows = 0;
	for (size_t r = 0; r < count; r++)
		rows += runs[r].late_count;
	if (!rows)
		return 0;
	char waited[40];
	snprintf(waited, sizeof(waited), "Waited (%s)", u->name);
	const char *names[] = { "Input", "Sender", "Receiver", "Tag", "Messages", waited };
	struct table *t = table_begin(out, format, "mpi_late_senders", "MPI LATE SENDERS "
				      "(receives that waited for their message to be sent)", 6,
				      names);
	for (size_t r = 0; r < count; r++)
		for (size_t i = 0; i < runs[r].late_count; i++) {
			const struct mpi_late_sender *k = &runs[r].late[i];
			table_int(t, inputs[r]);
			table_int(t, k->sender);
			table_int(t, k->receiver);
			table_int(t, k->tag);
			table_int(t, k->messages);
			table_double(t, in_units(u, k->wait_ns), u->decimals);
		}
	return table_end(t, err);
}

/* Each rank's calls of each function, and its device busy or idle during them. */
static int call_devices_table(FILE *out, enum table_format format,
			      const struct mpi_summary_units *u, const struct mpi_ranks *runs,
			      const int64_t *inputs, size_t count, struct error *err)
{
	size_t rows = 0;
	for (size_t r = 0; r < count; r++)
		rows += runs[r].call_device_count;
	if (!rows)
		return 0;
	char c[3][40];
	snprintf(c[0], sizeof(c[0]), "In calls (%s)", u->name);
	snprintf(c[1], sizeof(c[1]), "Device busy (%s)", u->name);
	snprintf(c[2], sizeof(c[2]), "Device idle (%s)", u->name);
	const char *names[] = { "Input", "Rank", "Pid", "Function", "Calls", c[0], c[1], c[2],
				"Idle %" };
	struct table *t = table_begin(out, format, "mpi_calls_device",
				      "MPI CALLS AND THE DEVICE (each rank's calls of each "
				      "function, and its device busy or idle during them)", 9,
				      names);
	for (size_t r = 0; r < count; r++)
		for (size_t i = 0; i < runs[r].call_device_count; i++) {
			const struct mpi_call_device *d = &runs[r].call_devices[i];
			table_int(t, inputs[r]);
			table_int(t, d->rank);
			table_int(t, d->pid);
			table_text(t, d->function);
			table_int(t, d->calls);
			table_double(t, in_units(u, d->mpi_ns), u->decimals);
			table_double(t, in_units(u, d->busy_ns), u->decimals);
			double idle = (double)d->mpi_ns - (double)d->busy_ns; /* corrupt rows too */
			table_double(t, idle / u->divisor, u->decimals);
			table_double(t, d->mpi_ns ? 100.0 * idle / (double)d->mpi_ns : 0, 2);
		}
	return table_end(t, err);
}

int mpi_summary_tables(FILE *out, enum table_format format,
		       const struct mpi_summary_units *u, const struct mpi_ranks *runs,
		       const int64_t *inputs, size_t count, struct error *err)
{
	size_t ranks = 0;
	for (size_t r = 0; r < count; r++)
		ranks += runs[r].rank_count;
	if (!ranks)
		return 0;
	return ranks_table(out, format, u, runs, inputs, count, err) ||
	       call_devices_table(out, format, u, runs, inputs, count, err) ||
	       collectives_table(out, format, u, runs, inputs, count, err) ||
	       late_senders_table(out, format, u, runs, inputs, count, err) ? -1 : 0;
}
