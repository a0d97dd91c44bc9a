/*
 * Looking into a gdb-family target over RPC: breakpoints (method-break.c),
 * expressions, memory and registers (method-inspect-regs.c). Each halts a
 * running target for the time it takes, but where, backtrace and threads,
 * which say where a halted target stopped, how it got there and where its
 * threads are, and memory with "live" where the kind has live memory
 * (method-inspect-live.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "daemon.h"
#include "hex.h"
#include "gdb.h"
#include "live.h"
#include "method-inspect.h"
#include "method.h"
#include "mi.h"
#include "request.h"

/* The frames backtrace lists unless told, and the most it lists. */
#define METHOD_INSPECT_FRAMES		64
#define METHOD_INSPECT_FRAMES_MAX	4096

/* The most bytes one memory read or write moves. */
#define METHOD_INSPECT_MEMORY_MAX (1024 * 1024)

/* Queue the job with the verb's timeout. */
enum method_return
method_inspect_run(struct request *req, struct gdb_job *j)
{
	return gdb_job_run(j, gdb_job_timeout, request_int(req,
	    "timeout", METHOD_INSPECT_TIMEOUT));
}

/* The last answer of the job's commands. */
json_t *
method_inspect_last(struct gdb_job *j)
{
	return json_array_get(j->replies, json_array_size(j->replies) - 1);
}

/* eval's answer: gdb's value. */
static json_t *
method_inspect_evaluated(struct gdb_job *j)
{
	return json_pack("{s:O*}", "value", json_object_get(
	    method_inspect_last(j), "value"));
}

/* eval: an expression's value in the target's current frame. */
static enum method_return
method_inspect_eval_exec(struct request *req)
{
	struct gdb_data	*g;
	struct gdb_job	*j;
	char		*q;

	if ((g = method_target_gdb(req, "eval")) == NULL)
		return METHOD_DONE;
	j = gdb_job_new(req, g, GDB_JOB_STOPPED, method_inspect_evaluated);
	q = mi_cstring_quote(request_str(req, "expression", ""));
	gdb_job_add(j, "-data-evaluate-expression %s", q);
	free(q);
	return method_inspect_run(req, j);
}

/* A memory param's address as gdb takes it: a number, or an expression. */
static char *
method_inspect_address(struct request *req)
{
	json_t	*v = request_get(req, "address");
	char	*s;

	if (json_is_integer(v)) {
		xasprintf(&s, "0x%llx", (unsigned long long)
		    json_integer_value(v));
		return s;
	}
	return mi_cstring_quote(json_string_value(v));
}

/*
 * A live access that a kind without live memory served by halting the
 * target, and resuming it, says so: "intrusive" (false if it was halted).
 */
static void
method_inspect_intrusive(struct gdb_job *j, json_t *out)
{
	if (!json_is_true(json_object_get(j->ctx, "live")))
		return;
	json_object_set_new(out, "via", json_string("halt"));
	json_object_set_new(out, "intrusive", json_boolean(j->halted_for));
}

/* memory read's answer: where, how much, the bytes as base64 and hex. */
static json_t *
method_inspect_read(struct gdb_job *j)
{
	json_t		*mem, *blk, *out;
	const char	*hex;
	unsigned char	*bytes;
	char		*b64;
	size_t		 len;

	mem = json_object_get(method_inspect_last(j), "memory");
	blk = json_array_get(mem, 0);
	hex = json_string_value(json_object_get(blk, "contents"));
	if (hex == NULL || (bytes = hex_decode(hex, strlen(hex), &len)) == NULL) {
		gdb_job_fail(j, RPC_DEBUGGER_ERROR, "gdb returned no memory");
		return NULL;
	}
	b64 = b64_encode(bytes, len);
	/* Both are ASCII by now: a 1 MiB read's UTF-8 checks are spared. */
	out = json_pack("{s:O*, s:I, s:o, s:o}", "address", json_object_get(
	    blk, "begin"), "length", (json_int_t)len, "base64",
	    json_stringn_nocheck(b64, strlen(b64)), "hex",
	    json_stringn_nocheck(hex, len * 2));
	free(b64);
	free(bytes);
	method_inspect_intrusive(j, out);
	return out;
}

