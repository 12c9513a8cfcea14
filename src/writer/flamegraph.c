/* Flame graphs as inline SVG (see flamegraph.h). */
#include "writer/flamegraph.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/html.h"
#include "util/strbuf.h"
#include "util/units.h"

#define WIDTH 1180      /* px */
#define ROW 17          /* px per level */
#define MIN_PX 0.5      /* narrower frames are left out */
#define CHAR_PX 6.6     /* a character of the 11 px font, about */

/* Callees of a node, the heaviest first. */
static int by_total(const void *a, const void *b, void *arg)
{
	const struct profile_tree *t = arg;
	uint64_t x = t->nodes[*(const uint32_t *)a].total, y = t->nodes[*(const uint32_t *)b].total;
	if (x != y)
		return x < y ? 1 : -1;
	return strcmp(t->nodes[*(const uint32_t *)a].function, t->nodes[*(const uint32_t *)b].function);
}

/* A frame's colour: warm hues for native code, green for Python, blue for what ran on
 * a device; the hue within them by the name, so that a function keeps its colour. */
static void colour(const struct profile_node *n, char out[16])
{
	uint64_t h = hash_string(n->function);
	int r, g, b;
	if (!strcmp(n->module, "[device]")) {
		r = 60 + (int)(h % 40), g = 120 + (int)(h / 40 % 50), b = 210;
	} else if (strstr(n->function, ".py:")) {
		r = 90 + (int)(h % 60), g = 190 + (int)(h / 60 % 40), b = 80;
	} else if (n->function[0] == '[') {
		r = g = b = 190;
	} else {
		r = 225 + (int)(h % 30), g = 90 + (int)(h / 30 % 110), b = 40 + (int)(h / 3300 % 30);
	}
	snprintf(out, 16, "#%02x%02x%02x", r, g, b);
}

struct place {
	uint32_t node;
	int depth;
	double x; /* px */
};

/* Pushes the callees of node onto todo so that the heaviest is taken first, each placed
 * after the heavier ones from x on. */
static void push_callees(const struct profile_tree *t, uint32_t node, int depth, double x,
			 double scale, struct place *todo, size_t *top, uint32_t *children)
{
	size_t n = 0;
	for (uint32_t c = t->nodes[node].first_child; c; c = t->nodes[c].next_sibling)
		children[n++] = c;
	if (n > 1)
		qsort_r(children, n, sizeof(*children), by_total, (void *)t);
	double at = x;
	for (size_t i = 0; i < n; i++)
		at += (double)t->nodes[children[i]].total * scale;
	for (size_t i = n; i-- > 0;) {
		at -= (double)t->nodes[children[i]].total * scale;
		todo[(*top)++] = (struct place){ children[i], depth, at };
	}
}

