/* The metric catalog (see catalog.h), read with libyaml. */
#include "compute/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "roofline/roofline.h"
#include "util/sort.h"

/* The values gpuprof derives itself, as Nsight Compute's launch provider does. */
static const char *const derived_names[] = {
	"launch.grid_size", "launch.block_size", "launch.registers_per_thread",
	"launch.shared_memory_per_block", "launch.occupancy_warps", "launch.waves_per_sm",
	"launch.duration", "launch.occupancy_limit_warps", "launch.occupancy_limit_registers",
	"launch.occupancy_limit_shared_memory", "launch.occupancy_limit_blocks",
	/* the numeric facts of a workload's sysinfo.csv (compute/workload.h) */
	"device.sm_count", "device.warp_size", "device.max_warps_per_sm",
	"device.max_blocks_per_sm", "device.registers_per_sm", "device.shared_memory_per_sm",
	"device.sm_clock_hz", "device.memory_clock_hz", "device.memory_bus_bits",
	"device.l2_bytes", "device.dram_bytes", "device.dram_bandwidth",
};

int catalog_derived(const char *name)
{
	/* the ceilings of the workload's roofline.csv */
	if (!strncmp(name, "roofline.", 9))
		return roofline_find(name + 9) >= 0 ? 1 : -1;
	if (strncmp(name, "launch.", 7) && strncmp(name, "device.", 7))
		return 0;
	for (size_t i = 0; i < sizeof(derived_names) / sizeof(derived_names[0]); i++)
		if (!strcmp(name, derived_names[i]))
			return 1;
	return -1;
}

static const char *scalar(yaml_node_t *node)
{
	return node && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
}

struct reader {
	const char *path;
	yaml_document_t *doc;
	struct error *err;
};

static int fault(struct reader *r, yaml_node_t *node, const char *what)
{
	return error_set(r->err, "%s:%d: %s", r->path, node ? (int)node->start_mark.line + 1 : 0,
			 what);
}

/* Each pair of a mapping: key and value, through fn; stops at the first fault. */
#define FOR_PAIRS(r, map, key, value)                                                       \
	for (yaml_node_pair_t *p_ = (map)->data.mapping.pairs.start;                        \
	     p_ < (map)->data.mapping.pairs.top; p_++)                                       \
		for (const char *key = scalar(yaml_document_get_node((r)->doc, p_->key)); key; \
		     key = NULL)                                                               \
			for (yaml_node_t *value = yaml_document_get_node((r)->doc, p_->value);  \
			     value; value = NULL)

/* Whether id is its parent's id, a dot and a number (2.1 of 2, 2.1.0 of 2.1). */
static int child_id(const char *id, const char *parent)
{
	size_t n = strlen(parent);
	return !strncmp(id, parent, n) && id[n] == '.' && id[n + 1] &&
	       strspn(id + n + 1, "0123456789") == strlen(id + n + 1);
}

static void unknown_derived(const char *name, void *arg)
{
	char **bad = arg;
	if (!*bad && catalog_derived(name) < 0)
		*bad = xstrdup(name);
}

