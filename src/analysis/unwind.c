/* Unwinding and naming the samples' stacks with libdw (see unwind.h). */
#include "analysis/unwind.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/unwind-modules.h"
#include "analysis/unwind-names.h"
#include "analysis/unwind-python.h"
#include "core/launch-delta.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/strbuf.h"

/* The sample being unwound, for libdw's callbacks. */
struct unwinding {
	const struct record_sample *sample;
	const unsigned char *stack;
	uint64_t pcs[UNWIND_MAX_FRAMES];
	int activation[UNWIND_MAX_FRAMES];
	int count;
	int cut;
	int short_copy; /* a word beyond the copied stack was asked for, the stack going on */
	int below_sp;   /* a word below the stack pointer (never copied) was asked for */
	int left_text;  /* a caller's address in no file or piece of run-time code: a guess */
	/* each frame's registers that a call keeps (python_code_registers), bit r known */
	uint64_t kept[UNWIND_MAX_FRAMES][PYTHON_CODE_REGISTERS];
	uint8_t kept_known[UNWIND_MAX_FRAMES];
	const struct jit_symbols *jit;
	/* the last stack end asked about, and whether it is an outermost frame: most stacks
	 * of a run end at one address (_start, a thread's clone) */
	Dwfl *end_dwfl;
	uint64_t end_pc;
	int end_activation, end_outermost;
};


static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	(void)dwfl;
	struct unwinding *u = arg;
	if (*thread_arg)
		return 0;
	*thread_arg = u;
	return (pid_t)u->sample->tid;
}

/* Words on the copied stack; nothing else of the process is known after the run. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr address, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct unwinding *u = arg;
	uint64_t sp = u->sample->registers[7];
	if (address < sp) { /* a register a function restored before returning, say */
		u->below_sp = 1;
		return false;
	}
	if (address - sp + sizeof(*result) > u->sample->stack_size) {
		/* a copy shorter than asked for reached the top of the stack: nothing above;
		 * a full one was cut (the spools before the flag: SAMPLE_STACK_BYTES long) */
		if ((u->sample->flags & SAMPLE_STACK_FULL) ||
		    u->sample->stack_size == SAMPLE_STACK_BYTES)
			u->short_copy = 1;
		return false;
	}
	memcpy(result, u->stack + (address - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwinding *u = arg;
	Dwarf_Word registers[SAMPLE_REGISTERS];
	if (u->sample->flags & SAMPLE_OFF_CPU) { /* the stack and instruction pointers alone */
		Dwarf_Word sp = u->sample->registers[7];
		return dwfl_thread_state_registers(thread, 7, 1, &sp) &&
		       (dwfl_thread_state_register_pc(thread, u->sample->registers[16]), true);
	}
	for (int i = 0; i < SAMPLE_REGISTERS; i++)
		registers[i] = u->sample->registers[i];
	/* rax..r15 are DWARF registers 0-15; the return address column (16) is rip */
	return dwfl_thread_state_registers(thread, 0, SAMPLE_REGISTERS, registers);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};


static int on_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwinding *u = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (u->count == UNWIND_MAX_FRAMES) {
		u->cut = 1;
		return DWARF_CB_ABORT;
	}
	/* a caller outside every file mapped and every piece of run-time code is not a
	 * caller: words of the stack read as one (a frame without unwind information, a
	 * file changed or gone), where the stack ends */
	uint64_t at = activation ? pc : pc - 1;
	if (u->count && !dwfl_addrmodule(dwfl_thread_dwfl(dwfl_frame_thread(frame)), at) &&
	    !unwind_jit_symbol(u->jit, at)) {
		u->left_text = 1;
		return DWARF_CB_ABORT;
	}
	u->kept_known[u->count] = 0;
	for (int r = 0; r < PYTHON_CODE_REGISTERS; r++) {
		Dwarf_Word value;
		if (dwfl_frame_reg(frame, python_code_registers[r], &value) == 0) {
			u->kept[u->count][r] = value;
			u->kept_known[u->count] |= (uint8_t)(1u << r);
		}
	}
	u->pcs[u->count] = pc;
	u->activation[u->count++] = activation;
	return DWARF_CB_OK;
}

/* Whether the frame at pc has no caller: the entry of the process or of a thread by name,
 * or by its unwind rule (the return address undefined); a return address points after its
 * call. */