/* memory write's answer: where, how much. */
static json_t *
method_inspect_written(struct gdb_job *j)
{
	json_t *out;

	out = json_pack("{s:O, s:O}", "address", json_object_get(j->ctx,
	    "address"), "length", json_object_get(j->ctx, "length"));
	method_inspect_intrusive(j, out);
	return out;
}

/* The bytes of a write's "data", or NULL with the request answered. */
static unsigned char *
method_inspect_bytes(struct request *req, size_t *len)
{
	json_t		*d = request_get(req, "data");
	const char	*b64 = json_string_value(json_object_get(d, "base64"));
	const char	*hex = json_string_value(json_object_get(d, "hex"));
	unsigned char	*bytes = NULL;

	if (b64 != NULL)
		bytes = b64_decode(b64, strlen(b64), len);
	else if (hex != NULL)
		bytes = hex_decode(hex, strlen(hex), len);
	if (bytes == NULL || *len == 0 || *len > METHOD_INSPECT_MEMORY_MAX) {
		free(bytes);
		request_error(req, RPC_INVALID_PARAMS, "memory write needs "
		    "\"data\": {\"base64\": ...} or {\"hex\": ...}, 1 byte to "
		    "1 MiB");
		return NULL;
	}
	return bytes;
}

/* The bytes of a write's "data" as hex, or NULL with the request answered. */
static char *
method_inspect_data(struct request *req, size_t *len)
{
	unsigned char	*bytes;
	char		*out;
	size_t		 i;

	if ((bytes = method_inspect_bytes(req, len)) == NULL)
		return NULL;
	out = xmalloc(*len * 2 + 1);
	for (i = 0; i < *len; i++)
		snprintf(out + 2 * i, 3, "%02x", bytes[i]);
	free(bytes);
	return out;
}

/* memory: read or write the target's bytes. */
static enum method_return
method_inspect_memory_exec(struct request *req)
{
	const char	*action = request_str(req, "action", "read");
	bool		 live = request_bool(req, "live");
	struct gdb_data	*g;
	struct gdb_job	*j;
	unsigned char	*bytes;
	char		*addr, *hex;
	size_t		 len;

	if ((g = method_target_gdb(req, "memory")) == NULL)
		return METHOD_DONE;
	if (strcmp(action, "read") == 0) {
		if (request_int(req, "length", 0) == 0)
			return request_error(req, RPC_INVALID_PARAMS, "memory "
			    "read needs \"length\", 1 to %d", METHOD_INSPECT_MEMORY_MAX);
		if (live && live_has(req->session))
			return method_inspect_live(req, g, NULL, (size_t)
			    request_int(req, "length", 0));
		j = gdb_job_new(req, g, GDB_JOB_STOPPED, method_inspect_read);
		json_object_set_new(j->ctx, "live", json_boolean(live));
		addr = method_inspect_address(req);
		gdb_job_add(j, "-data-read-memory-bytes %s %lld", addr,
		    request_int(req, "length", 0));
		free(addr);
		return method_inspect_run(req, j);
	}
	if (strcmp(action, "write") != 0)
		return request_error(req, RPC_INVALID_PARAMS, "\"action\" must "
		    "be read or write, not \"%s\"", action);
	if (live && live_has(req->session))
		return (bytes = method_inspect_bytes(req, &len)) == NULL ?
		    METHOD_DONE : method_inspect_live(req, g, bytes, len);
	if ((hex = method_inspect_data(req, &len)) == NULL)
		return METHOD_DONE;
	j = gdb_job_new(req, g, GDB_JOB_STOPPED, method_inspect_written);
	json_object_set_new(j->ctx, "live", json_boolean(live));
	addr = method_inspect_address(req);
	json_object_set(j->ctx, "address", request_get(req, "address"));
	json_object_set_new(j->ctx, "length", json_integer((json_int_t)len));
	gdb_job_add(j, "-data-write-memory-bytes %s %s", addr, hex);
	free(addr);
	free(hex);
	return method_inspect_run(req, j);
}