static int read_metric(struct reader *r, yaml_node_t *map, const char *table_id,
		       struct catalog_metric *m)
{
	if (map->type != YAML_MAPPING_NODE)
		return fault(r, map, "a metric is a mapping of id, name, expr, unit, description");
	yaml_node_t *expr_node = map, *peak_node = map, *ceiling_node = map;
	m->ceiling = -1;
	FOR_PAIRS(r, map, key, value) {
		const char *text = scalar(value);
		if (!strcmp(key, "expr"))
			expr_node = value;
		else if (!strcmp(key, "peak"))
			peak_node = value;
		else if (!strcmp(key, "ceiling"))
			ceiling_node = value;
		char **field = !strcmp(key, "id") ? &m->id : !strcmp(key, "name") ? &m->name
			: !strcmp(key, "expr") ? &m->expr_text : !strcmp(key, "unit") ? &m->unit
			: !strcmp(key, "peak") ? &m->peak_text
			: !strcmp(key, "ceiling") ? &m->ceiling_text
			: !strcmp(key, "description") ? &m->description : NULL;
		if (!field)
			return fault(r, value, "unknown key of a metric");
		if (!text || !*text || *field)
			return fault(r, value, "a metric's key has one text value");
		*field = xstrdup(text);
	}
	if (!m->id || !m->name || !m->expr_text || !m->unit || !m->description)
		return fault(r, map, "a metric needs an id, a name, an expr, a unit and a description");
	if (!child_id(m->id, table_id))
		return fault(r, map, "a metric's id is its table's id and a number (2.1.0)");
	if (m->ceiling_text && (m->ceiling = roofline_find(m->ceiling_text)) < 0)
		return fault(r, ceiling_node, "a ceiling is a column of roofline.csv (HBMBw, FP32Flops...)");
	if (m->ceiling >= 0 && (roofline_is_bandwidth(m->ceiling) ? strcmp(m->unit, "bytes")
				: strcmp(m->unit, "FLOP") && strcmp(m->unit, "OP")))
		return fault(r, ceiling_node, "a metric set against a bandwidth counts bytes, one set "
					      "against a throughput counts FLOP or OP");
	struct error e;
	if (!(m->expr = expr_parse(m->expr_text, &e)))
		return fault(r, expr_node, e.message);
	if (m->peak_text && !(m->peak = expr_parse(m->peak_text, &e)))
		return fault(r, peak_node, e.message);
	char *bad = NULL;
	expr_names(m->expr, unknown_derived, &bad);
	if (m->peak)
		expr_names(m->peak, unknown_derived, &bad);
	if (bad) {
		struct strbuf why = STRBUF_INIT;
		strbuf_addf(&why, "%s: gpuprof derives no such value", bad);
		fault(r, map, why.buf);
		strbuf_release(&why);
		free(bad);
		return -1;
	}
	return 0;
}

static int read_table(struct reader *r, yaml_node_t *map, int block, struct catalog_table *t)
{
	if (map->type != YAML_MAPPING_NODE)
		return fault(r, map, "a table is a mapping of id, title and metrics");
	yaml_node_t *metrics = NULL;
	FOR_PAIRS(r, map, key, value) {
		if (!strcmp(key, "metrics") && value->type == YAML_SEQUENCE_NODE && !metrics) {
			metrics = value;
		} else if ((!strcmp(key, "id") || !strcmp(key, "title")) && scalar(value)) {
			char **field = !strcmp(key, "id") ? &t->id : &t->title;
			if (*field)
				return fault(r, value, "a table's key given twice");
			*field = xstrdup(scalar(value));
		} else {
			return fault(r, value, "unknown key of a table, or not the value it takes");
		}
	}
	char block_id[16];
	snprintf(block_id, sizeof(block_id), "%d", block);
	if (!t->id || !t->title || !metrics)
		return fault(r, map, "a table needs an id, a title and metrics");
	if (!child_id(t->id, block_id))
		return fault(r, map, "a table's id is its block's and a number (2.1)");
	for (yaml_node_item_t *i = metrics->data.sequence.items.start;
	     i < metrics->data.sequence.items.top; i++) {
		t->metrics = xrealloc(t->metrics, (t->count + 1) * sizeof(*t->metrics));
		struct catalog_metric *m = &t->metrics[t->count++];
		memset(m, 0, sizeof(*m));
		if (read_metric(r, yaml_document_get_node(r->doc, *i), t->id, m))
			return -1;
		for (size_t k = 0; k + 1 < t->count; k++)
			if (!strcmp(t->metrics[k].id, m->id))
				return fault(r, yaml_document_get_node(r->doc, *i), "a metric id twice");
	}
	return 0;
}

