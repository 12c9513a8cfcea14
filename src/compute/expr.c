/* The catalog's expressions (see expr.h): parsed by recursive descent into a tree of
 * nodes in one array, evaluated by walking it. */
#include "compute/expr.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

enum node_kind { NUMBER, NAME, ADD, SUBTRACT, MULTIPLY, DIVIDE, NEGATE, MIN, MAX };

struct node {
	enum node_kind kind;
	double number;
	char *name;
	int left, right; /* indexes of the operands, -1 when none */
};

struct expr {
	struct node *nodes;
	int count, root;
};

struct parser {
	const char *text, *at;
	struct expr *e;
	struct error *err;
	int depth, failed;
};

static int fail(struct parser *p, const char *why)
{
	if (!p->failed)
		error_set(p->err, "'%s': %s at column %d", p->text, why, (int)(p->at - p->text) + 1);
	p->failed = 1;
	return -1;
}

static int add_node(struct parser *p, struct node n)
{
	p->e->nodes = xrealloc(p->e->nodes, (size_t)(p->e->count + 1) * sizeof(*p->e->nodes));
	p->e->nodes[p->e->count] = n;
	return p->e->count++;
}

static void skip_space(struct parser *p)
{
	while (isspace((unsigned char)*p->at))
		p->at++;
}

static int parse_sum(struct parser *p);

static int parse_primary(struct parser *p)
{
	skip_space(p);
	if (++p->depth > EXPR_MAX_DEPTH)
		return fail(p, "nested too deeply");
	int node = -1;
	const char *c = p->at;
	if (*c == '(') {
		p->at++;
		node = parse_sum(p);
		skip_space(p);
		if (node >= 0 && *p->at != ')')
			node = fail(p, "')' expected");
		else if (node >= 0)
			p->at++;
	} else if (*c == '-') {
		p->at++;
		int operand = parse_primary(p);
		node = operand < 0 ? -1 : add_node(p, (struct node){ NEGATE, 0, NULL, operand, -1 });
	} else if (isdigit((unsigned char)*c) || (*c == '.' && isdigit((unsigned char)c[1]))) {
		char *end;
		double value = strtod(c, &end);
		if (end == c || !isfinite(value))
			return fail(p, "not a number");
		p->at = end;
		node = add_node(p, (struct node){ NUMBER, value, NULL, -1, -1 });
	} else if (isalpha((unsigned char)*c) || *c == '_') {
		const char *start = c;
		while (isalnum((unsigned char)*p->at) || *p->at == '_' || *p->at == '.')
			p->at++;
		size_t length = (size_t)(p->at - start);
		skip_space(p);
		int is_min = length == 3 && !strncmp(start, "min", 3);
		int is_max = length == 3 && !strncmp(start, "max", 3);
		if ((is_min || is_max) && *p->at == '(') {
			p->at++;
			int a = parse_sum(p), b = -1;
			skip_space(p);
			if (a >= 0 && *p->at != ',')
				return fail(p, "',' expected");
			if (a >= 0) {
				p->at++;
				b = parse_sum(p);
				skip_space(p);
			}
			if (b >= 0 && *p->at != ')')
				return fail(p, "')' expected");
			if (b < 0)
				return -1;
			p->at++;
			node = add_node(p, (struct node){ is_min ? MIN : MAX, 0, NULL, a, b });
		} else {
			if (start[length - 1] == '.')
				return fail(p, "a name ends with '.'");
			char *name = xcalloc(length + 1, 1);
			memcpy(name, start, length);
			name[length] = '\0';
			node = add_node(p, (struct node){ NAME, 0, name, -1, -1 });
		}
	} else {
		return fail(p, *c ? "a number, a name or '(' expected" : "unexpected end");
	}
	p->depth--;
	return node;
}

static int parse_product(struct parser *p)
{
	int left = parse_primary(p);
	for (;;) {
		skip_space(p);
		char op = *p->at;
		if (left < 0 || (op != '*' && op != '/'))
			return left;
		p->at++;
		int right = parse_primary(p);
		if (right < 0)
			return -1;
		left = add_node(p, (struct node){ op == '*' ? MULTIPLY : DIVIDE, 0, NULL, left, right });
	}
}

static int parse_sum(struct parser *p)
{
	if (++p->depth > EXPR_MAX_DEPTH)
		return fail(p, "nested too deeply");
	int left = parse_product(p);
	for (;;) {
		skip_space(p);
		char op = *p->at;
		if (left < 0 || (op != '+' && op != '-'))
			break;
		p->at++;
		int right = parse_product(p);
		if (right < 0)
			return -1;
		left = add_node(p, (struct node){ op == '+' ? ADD : SUBTRACT, 0, NULL, left, right });
	}
	p->depth--;
	return left;
}

struct expr *expr_parse(const char *text, struct error *err)
{
	struct expr *e = xcalloc(1, sizeof(*e));
	struct parser p = { text, text, e, err, 0, 0 };
	e->root = parse_sum(&p);
	skip_space(&p);
	if (e->root >= 0 && *p.at)
		fail(&p, "unexpected character");
	if (p.failed || e->root < 0) {
		if (!p.failed)
			fail(&p, "not an expression");
		expr_free(e);
		return NULL;
	}
	return e;
}

void expr_free(struct expr *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->count; i++)
		free(e->nodes[i].name);
	free(e->nodes);
	free(e);
}

static int eval_node(const struct expr *e, int i, expr_lookup lookup, void *arg, double *out)
{
	const struct node *n = &e->nodes[i];
	double a = 0, b = 0;
	switch (n->kind) {
	case NUMBER:
		*out = n->number;
		return 0;
	case NAME:
		return lookup(n->name, out, arg) || !isfinite(*out) ? -1 : 0;
	case NEGATE:
		if (eval_node(e, n->left, lookup, arg, &a))
			return -1;
		*out = -a;
		return 0;
	default:
		break;
	}
	if (eval_node(e, n->left, lookup, arg, &a) || eval_node(e, n->right, lookup, arg, &b))
		return -1;
	switch (n->kind) {
	case ADD: *out = a + b; break;
	case SUBTRACT: *out = a - b; break;
	case MULTIPLY: *out = a * b; break;
	case DIVIDE:
		if (b == 0)
			return -1;
		*out = a / b;
		break;
	case MIN: *out = a < b ? a : b; break;
	case MAX: *out = a > b ? a : b; break;
	default: return -1;
	}
	return isfinite(*out) ? 0 : -1;
}

int expr_eval(const struct expr *e, expr_lookup lookup, void *arg, double *out)
{
	return eval_node(e, e->root, lookup, arg, out);
}

void expr_names(const struct expr *e, void (*fn)(const char *name, void *arg), void *arg)
{
	for (int i = 0; i < e->count; i++) { /* nodes are made in reading order */
		if (e->nodes[i].kind != NAME)
			continue;
		int seen = 0;
		for (int j = 0; j < i && !seen; j++)
			seen = e->nodes[j].kind == NAME && !strcmp(e->nodes[j].name, e->nodes[i].name);
		if (!seen)
			fn(e->nodes[i].name, arg);
	}
}