/*
 * A target stopped at its fault, with the frame the exception stacked (a
 * board's): the pc stacked, and the function, file and line it names, from
 * the fault record, which read them before anyone could act.
 */
static void
method_inspect_stacked(const struct session *s, json_t *out)
{
	json_t		*cm, *pc, *at, *st;
	const char	*const keys[] = { "func", "file", "line" };
	size_t		 i;

	if (!s->faulted || s->fault == NULL)
		return;
	cm = json_object_get(s->fault, "cortex_m");
	if ((pc = json_object_get(json_object_get(cm, "stacked"), "pc")) ==
	    NULL)
		return;
	st = json_pack("{s:O}", "pc", pc);
	at = json_object_get(cm, "faulting");
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (json_object_get(at, keys[i]) != NULL)
			json_object_set(st, keys[i], json_object_get(at,
			    keys[i]));
	json_object_set_new(out, "stacked", st);
}

/*
 * A frame as a stop record's frame says it: func, file by its full name,
 * line as a number, addr, what gdb knows of them.
 */
static json_t *
method_inspect_frame(json_t *mi)
{
	json_t		*frame = json_object(), *file;
	const char	*line = json_string_value(json_object_get(mi, "line"));

	if ((file = json_object_get(mi, "fullname")) == NULL)
		file = json_object_get(mi, "file");
	if (json_object_get(mi, "func") != NULL)
		json_object_set(frame, "func", json_object_get(mi, "func"));
	if (file != NULL)
		json_object_set(frame, "file", file);
	if (line != NULL)
		json_object_set_new(frame, "line", json_integer(atoll(line)));
	if (json_object_get(mi, "addr") != NULL)
		json_object_set(frame, "addr", json_object_get(mi, "addr"));
	return frame;
}

/*
 * where's answer: the frame gdb is in; at a board's fault, what the
 * exception stacked too.
 */
static json_t *
method_inspect_framed(struct gdb_job *j)
{
	json_t *out;

	out = json_pack("{s:o}", "frame", method_inspect_frame(
	    json_object_get(method_inspect_last(j), "frame")));
	/* The request may be gone (timed out): the job's session is not. */
	method_inspect_stacked(j->g->s, out);
	return out;
}

/*
 * A job for verb on the session's halted target, answered by done; NULL
 * once the request is answered with why not (no gdb, not halted). It
 * halts nothing: a running target's frames are gone by the time they are
 * told.
 */
static struct gdb_job *
method_inspect_halted_job(struct request *req, const char *verb,
    gdb_job_done done)
{
	struct gdb_data	*g;
	const char	*st;

	if ((g = method_target_gdb(req, verb)) == NULL)
		return NULL;
	st = gdb_control_state(req->session);
	if (strcmp(st, "exited") == 0) {
		request_error(req, RPC_NOT_RUNNING, "the target of session %lu "
		    "has exited: it has no frame", req->session->id);
		return NULL;
	}
	if (strcmp(st, "stopped") != 0) {
		request_error(req, RPC_NOT_READY, "the target of session %lu is "
		    "%s, not halted: halt it first", req->session->id, st);
		return NULL;
	}
	return gdb_job_new(req, g, 0, done);
}

/* Ask gdb cmd of the halted target for verb, answered by done. */
static enum method_return
method_inspect_halted_ask(struct request *req, const char *verb,
    gdb_job_done done, const char *cmd)
{
	struct gdb_job *j;

	if ((j = method_inspect_halted_job(req, verb, done)) == NULL)
		return METHOD_DONE;
	gdb_job_add(j, "%s", cmd);
	return method_inspect_run(req, j);
}

/* where: the current frame of a halted target. */
static enum method_return
method_inspect_where_exec(struct request *req)
{
	return method_inspect_halted_ask(req, "where", method_inspect_framed,
	    "-stack-info-frame");
}

/* backtrace's answer: the frames gdb listed, and whether the stack has more. */
static json_t *
method_inspect_backtraced(struct gdb_job *j)
{
	json_t	*frames = gdb_frames(json_object_get(method_inspect_last(j),
	    "stack"));
	size_t	 limit = (size_t)json_integer_value(json_object_get(j->ctx,
	    "limit"));
	bool	 more = json_array_size(frames) > limit;

	if (more)
		json_array_remove(frames, limit);
	return json_pack("{s:o,s:b}", "frames", frames, "more", more);
}