static int outermost(Dwfl *dwfl, uint64_t pc, int activation)
{
	uint64_t at = activation ? pc : pc - 1;
	Dwfl_Module *module = dwfl ? dwfl_addrmodule(dwfl, at) : NULL;
	if (!module)
		return 0;
	static const char *const entries[] = { "_start", "__clone3", "__clone", "clone3", "clone" };
	const char *name = dwfl_module_addrname(module, at);
	for (size_t i = 0; name && i < sizeof(entries) / sizeof(entries[0]); i++)
		if (!strcmp(name, entries[i]))
			return 1;
	int found = 0;
	Dwarf_Addr bias;
	Dwarf_CFI *tables[2] = { dwfl_module_eh_cfi(module, &bias), NULL };
	Dwarf_Addr biases[2] = { bias, 0 };
	tables[1] = dwfl_module_dwarf_cfi(module, &biases[1]);
	for (int i = 0; i < 2 && !found; i++) {
		Dwarf_Frame *frame;
		if (!tables[i] || dwarf_cfi_addrframe(tables[i], at - biases[i], &frame))
			continue;
		Dwarf_Op ops_mem[3], *ops;
		size_t nops;
		int ra = (int)dwarf_frame_info(frame, NULL, NULL, NULL);
		found = dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) == 0 && nops == 0 &&
			ops == NULL;
		free(frame);
		if (!found) /* a rule for it: not the outermost, whichever table says */
			return 0;
	}
	return found;
}

static int ends_outermost(struct unwinding *u, Dwfl *dwfl)
{
	uint64_t pc = u->pcs[u->count - 1];
	int activation = u->activation[u->count - 1];
	if (!u->end_dwfl || u->end_dwfl != dwfl || u->end_pc != pc || u->end_activation != activation) {
		u->end_dwfl = dwfl;
		u->end_pc = pc;
		u->end_activation = activation;
		u->end_outermost = outermost(dwfl, pc, activation);
	}
	return u->end_outermost;
}

/* ---- naming ----------------------------------------------------------------------------- */

#define MAX_INLINED 15

/* The frames of an address: its function, then the functions inlined there, innermost
 * first. */
struct pc_frames {
	uint32_t frames[1 + MAX_INLINED];
	size_t count;
};

/* Addresses already named: most samples repeat the addresses of earlier ones (also, keyed
 * by thread, the leaf of each thread's last sample on the CPU). */
struct pc_cache {
	uint64_t *pcs;
	uint32_t *frames;
	size_t count, slots;
};

static uint32_t *pc_cache_slot(struct pc_cache *c, uint64_t pc)
{
	if (2 * (c->count + 1) > c->slots) {
		struct pc_cache old = *c;
		c->slots = old.slots ? 2 * old.slots : 4096;
		c->pcs = xcalloc(c->slots, sizeof(*c->pcs));
		c->frames = xcalloc(c->slots, sizeof(*c->frames));
		for (size_t i = 0; i < old.slots; i++)
			if (old.frames[i]) {
				size_t j = hash_int(old.pcs[i]) & (c->slots - 1);
				while (c->frames[j])
					j = (j + 1) & (c->slots - 1);
				c->pcs[j] = old.pcs[i];
				c->frames[j] = old.frames[i];
			}
		free(old.pcs);
		free(old.frames);
	}
	size_t j = hash_int(pc) & (c->slots - 1);
	while (c->frames[j] && c->pcs[j] != pc)
		j = (j + 1) & (c->slots - 1);
	c->pcs[j] = pc;
	return &c->frames[j]; /* the caller's value for pc; 0 when new */
}

/* ---- Python frames ------------------------------------------------------------------- */

/* Whether a frame is in the evaluation loop (one entry into it), maybe in a function
 * inlined there (_PyList_AppendTakeRef, in a list comprehension). */
static int evaluation_loop(const struct sample_stacks *s, const struct pc_frames *p)
{
	return !strcmp(s->frames[p->frames[0]].function, "_PyEval_EvalFrameDefault");
}

/* The functions inlined at a frame's address beneath node, the outermost first. */
static uint32_t inlined_frames(struct sample_stacks *s, uint32_t node, const struct pc_frames *p)
{
	for (size_t k = p->count - 1; k >= 1; k--)
		node = unwind_intern_node(s, node, p->frames[k]);
	return node;
}

/* The innermost frame of a launch stack that is the program's (u->pcs' index): the frame
 * of the API function it called, where one has that name (gpuprof's interposer, or the
 * vendor's library under CUPTI's callback); else the first below gpuprof's own libraries
 * (libgpuprof-*.so), CUPTI's (libcupti.so.*, which calls gpuprof back from inside the
 * API function) and the CUDA driver's (libcuda.so.*, which the runtime calls through
 * internal entry points), which called the API. */
