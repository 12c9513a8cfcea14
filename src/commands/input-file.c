/* Input and preset files (see input-file.h), read with libyaml. */
#include "commands/input-file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/strbuf.h"

static void job_add(struct input_job *job, const char *key, const char *value, int line)
{
	struct strbuf arg = STRBUF_INIT;
	strbuf_addstr(&arg, "--");
	for (const char *c = key; *c; c++)
		strbuf_addch(&arg, *c == '_' ? '-' : *c);
	strbuf_addf(&arg, "=%s", value);
	job->settings = xrealloc(job->settings, (job->count + 1) * sizeof(*job->settings));
	job->settings[job->count++] = (struct input_setting){ xstrdup(key), strbuf_detach(&arg),
							      line };
}

static const char *scalar(yaml_node_t *node)
{
	return node && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
}

static int line_of(yaml_node_t *node)
{
	return (int)node->start_mark.line + 1;
}

/* One job: a mapping of keys to scalars or lists of scalars. */
static int read_job(const char *path, yaml_document_t *doc, yaml_node_t *map,
		    struct input_job *job, struct error *err)
{
	if (map->type != YAML_MAPPING_NODE)
		return error_set(err, "%s:%d: a job is a mapping of option names to values",
				 path, line_of(map));
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *key = scalar(k);
		if (!key)
			return error_set(err, "%s:%d: a key must be a name", path, line_of(k));
		if (!strcmp(key, "description")) {
			if (!scalar(v))
				return error_set(err, "%s:%d: key 'description': a text", path,
						 line_of(v));
			free(job->description);
			job->description = xstrdup(scalar(v));
			continue;
		}
		if (scalar(v)) {
			job_add(job, key, scalar(v), line_of(k));
			continue;
		}
		if (v->type != YAML_SEQUENCE_NODE)
			return error_set(err, "%s:%d: key '%s': a value or a list of values", path,
					 line_of(k), key);
		struct strbuf joined = STRBUF_INIT;
		for (yaml_node_item_t *i = v->data.sequence.items.start;
		     i < v->data.sequence.items.top; i++) {
			yaml_node_t *item = yaml_document_get_node(doc, *i);
			if (!scalar(item)) {
				strbuf_release(&joined);
				return error_set(err, "%s:%d: key '%s': list items must be values",
						 path, line_of(item), key);
			}
			strbuf_addf(&joined, "%s%s", joined.len ? "," : "", scalar(item));
		}
		job_add(job, key, joined.buf ? joined.buf : "", line_of(k));
		strbuf_release(&joined);
	}
	return 0;
}

int input_read(const char *path, struct input_file *in, struct error *err)
{
	memset(in, 0, sizeof(*in));
	FILE *f = fopen(path, "re");
	if (!f)
		return error_set(err, "cannot read '%s': %s", path, strerror(errno));
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	int loaded = yaml_parser_load(&parser, &doc);
	int rc = 0;
	if (!loaded) {
		rc = error_set(err, "%s:%d:%d: %s%s%s", path, (int)parser.problem_mark.line + 1,
			       (int)parser.problem_mark.column + 1,
			       parser.problem ? parser.problem : "not JSON or YAML",
			       parser.context ? " " : "", parser.context ? parser.context : "");
		goto out;
	}
	in->path = xstrdup(path);
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = error_set(err, "%s:%d: expected a mapping of option names to values, or "
			       "{\"jobs\": [...]}", path, root ? line_of(root) : 1);
		goto done;
	}
	yaml_node_t *jobs = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		const char *key = scalar(yaml_document_get_node(&doc, p->key));
		if (key && !strcmp(key, "jobs"))
			jobs = yaml_document_get_node(&doc, p->value);
	}
	if (!jobs) {
		in->jobs = xcalloc(1, sizeof(*in->jobs));
		in->count = 1;
		rc = read_job(path, &doc, root, &in->jobs[0], err);
		goto done;
	}
	if (root->data.mapping.pairs.top - root->data.mapping.pairs.start != 1) {
		rc = error_set(err, "%s:%d: with \"jobs\", options go inside each job", path,
			       line_of(root));
		goto done;
	}
	if (jobs->type != YAML_SEQUENCE_NODE || jobs->data.sequence.items.top ==
						    jobs->data.sequence.items.start) {
		rc = error_set(err, "%s:%d: key 'jobs': a list of one or more jobs", path,
			       line_of(jobs));
		goto done;
	}
	size_t n = (size_t)(jobs->data.sequence.items.top - jobs->data.sequence.items.start);
	in->jobs = xcalloc(n, sizeof(*in->jobs));
	for (size_t i = 0; rc == 0 && i < n; i++) {
		in->count++;
		rc = read_job(path, &doc, yaml_document_get_node(&doc, jobs->data.sequence.items.start[i]),
			      &in->jobs[i], err);
	}
done:
	yaml_document_delete(&doc);
out:
	yaml_parser_delete(&parser);
	fclose(f);
	if (rc)
		input_release(in);
	return rc;
}

void input_release(struct input_file *in)
{
	for (size_t j = 0; j < in->count; j++) {
		for (size_t i = 0; i < in->jobs[j].count; i++) {
			free(in->jobs[j].settings[i].key);
			free(in->jobs[j].settings[i].argument);
		}
		free(in->jobs[j].settings);
		free(in->jobs[j].description);
	}
	free(in->jobs);
	free(in->path);
	memset(in, 0, sizeof(*in));
}

int input_apply(const struct input_file *in, const struct input_job *job,
		const struct option *table, const char *const *refused, struct error *err)
{
	for (size_t i = 0; i < job->count; i++) {
		const struct input_setting *s = &job->settings[i];
		for (const char *const *r = refused; r && *r; r++) {
			size_t n = strlen(*r);
			if (!strncmp(s->argument + 2, *r, n) && s->argument[2 + n] == '=')
				return error_set(err, "%s:%d: key '%s' cannot be set in a file", in->path,
						 s->line, s->key);
		}
		char *argv[] = { "gpuprof", s->argument, NULL };
		struct error e;
		int next;
		if (options_parse(table, 2, argv, &next, &e))
			return error_set(err, "%s:%d: key '%s': %s", in->path, s->line, s->key,
					 e.message);
	}
	return 0;
}