/* backtrace: the frames of a halted target, innermost first, at most limit. */
static enum method_return
method_inspect_backtrace_exec(struct request *req)
{
	struct gdb_job	*j;
	long long	 limit = request_int(req, "limit", METHOD_INSPECT_FRAMES);

	if ((j = method_inspect_halted_job(req, "backtrace",
	    method_inspect_backtraced)) == NULL)
		return METHOD_DONE;
	/* Kept with the job: its answer may come after the request is gone. */
	json_object_set_new(j->ctx, "limit", json_integer(limit));
	/* One frame past the limit tells whether the stack goes on. */
	gdb_job_add(j, "-stack-list-frames 0 %lld", limit);
	return method_inspect_run(req, j);
}

/* One thread of -thread-info as threads answers it. */
static json_t *
method_inspect_thread(json_t *mi, const char *current)
{
	const char	*const keys[][2] = { { "id", "id" }, { "target-id",
			    "target_id" }, { "name", "name" }, { "state",
			    "state" } };
	json_t		*t = json_object(), *v;
	size_t		 i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if ((v = json_object_get(mi, keys[i][0])) != NULL)
			json_object_set(t, keys[i][1], v);
	json_object_set_new(t, "current", json_boolean(current != NULL &&
	    strcmp(current, json_string_value(json_object_get(mi, "id")) ?:
	    "") == 0));
	if ((v = json_object_get(mi, "frame")) != NULL)
		json_object_set_new(t, "frame", method_inspect_frame(v));
	return t;
}

/* threads' answer: each thread gdb lists, and which is current. */
static json_t *
method_inspect_threaded(struct gdb_job *j)
{
	json_t		*last = method_inspect_last(j), *threads = json_array();
	json_t		*t, *cur = json_object_get(last, "current-thread-id");
	size_t		 i;

	json_array_foreach(json_object_get(last, "threads"), i, t)
		json_array_append_new(threads, method_inspect_thread(t,
		    json_string_value(cur)));
	return json_pack("{s:o,s:O?}", "threads", threads, "current", cur);
}

/* threads: the threads of a halted target, each where it is. */
static enum method_return
method_inspect_threads_exec(struct request *req)
{
	return method_inspect_halted_ask(req, "threads",
	    method_inspect_threaded, "-thread-info");
}

static const struct method_param method_inspect_backtrace_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "limit", PT_INT, false, 1, METHOD_INSPECT_FRAMES_MAX },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method_param method_inspect_eval_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "expression", PT_STRING, true, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method_param method_inspect_memory_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "action", PT_STRING, false, 0, 0 },
	{ "address", PT_STRING | PT_INT, true, 0, 0 },
	{ "length", PT_INT, false, 1, METHOD_INSPECT_MEMORY_MAX },
	{ "data", PT_OBJECT, false, 0, 0 },
	{ "live", PT_BOOL, false, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method_param method_inspect_threads_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method_param method_inspect_where_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_inspect_backtrace = {
	.name = "backtrace",
	.params = method_inspect_backtrace_params,
	.exec = method_inspect_backtrace_exec,
};

static const struct method method_inspect_eval = {
	.name = "eval",
	.params = method_inspect_eval_params,
	.exec = method_inspect_eval_exec,
};

static const struct method method_inspect_memory = {
	.name = "memory",
	.params = method_inspect_memory_params,
	.exec = method_inspect_memory_exec,
};

static const struct method method_inspect_threads = {
	.name = "threads",
	.params = method_inspect_threads_params,
	.exec = method_inspect_threads_exec,
};

static const struct method method_inspect_where = {
	.name = "where",
	.params = method_inspect_where_params,
	.exec = method_inspect_where_exec,
};

const struct method *const method_inspects[] = {
	&method_inspect_backtrace,
	&method_break,
	&method_inspect_eval,
	&method_inspect_memory,
	&method_inspect_regs,
	&method_inspect_threads,
	&method_inspect_where,
	NULL
};