void flamegraph_svg(FILE *out, struct profile_tree *t, const char *id)
{
	for (size_t i = 0; i < t->count; i++)
		t->nodes[i].first_child = t->nodes[i].next_sibling = 0;
	profile_link(t);
	double scale = t->samples ? (double)WIDTH / (double)t->samples : 0;
	/* the deepest level drawn, for the picture's height */
	int depth_max = 0;
	struct place *todo = xcalloc(t->count + 1, sizeof(*todo));
	uint32_t *children = xcalloc(t->count + 1, sizeof(*children));
	size_t top = 0;
	for (uint32_t c = t->nodes[0].first_child; c; c = t->nodes[c].next_sibling)
		todo[top++] = (struct place){ c, 0, 0 };
	for (size_t i = 0; i < top; i++) {
		const struct place *p = &todo[i];
		if ((double)t->nodes[p->node].total * scale < MIN_PX)
			continue;
		if (p->depth > depth_max)
			depth_max = p->depth;
		for (uint32_t c = t->nodes[p->node].first_child; c; c = t->nodes[c].next_sibling)
			todo[top++] = (struct place){ c, p->depth + 1, 0 };
	}
	int height = (depth_max + 1) * ROW + 2;
	fprintf(out, "<div class=\"flame\" id=\"%s\"><div class=\"flame-tools\">"
		     "<input type=\"search\" placeholder=\"search (a regular expression)\" "
		     "aria-label=\"search\"> <button type=\"button\" class=\"flame-reset\">"
		     "whole graph</button> <span class=\"flame-matched\"></span></div>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		     "viewBox=\"0 0 %d %d\" font-size=\"11\" font-family=\"monospace\" "
		     "data-total=\"%" PRIu64 "\" data-unit=\"%s\">\n", id, WIDTH, height, WIDTH,
		height, t->samples, t->device_time ? "ns" : "samples");
	/* depth first from the root, callees the heaviest first, left to right */
	top = 0;
	push_callees(t, 0, 0, 0, scale, todo, &top, children);
	struct strbuf label = STRBUF_INIT, weight = STRBUF_INIT;
	while (top) {
		struct place p = todo[--top];
		const struct profile_node *node = &t->nodes[p.node];
		double w = (double)node->total * scale;
		if (w < MIN_PX)
			continue;
		double y = (double)height - 1 - (double)(p.depth + 1) * ROW;
		char fill[16];
		colour(node, fill);
		strbuf_reset(&weight);
		if (t->device_time)
			units_duration(&weight, (double)node->total);
		else
			strbuf_addf(&weight, "%" PRIu64 " samples", node->total);
		fprintf(out, "<g class=\"f\" data-total=\"%" PRIu64 "\" data-self=\"%" PRIu64 "\" "
			     "data-function=\"", node->total, node->self);
		html_text(out, node->function);
		fprintf(out, "\" data-module=\"");
		html_text(out, node->module);
		fprintf(out, "\"><title>");
		html_text(out, node->function);
		const char *base = strrchr(node->module, '/');
		if (*node->module && !strstr(node->function, ".py:")) {
			fputs(" (", out);
			html_text(out, base ? base + 1 : node->module);
			fputs(")", out);
		}
		fprintf(out, ": %s, %.2f %%</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
			     "height=\"%d\" fill=\"%s\" rx=\"2\"/>", weight.buf,
			100.0 * (double)node->total / (double)t->samples, p.x, y, w, ROW - 1, fill);
		size_t fits = w > 3 * CHAR_PX ? (size_t)fmin((w - 4) / CHAR_PX, 4096) : 0;
		if (fits) {
			strbuf_reset(&label);
			size_t length = strlen(node->function);
			if (length <= fits)
				strbuf_addstr(&label, node->function);
			else if (fits > 2)
				strbuf_addf(&label, "%.*s..", (int)(fits - 2), node->function);
			fprintf(out, "<text x=\"%.2f\" y=\"%.0f\">", p.x + 3, y + ROW - 5);
			html_text(out, label.buf);
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
		push_callees(t, p.node, p.depth + 1, p.x, scale, todo, &top, children);
	}
	fputs("</svg></div>\n", out);
	strbuf_release(&label);
	strbuf_release(&weight);
	free(todo);
	free(children);
}

/* Zoom: a click on a frame makes it the whole width (its callers full width under it,
 * frames beside it hidden); search: frames whose function matches are outlined, and
 * the share they cover said (each sample counted once, through the outermost match). */
const char flamegraph_script[] =
	"<script>\n"
	"(function(){\n"
	"function setup(div){\n"
	" var svg=div.querySelector('svg'),W=+svg.getAttribute('width'),fs=[].slice.call(svg.querySelectorAll('g.f'));\n"
	" fs.forEach(function(g){var r=g.querySelector('rect');g._x=+r.getAttribute('x');g._w=+r.getAttribute('width');g._y=+r.getAttribute('y');});\n"
	" function place(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text');r.setAttribute('x',x);r.setAttribute('width',w);\n"
	"  if(t){t.setAttribute('x',x+3);var n=g.getAttribute('data-function'),c=Math.floor((w-4)/6.6);t.textContent=c<3?'':(n.length<=c?n:n.slice(0,c-2)+'..');}}\n"
	" function zoom(z){fs.forEach(function(g){\n"
	"  if(!z){g.style.display='';place(g,g._x,g._w);return;}\n"
	"  var inside=g._x>=z._x-1e-6&&g._x+g._w<=z._x+z._w+1e-6&&g._y<=z._y,below=g._y>z._y&&g._x<=z._x+1e-6&&g._x+g._w>=z._x+z._w-1e-6;\n"
	"  if(inside){g.style.display='';place(g,(g._x-z._x)/z._w*W,g._w/z._w*W);}else if(below){g.style.display='';place(g,0,W);}else g.style.display='none';});}\n"
	" fs.forEach(function(g){g.addEventListener('click',function(){zoom(g);});g.style.cursor='pointer';});\n"
	" div.querySelector('.flame-reset').addEventListener('click',function(){zoom(null);});\n"
	" var input=div.querySelector('input'),said=div.querySelector('.flame-matched');\n"
	" input.addEventListener('input',function(){var re=null;try{re=input.value?new RegExp(input.value):null;}catch(e){}\n"
	"  var total=+svg.getAttribute('data-total'),m=fs.filter(function(g){var hit=!!re&&re.test(g.getAttribute('data-function'));\n"
	"   var r=g.querySelector('rect');r.setAttribute('stroke',hit?'#d0f':'none');r.setAttribute('stroke-width',hit?2:0);return hit;});\n"
	"  var outer=m.filter(function(g){return !m.some(function(c){return c!==g&&c._y>g._y&&g._x>=c._x-1e-6&&g._x+g._w<=c._x+c._w+1e-6;});});\n"
	"  var n=outer.reduce(function(s,g){return s+(+g.getAttribute('data-total'));},0);\n"
	"  said.textContent=re?('matched: '+(total?(100*n/total).toFixed(1):0)+' %'):'';});}\n"
	"[].forEach.call(document.querySelectorAll('div.flame'),setup);\n"
	"})();\n"
	"</script>\n";