static int read_block(struct reader *r, yaml_node_t *root, struct catalog_block *b)
{
	if (!root || root->type != YAML_MAPPING_NODE)
		return fault(r, root, "a block file is a mapping of block, title, alias and tables");
	yaml_node_t *tables = NULL;
	int have_id = 0;
	FOR_PAIRS(r, root, key, value) {
		const char *text = scalar(value);
		char *end;
		if (!strcmp(key, "block") && text && !have_id) {
			long id = strtol(text, &end, 10);
			if (*end || id < 0 || id > 99)
				return fault(r, value, "a block is a number from 0 to 99");
			b->id = (int)id;
			have_id = 1;
		} else if (!strcmp(key, "title") && text && !b->title) {
			b->title = xstrdup(text);
		} else if (!strcmp(key, "alias") && value->type == YAML_SEQUENCE_NODE && !b->aliases) {
			for (yaml_node_item_t *i = value->data.sequence.items.start;
			     i < value->data.sequence.items.top; i++) {
				const char *alias = scalar(yaml_document_get_node(r->doc, *i));
				if (!alias || !*alias)
					return fault(r, value, "an alias is a word");
				b->aliases = xrealloc(b->aliases, (b->alias_count + 1) * sizeof(char *));
				b->aliases[b->alias_count++] = xstrdup(alias);
			}
		} else if (!strcmp(key, "tables") && value->type == YAML_SEQUENCE_NODE && !tables) {
			tables = value;
		} else {
			return fault(r, value, "unknown key of a block, or not the value it takes");
		}
	}
	if (!have_id || !b->title || !tables)
		return fault(r, root, "a block needs a block number, a title and tables");
	for (yaml_node_item_t *i = tables->data.sequence.items.start;
	     i < tables->data.sequence.items.top; i++) {
		b->tables = xrealloc(b->tables, (b->count + 1) * sizeof(*b->tables));
		struct catalog_table *t = &b->tables[b->count++];
		memset(t, 0, sizeof(*t));
		if (read_table(r, yaml_document_get_node(r->doc, *i), b->id, t))
			return -1;
		for (size_t k = 0; k + 1 < b->count; k++)
			if (!strcmp(b->tables[k].id, t->id))
				return fault(r, yaml_document_get_node(r->doc, *i), "a table id twice");
	}
	return 0;
}

static void block_release(struct catalog_block *b)
{
	for (size_t t = 0; t < b->count; t++) {
		struct catalog_table *table = &b->tables[t];
		for (size_t i = 0; i < table->count; i++) {
			struct catalog_metric *m = &table->metrics[i];
			free(m->id), free(m->name), free(m->unit), free(m->description);
			free(m->expr_text), free(m->peak_text), free(m->ceiling_text);
			expr_free(m->expr), expr_free(m->peak);
		}
		free(table->metrics), free(table->id), free(table->title);
	}
	for (size_t i = 0; i < b->alias_count; i++)
		free(b->aliases[i]);
	free(b->aliases), free(b->tables), free(b->title), free(b->path);
}

