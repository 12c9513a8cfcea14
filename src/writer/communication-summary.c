/* gpuprof summary's COMMUNICATION table (see communication-summary.h). */
#include "writer/communication-summary.h"

#include "util/strbuf.h"

static int devices_table(FILE *out, enum table_format format,
			 const struct mpi_summary_units *u, const struct communication_report *r,
			 struct error *err)
{
	if (!r->count)
		return 0;
	struct strbuf heads[4] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
	const char *what[4] = { "Communication", "Overlapped", "Exposed", "Compute" };
	for (int i = 0; i < 4; i++)
		strbuf_addf(&heads[i], "%s (%s)", what[i], u->name);
	const char *names[] = { "Input", "Pid", "Device", "Communication kernels", heads[0].buf,
				heads[1].buf, heads[2].buf, "Exposed %", "Compute kernels",
				heads[3].buf };
	struct table *t = table_begin(out, format, "communication",
				      "COMMUNICATION (collective-communication kernels, NCCL's by "
				      "name, on each device: their time, the part with compute "
				      "kernels running beside them, and the part alone: exposed)",
				      10, names);
	for (size_t i = 0; i < r->count; i++) {
		const struct communication_device *d = &r->devices[i];
		const struct overlap_sweep *s = &d->sweep;
		int64_t exposed = s->communication_ns - s->overlapped_ns;
		table_int(t, d->input);
		table_int(t, d->pid);
		table_text(t, d->device);
		table_int(t, (int64_t)s->communication_kernels);
		table_double(t, (double)s->communication_ns / u->divisor, u->decimals);
		table_double(t, (double)s->overlapped_ns / u->divisor, u->decimals);
		table_double(t, (double)exposed / u->divisor, u->decimals);
		table_double(t, s->communication_ns ? 100.0 * (double)exposed /
						      (double)s->communication_ns : 0, 2);
		table_int(t, (int64_t)s->compute_kernels);
		table_double(t, (double)s->compute_ns / u->divisor, u->decimals);
	}
	for (int i = 0; i < 4; i++)
		strbuf_release(&heads[i]);
	return table_end(t, err);
}

/* NCCL's operations that launched kernels, by function and communicator size. */
static int calls_table(FILE *out, enum table_format format, const struct mpi_summary_units *u,
		       const struct communication_report *r, struct error *err)
{
	if (!r->call_count)
		return 0;
	struct strbuf device = STRBUF_INIT;
	strbuf_addf(&device, "Device time (%s)", u->name);
	const char *names[] = { "Input", "Pid", "Function", "Ranks", "Operations", "Calls",
				"Kernels", "Bytes", device.buf, "Algorithm bandwidth (GB/s)",
				"Bus bandwidth (GB/s)" };
	struct table *t = table_begin(out, format, "communication_calls",
				      "COMMUNICATION CALLS (NCCL's calls and the kernels they "
				      "launched: a group's collectives are one operation; "
				      "nccl-tests' bandwidths over the kernels' time)", 11, names);
	for (size_t i = 0; i < r->call_count; i++) {
		const struct communication_calls *c = &r->calls[i];
		double algorithm = c->device_ns ? (double)c->bytes / (double)c->device_ns : 0;
		table_int(t, c->input);
		table_int(t, c->pid);
		table_text(t, c->function);
		if (c->ranks)
			table_int(t, c->ranks);
		else
			table_null(t);
		table_int(t, (int64_t)c->operations);
		table_int(t, (int64_t)c->calls);
		table_int(t, (int64_t)c->kernels);
		table_int(t, (int64_t)c->bytes);
		table_double(t, (double)c->device_ns / u->divisor, u->decimals);
		table_double(t, algorithm, 3);
		if (c->bus_factor > 0)
			table_double(t, algorithm * c->bus_factor, 3);
		else
			table_null(t);
	}
	strbuf_release(&device);
	return table_end(t, err);
}

int communication_summary_table(FILE *out, enum table_format format,
				const struct mpi_summary_units *u,
				const struct communication_report *r, struct error *err)
{
	return devices_table(out, format, u, r, err) || calls_table(out, format, u, r, err)
		       ? -1 : 0;
}
