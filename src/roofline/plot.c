/* The roofline plot (see roofline.h): an HTML page with one inline SVG, no script, no
 * style or font from elsewhere. Each ceiling is a <g class="ceiling"> and each kernel a
 * <g class="point">, with data- attributes giving their values, so that what is drawn
 * can be checked in the page's DOM. */
#include "roofline/roofline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/html.h"
#include "util/strbuf.h"

#define WIDTH 960
#define HEIGHT 600
#define LEFT 90
#define RIGHT 190 /* room for the ceilings' labels */
#define TOP 50
#define BOTTOM 70

#define AI_MIN 0.01   /* FLOP/byte: the x axis at least, wider where a point lies outside */
#define AI_MAX 1000.0
#define LABEL_HEIGHT 13  /* px between two labels' baselines */
#define LABEL_CHAR 6.5   /* px a character of an 11 px label takes, about */

static const char *const colours[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b",
				       "#e377c2", "#17becf", "#bcbd22", "#ff7f0e", "#7f7f7f" };

struct axes {
	double x_min, x_max; /* FLOP/byte, powers of ten */
	double y_min, y_max; /* GFLOP/s, powers of ten */
};

static double x_of(const struct axes *a, double ai)
{
	return LEFT + (log10(ai) - log10(a->x_min)) / (log10(a->x_max) - log10(a->x_min)) *
		      (WIDTH - LEFT - RIGHT);
}

static double y_of(const struct axes *a, double gflops)
{
	return HEIGHT - BOTTOM - (log10(gflops) - log10(a->y_min)) /
				       (log10(a->y_max) - log10(a->y_min)) *
				       (HEIGHT - TOP - BOTTOM);
}

static void axes_and_grid(FILE *out, const struct axes *a)
{
	fprintf(out, "<g class=\"axes\" stroke=\"#ccc\" stroke-width=\"1\">\n");
	for (double ai = a->x_min; ai <= a->x_max * 1.001; ai *= 10)
		fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x_of(a, ai),
			TOP, x_of(a, ai), HEIGHT - BOTTOM);
	for (double g = a->y_min; g <= a->y_max * 1.001; g *= 10)
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", LEFT,
			y_of(a, g), WIDTH - RIGHT, y_of(a, g));
	fprintf(out, "</g>\n<g class=\"ticks\" font-size=\"12\" fill=\"#333\">\n");
	for (double ai = a->x_min; ai <= a->x_max * 1.001; ai *= 10)
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
			x_of(a, ai), HEIGHT - BOTTOM + 18, ai);
	for (double g = a->y_min; g <= a->y_max * 1.001; g *= 10)
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", LEFT - 8,
			y_of(a, g) + 4, g);
	fprintf(out, "</g>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"14\">"
		     "arithmetic intensity (FLOP/byte)</text>\n", (LEFT + WIDTH - RIGHT) / 2,
		HEIGHT - 25);
	fprintf(out, "<text x=\"20\" y=\"%d\" text-anchor=\"middle\" font-size=\"14\" "
		     "transform=\"rotate(-90 20 %d)\">GFLOP/s (GOP/s)</text>\n",
		(TOP + HEIGHT - BOTTOM) / 2, (TOP + HEIGHT - BOTTOM) / 2);
}

/* Whether ceiling c is drawn: measured, and shown. */
static int drawn(const struct roofline *r, const int shown[ROOF_COUNT], int c)
{
	return r->values[c].measured && r->values[c].mean > 0 && (!shown || shown[c]);
}

/* A label's box, for keeping labels apart. */
struct label {
	double x, y, width;
};

static int overlaps(const struct label *u, const struct label *w)
{
	return u->x < w->x + w->width && w->x < u->x + u->width &&
	       fabs(u->y - w->y) < LABEL_HEIGHT;
}