static int by_block(const void *a, const void *b)
{
	const struct catalog_block *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

int catalog_load_file(const char *path, struct catalog *c, struct error *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return error_set(err, "cannot read the catalog file %s: %s", path, strerror(errno));
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	int rc = 0;
	if (!yaml_parser_load(&parser, &doc)) {
		rc = error_set(err, "%s:%d: %s", path, (int)parser.problem_mark.line + 1,
			       parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		fclose(f);
		return rc;
	}
	struct catalog_block b = { 0 };
	b.path = xstrdup(path);
	struct reader r = { path, &doc, err };
	rc = read_block(&r, yaml_document_get_root_node(&doc), &b);
	for (size_t i = 0; rc == 0 && i < c->count; i++)
		if (c->blocks[i].id == b.id)
			rc = error_set(err, "%s: block %d is also in %s", path, b.id, c->blocks[i].path);
	if (rc == 0) {
		c->blocks = xrealloc(c->blocks, (c->count + 1) * sizeof(*c->blocks));
		c->blocks[c->count++] = b;
		sort_array(c->blocks, c->count, sizeof(*c->blocks), by_block);
	} else {
		block_release(&b);
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	return rc ? -1 : 0;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_set(struct reader *r, yaml_node_t *map, const struct catalog *c,
		    struct catalog_set *s)
{
	if (map->type != YAML_MAPPING_NODE)
		return fault(r, map, "a set is a mapping of name, description, select, single_pass, "
				     "rocprof_compute");
	FOR_PAIRS(r, map, key, value) {
		const char *text = scalar(value);
		if (!strcmp(key, "name") && text && !s->name) {
			s->name = xstrdup(text);
		} else if (!strcmp(key, "description") && text && !s->description) {
			s->description = xstrdup(text);
		} else if (!strcmp(key, "single_pass") && text && (!strcmp(text, "true") ||
								    !strcmp(text, "false"))) {
			s->single_pass = !strcmp(text, "true");
		} else if (!strcmp(key, "rocprof_compute") && value->type == YAML_SEQUENCE_NODE &&
			   !s->aliases) {
			for (yaml_node_item_t *i = value->data.sequence.items.start;
			     i < value->data.sequence.items.top; i++) {
				const char *one = scalar(yaml_document_get_node(r->doc, *i));
				if (!one)
					return fault(r, value, "rocprof_compute lists set names");
				s->aliases = xrealloc(s->aliases, (s->alias_count + 1) * sizeof(char *));
				s->aliases[s->alias_count++] = xstrdup(one);
			}
		} else if (!strcmp(key, "select") && value->type == YAML_SEQUENCE_NODE && !s->select) {
			for (yaml_node_item_t *i = value->data.sequence.items.start;
			     i < value->data.sequence.items.top; i++) {
				const char *one = scalar(yaml_document_get_node(r->doc, *i));
				if (!one || catalog_select(c, one, NULL, NULL) < 0)
					return fault(r, value, "a set selects blocks, tables or metrics "
							       "of the catalog");
				s->select = xrealloc(s->select, (s->select_count + 1) * sizeof(char *));
				s->select[s->select_count++] = xstrdup(one);
			}
		} else {
			return fault(r, value, "unknown key of a set, or not the value it takes");
		}
	}
	if (!s->name || !s->description || !s->select_count)
		return fault(r, map, "a set needs a name, a description and a selection");
	return 0;
}

/* dir/sets.yaml into c, whose blocks are read. */
static int load_sets(const char *dir, struct catalog *c, struct error *err)
{
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s/sets.yaml", dir);
	FILE *f = fopen(path.buf, "rb");
	if (!f) {
		error_set(err, "cannot read %s: %s", path.buf, strerror(errno));
		strbuf_release(&path);
		return -1;
	}
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	int rc = 0;
	if (!yaml_parser_load(&parser, &doc)) {
		rc = error_set(err, "%s:%d: %s", path.buf, (int)parser.problem_mark.line + 1,
			       parser.problem ? parser.problem : "not YAML");
	} else {
		struct reader r = { path.buf, &doc, err };
		yaml_node_t *root = yaml_document_get_root_node(&doc), *sets = NULL;
		if (root && root->type == YAML_MAPPING_NODE)
			FOR_PAIRS(&r, root, key, value)
				if (!strcmp(key, "sets") && value->type == YAML_SEQUENCE_NODE)
					sets = value;
		if (!sets)
			rc = fault(&r, root, "the sets file is a mapping with a list 'sets'");
		for (yaml_node_item_t *i = sets ? sets->data.sequence.items.start : NULL;
		     rc == 0 && i < sets->data.sequence.items.top; i++) {
			c->sets = xrealloc(c->sets, (c->set_count + 1) * sizeof(*c->sets));
			struct catalog_set *s = &c->sets[c->set_count++];
			memset(s, 0, sizeof(*s));
			rc = read_set(&r, yaml_document_get_node(&doc, *i), c, s);
			for (size_t k = 0; rc == 0 && k + 1 < c->set_count; k++)
				if (catalog_set_named(&c->sets[k], s->name))
					rc = fault(&r, yaml_document_get_node(&doc, *i), "a set name twice");
			for (size_t a = 0; rc == 0 && a < s->alias_count; a++)
				for (size_t k = 0; rc == 0 && k + 1 < c->set_count; k++)
					if (catalog_set_named(&c->sets[k], s->aliases[a]))
						rc = fault(&r, yaml_document_get_node(&doc, *i),
							   "a set name twice");
		}
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	fclose(f);
	strbuf_release(&path);
	return rc ? -1 : 0;
}

int catalog_set_named(const struct catalog_set *s, const char *name)
{
	if (!strcmp(s->name, name))
		return 1;
	for (size_t a = 0; a < s->alias_count; a++)
		if (!strcmp(s->aliases[a], name))
			return 2;
	return 0;
}

int catalog_set_note(const struct catalog_set *s, const char *name, struct strbuf *note)
{
	if (catalog_set_named(s, name) != 2)
		return 0;
	strbuf_addf(note, "'%s' is rocprof-compute's set (AMD's counters): its nearest here, "
		    "'%s', is collected: %s", name, s->name, s->description);
	return 1;
}

const struct catalog_set *catalog_set(const struct catalog *c, const char *name)
{
	for (size_t i = 0; i < c->set_count; i++)
		if (catalog_set_named(&c->sets[i], name))
			return &c->sets[i];
	return NULL;
}

int catalog_load(const char *dir, struct catalog *c, struct error *err)
{
	memset(c, 0, sizeof(*c));
	DIR *d = opendir(dir);
	if (!d)
		return error_set(err, "cannot read the metric catalog %s: %s", dir, strerror(errno));
	char **names = NULL;
	size_t count = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n > 8 && !strcmp(e->d_name + n - 5, ".yaml") && e->d_name[0] >= '0' &&
		    e->d_name[0] <= '9') {
			names = xrealloc(names, (count + 1) * sizeof(*names));
			names[count++] = xstrdup(e->d_name);
		}
	}
	closedir(d);
	sort_array(names, count, sizeof(*names), by_text);
	int rc = count ? 0 : error_set(err, "the metric catalog %s has no block files", dir);
	for (size_t i = 0; i < count; i++) {
		struct strbuf path = STRBUF_INIT;
		strbuf_addf(&path, "%s/%s", dir, names[i]);
		if (rc == 0)
			rc = catalog_load_file(path.buf, c, err);
		strbuf_release(&path);
		free(names[i]);
	}
	free(names);
	if (rc == 0)
		rc = load_sets(dir, c, err);
	if (rc)
		catalog_release(c);
	return rc ? -1 : 0;
}

void catalog_release(struct catalog *c)
{
	for (size_t i = 0; i < c->count; i++)
		block_release(&c->blocks[i]);
	for (size_t i = 0; i < c->set_count; i++) {
		for (size_t k = 0; k < c->sets[i].select_count; k++)
			free(c->sets[i].select[k]);
		for (size_t a = 0; a < c->sets[i].alias_count; a++)
			free(c->sets[i].aliases[a]);
		free(c->sets[i].aliases);
		free(c->sets[i].select), free(c->sets[i].name), free(c->sets[i].description);
	}
	free(c->sets);
	free(c->blocks);
	memset(c, 0, sizeof(*c));
}

int catalog_selected(const struct catalog_block *b, const struct catalog_table *t,
		     const struct catalog_metric *m, const char *const *selections, int count)
{
	int yes = !count;
	for (int i = 0; i < count && !yes; i++)
		yes = catalog_matches(b, t, m, selections[i]);
	return yes;
}

int catalog_matches(const struct catalog_block *b, const struct catalog_table *t,
		    const struct catalog_metric *m, const char *selection)
{
	char id[16];
	snprintf(id, sizeof(id), "%d", b->id);
	if (!strcmp(selection, id) || !strcmp(selection, t->id) || !strcmp(selection, m->id))
		return 1;
	for (size_t a = 0; a < b->alias_count; a++)
		if (!strcmp(selection, b->aliases[a]))
			return 1;
	return 0;
}

int catalog_select(const struct catalog *c, const char *selection,
		   void (*fn)(const struct catalog_metric *m, void *arg), void *arg)
{
	int found = 0;
	for (size_t b = 0; b < c->count; b++)
		for (size_t t = 0; t < c->blocks[b].count; t++) {
			const struct catalog_table *table = &c->blocks[b].tables[t];
			for (size_t i = 0; i < table->count; i++)
				if (catalog_matches(&c->blocks[b], table, &table->metrics[i], selection)) {
					if (fn)
						fn(&table->metrics[i], arg);
					found++;
				}
		}
	return found ? found : -1;
}

static void add_cupti_name(const char *name, void *arg)
{
	struct strbuf *names = arg;
	if (!strcmp(name, "launch.duration"))
		name = CATALOG_DURATION;
	else if (catalog_derived(name))
		return;
	size_t n = strlen(name);
	for (const char *at = names->buf; at && (at = strstr(at, name)); at += n)
		if ((at == names->buf || at[-1] == '\n') && at[n] == '\n')
			return;
	strbuf_addf(names, "%s\n", name);
}

void catalog_cupti_names(const struct catalog_metric *m, struct strbuf *names)
{
	if (m->expr)
		expr_names(m->expr, add_cupti_name, names);
	if (m->peak)
		expr_names(m->peak, add_cupti_name, names);
}