static int launch_leaf_frame(const struct sample_stacks *s, const struct recording *rec,
			     const struct record_header *launch, const struct pc_frames *named,
			     const uint32_t *which, int count)
{
	const char *api = recording_string(rec, launch_stack_call(launch).function_id);
	for (int f = 0; *api && f < count; f++)
		if (!strcmp(s->frames[named[which[f]].frames[0]].function, api))
			return f;
	int f = 0;
	for (; f + 1 < count; f++) {
		const char *module = s->frames[named[which[f]].frames[0]].module;
		const char *base = strrchr(module, '/');
		const char *name = base ? base + 1 : module;
		if (!unwind_gpuprof_module(module) && strncmp(name, "libcupti.", 9) &&
		    strncmp(name, "libcuda.so", 10))
			break;
	}
	return f;
}

int sample_stacks_build(const struct recording *rec, struct sample_stacks *out)
{
	memset(out, 0, sizeof(*out));
	out->nodes = xcalloc(1, sizeof(*out->nodes)); /* the root */
	out->node_count = 1;
	out->sample_count = rec->samples.count;
	out->leaf = xcalloc(out->sample_count ? out->sample_count : 1, sizeof(*out->leaf));
	out->launch_count = rec->launch_stacks.count;
	out->launch_leaf = xcalloc(out->launch_count ? out->launch_count : 1,
				   sizeof(*out->launch_leaf));
	if (!rec->samples.count && !rec->launch_stacks.count)
		return 0;
	/* a libdw session per epoch of the files mapped, made when a sample needs it */
	struct module_epochs epochs;
	module_epochs_build(&epochs, rec);
	Dwfl **sessions = xcalloc(epochs.epoch_count, sizeof(*sessions));
	int *attached_to = xcalloc(epochs.epoch_count, sizeof(*attached_to));
	uint8_t *made = xcalloc(epochs.epoch_count, 1);
	struct pc_cache cache = { 0 }; /* by address and epoch */
	struct pc_frames *named = NULL; /* by cache value - 1 */
	struct unwinding *u = xcalloc(1, sizeof(*u));
	size_t tick_count = 0;
	const struct record_python_stack **ticks =
		xcalloc(rec->python_stacks.count ? rec->python_stacks.count : 1, sizeof(*ticks));
	for (size_t i = 0; i < rec->python_stacks.count; i++) {
		const struct record_python_stack *t = (const void *)rec->python_stacks.items[i];
		if (t->count <= (t->header.size - sizeof(*t)) / sizeof(struct python_frame))
			ticks[tick_count++] = t; /* a corrupt one, more frames than bytes, is left out */
	}
	python_ticks_sort(ticks, tick_count);
	struct python_codes codes;
	python_codes_build(&codes, rec);
	const struct record_python_code **hit_codes =
		xcalloc((size_t)UNWIND_MAX_FRAMES * PYTHON_CODE_REGISTERS, sizeof(*hit_codes));
	int *hit_cut = xcalloc(UNWIND_MAX_FRAMES, sizeof(*hit_cut));
	struct jit_symbols jit;
	unwind_jit_build(&jit, rec);
	struct pc_cache last_leaf = { 0 }; /* by tid: the leaf of its last sample on the CPU */
	struct launch_delta deltas = { 0 }; /* launch stacks made whole, thread by thread */
	/* the samples, then the launch stacks (a sample each, of the launching thread) */
	for (size_t i = 0; i < rec->samples.count + rec->launch_stacks.count; i++) {
		const struct record_header *launch = i < rec->samples.count ? NULL
			: rec->launch_stacks.items[i - rec->samples.count];
		const struct record_sample *sample = launch ? NULL : (const void *)rec->samples.items[i];
		uint32_t *leaf = launch ? &out->launch_leaf[i - rec->samples.count] : &out->leaf[i];
		const struct record_launch_stack *whole = (const void *)launch;
		const struct record_launch_delta *compact = (const void *)launch;
		if (launch && (launch->type == RECORD_LAUNCH_STACK
				       ? whole->sample.header.size != launch->size -
						offsetof(struct record_launch_stack, sample) ||
						 !(whole->sample.flags & SAMPLE_LAUNCH)
				       : !(compact->sample_flags & SAMPLE_LAUNCH)))
			continue; /* corrupt */
		if (launch && !(sample = launch_delta_next(&deltas, launch))) {
			*leaf = unwind_intern_node(out, 0, unwind_intern_frame(
				out, "[stack lost: the launch stack it differs from is missing]", "", 0,
				"", 0, 0));
			continue;
		}
		if (sample->flags & SAMPLE_RUNNABLE) { /* where its last sample stood */
			uint32_t *where = pc_cache_slot(&last_leaf, sample->tid);
			*leaf = unwind_intern_node(out, *where, unwind_intern_frame(out, "[waiting for a CPU]", "", 0,
								   "", 0, 0));
			continue;
		}
		u->sample = sample;
		u->stack = (const unsigned char *)(sample + 1);
		u->count = 0;
		u->cut = 0;
		u->short_copy = 0;
		u->below_sp = 0;
		u->left_text = 0;
		u->jit = &jit;
		if (sample->stack_size > sample->header.size - sizeof(*sample)) /* corrupt */
			continue;
		size_t epoch = module_epochs_at(&epochs, sample->time_ns);
		if (!made[epoch]) {
			made[epoch] = 1;
			sessions[epoch] = unwind_report_modules(rec, &epochs, epoch, out);
			attached_to[epoch] = sessions[epoch] &&
				dwfl_attach_state(sessions[epoch], NULL, (pid_t)rec->process->pid,
						  &thread_callbacks, u);
		}
		Dwfl *dwfl = sessions[epoch];
		int rc = attached_to[epoch] ? dwfl_getthread_frames(dwfl, (pid_t)sample->tid,
								     on_frame, u) : 0;
		/* libdw ends a stack where a word it needed was not copied (beyond a full copy:
		 * a stack deeper than copied; below the stack pointer: a register restored
		 * before a return), or where it could not take a frame further (the dynamic
		 * linker's lazy-binding trampoline), as it ends one at its outermost frame: the
		 * frame's unwind rule (no caller) or its name (the process's or a thread's
		 * entry) tells them apart. A stack cut so, or by an error, says so at its root,
		 * never guessed past. */
		const char *stopped = NULL;
		if (u->count && !u->cut &&
		    (rc == -1 || u->left_text || !ends_outermost(u, dwfl)))
			stopped = u->short_copy ? "[truncated: deeper than the stack copied]"
						: "[unwinding stopped]";
		out->incomplete += stopped && u->short_copy && !launch;
		if (stopped && u->short_copy && !launch && sample->stack_size > out->copied_bytes)
			out->copied_bytes = sample->stack_size;
		if (!u->count) { /* no unwinding: the sampled address alone */
			u->pcs[0] = sample->registers[16];
			u->activation[0] = 1;
			u->count = 1;
		}
		out->cut += launch ? 0 : (size_t)u->cut;
		out->unwound_to_one += u->count == 1;
		/* the Python frames of the nearest tick, one group per entry into the
		 * evaluation loop, from the outermost: the n-th evaluation loop from the root
		 * is replaced by the n-th group */
		uint32_t which[UNWIND_MAX_FRAMES]; /* each frame's names, in named[] */
		int loops = 0;                     /* entries into the evaluation loop */
		for (int f = u->count - 1; f >= 0; f--) {
			/* a return address points after its call: name the call */
			uint64_t pc = u->activation[f] ? u->pcs[f] : u->pcs[f] - 1;
			/* user addresses fit in 48 bits: the epoch above them */
			uint32_t *cached = pc_cache_slot(&cache, pc ^ ((uint64_t)epoch << 48));
			if (!*cached) { /* its function, then what was inlined there, innermost first */
				struct pc_frames p = { 0 };
				p.frames[0] = dwfl ? unwind_name_frame(out, dwfl, pc, &jit)
						   : unwind_intern_frame(out, "[unknown]", "", pc, "", 0, 0);
				p.count = 1 + (dwfl ? unwind_inlined_frames(out, dwfl, pc, p.frames + 1,
								     MAX_INLINED) : 0);
				named = xrealloc(named, (cache.count + 1) * sizeof(*named));
				named[cache.count++] = p;
				*cached = (uint32_t)cache.count;
			}
			which[f] = *cached - 1;
			unwind_note_used(out, pc);
			loops += evaluation_loop(out, &named[which[f]]);
		}
		/* the code each evaluation loop ran at the sample, from the root */
		struct python_hits hits = { hit_codes, hit_cut, loops, 0 };
		for (int f = u->count - 1, k = 0; f >= 0; f--) {
			if (!evaluation_loop(out, &named[which[f]]))
				continue;
			const struct record_python_code **found = hit_codes + k++ * PYTHON_CODE_REGISTERS;
			int any = 0;
			for (int r = 0; r < PYTHON_CODE_REGISTERS; r++) {
				found[r] = codes.count && (u->kept_known[f] & (1u << r))
					? python_codes_find(&codes, u->kept[f][r], sample->time_ns) : NULL;
				any |= found[r] != NULL;
			}
			hits.known += any;
		}
		const struct record_python_stack *python = tick_count
			? python_tick_for(ticks, tick_count, sample, &hits) : NULL;
		int first = launch ? launch_leaf_frame(out, rec, launch, named, which, u->count) : 0;
		const struct python_frame *py = python ? (const void *)(python + 1) : NULL;
		int py_next = python ? (int)python->count - 1 : -1; /* outermost not yet used */
		uint32_t node = stopped ? unwind_intern_node(out, 0, unwind_intern_frame(out, stopped, "", 0, "", 0, 0))
				: 0;
		int group = 0;
		for (int f = u->count - 1; f >= first; f--) { /* from the root down */
			const struct pc_frames *p = &named[which[f]];
			const struct record_python_code *ran;
			if (py_next < 0 && evaluation_loop(out, p) && group < loops &&
			    (ran = python_hits_ran(&hits, group))) {
				/* no tick has a group for this loop: the function its registers
				 * point into (its line unknown) */
				struct python_frame alone = { ran->function_id, ran->file_id, 0,
							      PYTHON_FRAME_ENTRY };
				node = unwind_intern_node(out, node, unwind_python_frame(out, rec, &alone));
				group++;
				node = inlined_frames(out, node, p);
				continue;
			}
			if (py_next >= 0 && evaluation_loop(out, p)) {
				/* a group: its entry frame, then those it called, down to the one
				 * that ran the code the sample's registers point into */
				int cut = python ? hit_cut[group] : -1, named_all = 0;
				do {
					if (!named_all)
						node = unwind_intern_node(out, node, unwind_python_frame(out, rec, &py[py_next]));
					named_all |= py_next == cut;
				} while (--py_next >= 0 && !(py[py_next].flags & PYTHON_FRAME_ENTRY));
				group++;
				node = inlined_frames(out, node, p); /* inlined there, in Python's */
				continue;
			}
			node = unwind_intern_node(out, node, p->frames[0]);
			node = inlined_frames(out, node, p);
		}
		if (sample->flags & SAMPLE_OFF_CPU) {
			node = unwind_intern_node(out, node, unwind_wait_frame(out, sample->syscall));
		} else if (!launch) {
			uint32_t *slot = pc_cache_slot(&last_leaf, sample->tid);
			last_leaf.count += !*slot; /* a thread's first (a node is never 0) */
			*slot = node;
		}
		*leaf = node;
	}
	struct strbuf unreadable = STRBUF_INIT;
	for (size_t i = 0; i < out->note_count; i++)
		if (out->notes[i].used)
			strbuf_addf(&unreadable, "%s\n", out->notes[i].text);
	out->unreadable = unreadable.len ? strbuf_detach(&unreadable) : NULL;
	strbuf_release(&unreadable);
	free(u);
	free(ticks);
	free(hit_codes);
	free(hit_cut);
	python_codes_release(&codes);
	launch_delta_release(&deltas);
	free(last_leaf.pcs);
	free(last_leaf.frames);
	free(jit.by_start);
	free(cache.pcs);
	free(cache.frames);
	free(named);
	for (size_t e = 0; e < epochs.epoch_count; e++)
		if (sessions[e])
			dwfl_end(sessions[e]);
	free(sessions);
	free(attached_to);
	free(made);
	module_epochs_release(&epochs);
	return 0;
}

size_t sample_stack_frames(const struct sample_stacks *s, uint32_t node, uint32_t *frames,
			   size_t max)
{
	size_t n = 0;
	for (; node && n < max; node = s->nodes[node].parent)
		frames[n++] = s->nodes[node].frame;
	return n;
}

void sample_stacks_release(struct sample_stacks *s)
{
	for (size_t i = 0; i < s->frame_count; i++) {
		free(s->frames[i].function);
		free(s->frames[i].module);
		free(s->frames[i].source);
	}
	free(s->frames);
	free(s->nodes);
	free(s->leaf);
	free(s->launch_leaf);
	free(s->unreadable);
	for (size_t i = 0; i < s->note_count; i++)
		free(s->notes[i].text);
	free(s->notes);
	free(s->frame_slots);
	free(s->node_slots);
	memset(s, 0, sizeof(*s));
}