void roofline_plot_figure(FILE *out, const struct roofline *r, const int shown[ROOF_COUNT],
			  const struct roofline_point *points, size_t count, const char *note)
{
	/* the top compute ceiling: where the bandwidth lines stop */
	double top = 0, low = INFINITY, high = 0;
	struct axes a = { AI_MIN, AI_MAX, 0, 0 };
	for (size_t i = 0; i < count; i++) /* the x axis holds every point */
		if (points[i].flops > 0 && points[i].intensity > 0 && isfinite(points[i].intensity)) {
			a.x_min = fmin(a.x_min, pow(10, floor(log10(points[i].intensity))));
			a.x_max = fmax(a.x_max, pow(10, ceil(log10(points[i].intensity))));
		}
	if (a.x_max <= a.x_min * 10)
		a.x_max = a.x_min * 10;
	for (int c = 0; c < ROOF_COUNT; c++) {
		const struct roofline_value *v = &r->values[c];
		if (!drawn(r, shown, c))
			continue;
		if (!roofline_is_bandwidth(c) && v->mean > top)
			top = v->mean;
		if (roofline_is_bandwidth(c) && v->mean * a.x_min < low)
			low = v->mean * a.x_min;
		high = v->mean > high ? v->mean : high;
	}
	for (size_t i = 0; i < count; i++) {
		if (points[i].flops > 0 && points[i].flops / 1e9 < low)
			low = points[i].flops / 1e9;
		if (points[i].flops / 1e9 > high)
			high = points[i].flops / 1e9;
	}
	if (!isfinite(low))
		low = top > 0 ? top / 1e4 : 1;
	if (!(high > 0))
		high = 1e3;
	a.y_min = pow(10, floor(log10(low)));
	a.y_max = pow(10, ceil(log10(high * 1.5)));
	if (a.y_max <= a.y_min)
		a.y_max = a.y_min * 10;

	fprintf(out, "<svg id=\"roofline\" xmlns=\"http://www.w3.org/2000/svg\" "
		     "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
		     "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, HEIGHT, WIDTH,
		HEIGHT, WIDTH, HEIGHT);
	axes_and_grid(out, &a);
	/* the lines first, then their labels in the right margin, one column: each starts at
	 * the height where its line ends (a memory level's at its knee, reached by a dotted
	 * leader; a data type's beside its line), then they are spread 13 px apart within the
	 * plot's height, so that none covers another, an axis or a line */
	struct line {
		int ceiling;
		double x1, y1, x2, y2, label_y;
		double from, to; /* the line's span in FLOP/byte */
	} lines[ROOF_COUNT];
	int count_lines = 0;
	double fastest = 0; /* the highest bandwidth: where the flat ceilings start */
	for (int m = 0; m < ROOF_COUNT; m++)
		if (roofline_is_bandwidth(m) && drawn(r, shown, m) && r->values[m].mean > fastest)
			fastest = r->values[m].mean;
	for (int c = 0; c < ROOF_COUNT; c++) {
		const struct roofline_value *v = &r->values[c];
		if (!drawn(r, shown, c))
			continue;
		struct line *l = &lines[count_lines++];
		l->ceiling = c;
		if (roofline_is_bandwidth(c)) { /* GB/s times FLOP/byte: GFLOP/s */
			double knee = top > 0 ? top / v->mean : a.x_max;
			l->from = a.x_min, l->to = knee > a.x_max ? a.x_max : knee;
			l->x1 = x_of(&a, l->from), l->y1 = y_of(&a, v->mean * l->from);
			l->x2 = x_of(&a, l->to), l->y2 = y_of(&a, v->mean * l->to);
		} else {
			double start = fastest > 0 ? v->mean / fastest : a.x_min;
			l->from = start < a.x_min ? a.x_min : start, l->to = a.x_max;
			l->x1 = x_of(&a, l->from), l->y1 = y_of(&a, v->mean);
			l->x2 = x_of(&a, l->to), l->y2 = l->y1;
		}
		l->label_y = l->y2 + 4;
	}
	int order[ROOF_COUNT];
	for (int i = 0; i < count_lines; i++)
		order[i] = i;
	for (int i = 1; i < count_lines; i++) /* by height, the highest first */
		for (int k = i; k > 0 && lines[order[k]].label_y < lines[order[k - 1]].label_y; k--) {
			int swap = order[k];
			order[k] = order[k - 1];
			order[k - 1] = swap;
		}
	double lowest = HEIGHT - BOTTOM - 2, highest = TOP + LABEL_HEIGHT;
	for (int i = 0; i < count_lines; i++) { /* down, 13 px apart */
		double at = lines[order[i]].label_y < highest ? highest : lines[order[i]].label_y;
		if (i && at < lines[order[i - 1]].label_y + LABEL_HEIGHT)
			at = lines[order[i - 1]].label_y + LABEL_HEIGHT;
		lines[order[i]].label_y = at;
	}
	for (int i = count_lines; i-- > 0;) { /* and back up where the last went below */
		double most = i == count_lines - 1 ? lowest : lines[order[i + 1]].label_y - LABEL_HEIGHT;
		if (lines[order[i]].label_y > most)
			lines[order[i]].label_y = most;
	}
	for (int i = 0; i < count_lines; i++) {
		const struct line *l = &lines[i];
		const struct roofline_value *v = &r->values[l->ceiling];
		int bandwidth = roofline_is_bandwidth(l->ceiling);
		const char *name = roofline_column(l->ceiling), *stroke = colours[i % 10];
		const char *unit = roofline_unit(l->ceiling);
		fprintf(out, "<g class=\"ceiling\" data-name=\"%s\" data-value=\"%.6g\" "
			     "data-low=\"%.6g\" data-high=\"%.6g\" data-unit=\"%s\">\n", name, v->mean,
			v->low, v->high, unit);
		/* the 95 % interval of the measurement, as a band around the line */
		if (v->low > 0 && v->high > v->low) {
			double lo_from = bandwidth ? v->low * l->from : v->low;
			double lo_to = bandwidth ? v->low * l->to : v->low;
			double hi_from = bandwidth ? v->high * l->from : v->high;
			double hi_to = bandwidth ? v->high * l->to : v->high;
			fprintf(out, "<polygon class=\"band\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f "
				     "%.1f,%.1f\" fill=\"%s\" fill-opacity=\"0.18\"/>\n",
				l->x1, y_of(&a, lo_from), l->x2, y_of(&a, lo_to), l->x2, y_of(&a, hi_to),
				l->x1, y_of(&a, hi_from), stroke);
		}
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			     "stroke-width=\"2\"/>\n", l->x1, l->y1, l->x2, l->y2, stroke);
		if (bandwidth) /* from its knee to its label in the margin */
			fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
				     "stroke=\"%s\" stroke-dasharray=\"2 3\"/>\n", l->x2, l->y2,
				WIDTH - RIGHT + 2, l->label_y - 4, stroke);
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" fill=\"%s\">%s %.4g %s"
			     "</text>\n</g>\n", WIDTH - RIGHT + 4, l->label_y, stroke, name, v->mean,
			unit);
	}
	/* each kernel's name by its first point, moved down past the names already placed
	 * until it covers none */
	struct label *placed = xcalloc(count + (size_t)count_lines + 1, sizeof(*placed));
	size_t labels = 0;
	for (int i = 0; i < count_lines; i++) /* the ceilings' labels are taken */
		placed[labels++] = (struct label){ WIDTH - RIGHT + 4, lines[i].label_y, RIGHT - 4 };
	for (size_t i = 0; i < count; i++) {
		const struct roofline_point *p = &points[i];
		if (!(p->flops > 0) || !(p->intensity > 0))
			continue;
		double x = x_of(&a, p->intensity), y = y_of(&a, p->flops / 1e9);
		const char *fill = "black"; /* the colour of its level's line */
		for (int j = 0; j < count_lines; j++)
			if (lines[j].ceiling == p->level)
				fill = colours[j % 10];
		fprintf(out, "<g class=\"point\" data-label=\"");
		html_text(out, p->label);
		fprintf(out, "\" data-level=\"%s\" data-flops=\"%.6g\" data-intensity=\"%.6g\">\n"
			     "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>\n<title>",
			roofline_level_name(p->level), p->flops / 1e9, p->intensity, x, y, fill);
		html_text(out, p->label);
		fprintf(out, " (%s): %.4g GFLOP/s at %.4g FLOP/byte</title>\n",
			roofline_level_name(p->level), p->flops / 1e9, p->intensity);
		/* the name written once, by the kernel's first point: its other levels' points
		 * lie on the same height; each point names itself on hover */
		int named = 0;
		for (size_t j = 0; j < i && !named; j++)
			named = !strcmp(points[j].label, p->label) && points[j].flops > 0 &&
				points[j].intensity > 0;
		if (!named) {
			struct label l = { x + 7, y - 7, LABEL_CHAR * (double)strlen(p->label) };
			for (size_t tries = 0; tries <= labels; tries++) {
				int clear = 1;
				for (size_t k = 0; k < labels && clear; k++)
					if (overlaps(&l, &placed[k])) {
						l.y = placed[k].y + LABEL_HEIGHT;
						clear = 0;
					}
				if (clear)
					break;
			}
			placed[labels++] = l;
			fprintf(out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\">",
				l.x, l.y);
			html_text(out, p->label);
			fprintf(out, "</text>\n");
		}
		fprintf(out, "</g>\n");
	}
	free(placed);
	fprintf(out, "</svg>\n");
	if (note && *note) {
		fprintf(out, "<p class=\"note\">");
		html_text(out, note);
		fprintf(out, "</p>\n");
	}
	struct strbuf inverted = STRBUF_INIT;
	if (roofline_check_order(r, &inverted)) {
		fprintf(out, "<p class=\"warning\" style=\"color: #a00\">");
		html_text(out, inverted.buf);
		fprintf(out, "</p>\n");
	}
	strbuf_release(&inverted);
	fprintf(out, "<p style=\"color: #666; font-size: 12px\">gpuprof roofline: device %d, ",
		r->device);
	html_text(out, r->device_name);
	fprintf(out, " (%s), %d experiments per ceiling; each ceiling is the mean of its "
		     "experiments, its band the 95 %% confidence interval (data-low, "
		     "data-high).</p>\n", r->backend, r->experiments);
}

void roofline_plot_html(FILE *out, const struct roofline *r, const int shown[ROOF_COUNT],
			const struct roofline_point *points, size_t count, const char *title,
			const char *note)
{
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
	html_text(out, title);
	fprintf(out, "</title>\n</head>\n<body style=\"font-family: sans-serif; margin: 20px\">\n"
		     "<h1 style=\"font-size: 20px\">");
	html_text(out, title);
	fprintf(out, "</h1>\n");
	roofline_plot_figure(out, r, shown, points, count, note);
	fprintf(out, "</body></html>\n");
}
