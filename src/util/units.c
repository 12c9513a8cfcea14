/* Numbers as a person reads them (see units.h). */
#include "util/units.h"

#include <math.h>
#include <string.h>

/* value with 3 significant digits (no exponent), then the suffix. */
static void three(struct strbuf *out, double value, const char *suffix)
{
	double a = fabs(value);
	if (a > 0 && a < 1) {
		strbuf_addf(out, "%.3g%s", value, suffix);
		return;
	}
	int decimals = a >= 100 || a == 0 ? 0 : a >= 10 ? 1 : 2;
	strbuf_addf(out, "%.*f%s", decimals, value, suffix);
}

void units_duration(struct strbuf *out, double ns)
{
	double a = fabs(ns);
	if (a >= 1e9)
		three(out, ns / 1e9, " s");
	else if (a >= 1e6)
		three(out, ns / 1e6, " ms");
	else if (a >= 1e3)
		three(out, ns / 1e3, " us");
	else
		strbuf_addf(out, "%.0f ns", ns);
}

/* value in unit, with a k, M, G... prefix that keeps it under 1000 */
static void scaled(struct strbuf *out, double value, const char *unit)
{
	static const char *const prefixes[] = { "", "k", "M", "G", "T", "P", "E" };
	int p = 0;
	while (fabs(value) >= 999.5 && p < 6) {
		value /= 1000;
		p++;
	}
	struct strbuf suffix = STRBUF_INIT;
	strbuf_addf(&suffix, " %s%s", prefixes[p], unit);
	if (!p && value == floor(value))
		strbuf_addf(out, "%.0f%s", value, suffix.buf);
	else
		three(out, value, suffix.buf);
	strbuf_release(&suffix);
}

void units_bytes(struct strbuf *out, double bytes)
{
	scaled(out, bytes, "B");
}

void units_value(struct strbuf *out, double value, const char *unit)
{
	static const char *const base[] = { "B/s", "W", "J", "Hz", "/s", "B" };
	if (!strcmp(unit, "%")) {
		strbuf_addf(out, "%.1f %%", value);
		return;
	}
	if (!strcmp(unit, "bytes")) {
		units_bytes(out, value);
		return;
	}
	if (!strcmp(unit, "bytes/s")) {
		scaled(out, value, "B/s");
		return;
	}
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		if (!strcmp(unit, base[i])) {
			scaled(out, value, unit);
			return;
		}
	/* a unit with its own prefix (MHz, MiB) or of counts: as it is */
	if (value == floor(value) && fabs(value) < 1e15)
		strbuf_addf(out, "%.0f%s%s", value, *unit ? " " : "", unit);
	else
		three(out, value, "");
	if (value != floor(value) && *unit)
		strbuf_addf(out, " %s", unit);
}
