/*
 * A session's watches (watch.h): each resolved once through gdb, then
 * sampled by watch-sample.c until it is stopped or the session ends.
 * Resolving asks gdb, for each expression, only what the program's
 * symbols answer: sizeof(e), &(e), and casts of constants to typeof(e)
 * that tell an integer from a float and a signed one from an unsigned;
 * sizeof(*(e)) tells a pointer. A target that runs is not halted for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "live.h"
#include "mi.h"
#include "watch.h"

/* The watches of one session, and the sink that hears it end. */
struct watch_set {
	TAILQ_ENTRY(watch_set)	 entry;
	struct session		*s;
	struct sink		*sink;
	struct watches		 list;
	unsigned long		 next_id;
};

/* Every session's set that has had a watch. */
static TAILQ_HEAD(, watch_set) watch_sets =
    TAILQ_HEAD_INITIALIZER(watch_sets);

/* What one of gdb's answers is for: which expression, which question. */
struct watch_ask {
	struct watch	*w;
	size_t		 i;
	int		 what;
};

/* The questions asked of gdb for each expression, in order. */
enum {
	WATCH_ASK_SIZE,
	WATCH_ASK_ADDR,
	WATCH_ASK_INTEGRAL,
	WATCH_ASK_SIGNED,
	WATCH_ASK_POINTER,
	WATCH_ASKS
};

/* The set of s, or NULL if it never had a watch. */
static struct watch_set *
watch_set_of(struct session *s)
{
	struct watch_set *ws;

	TAILQ_FOREACH(ws, &watch_sets, entry)
		if (ws->s == s)
			return ws;
	return NULL;
}

/* Free w, which is off its set's list, its reads and questions over. */
static void
watch_free(struct watch *w)
{
	size_t i;

	for (i = 0; i < w->nexprs; i++) {
		free(w->exprs[i].text);
		free(w->exprs[i].error);
	}
	for (i = 0; i < WATCH_INFLIGHT; i++) {
		free(w->slots[i].bytes);
		free(w->slots[i].reads);
	}
	free(w->exprs);
	free(w->spans);
	free(w->tokens);
	free(w->asks);
	json_decref(w->last);
	free(w);
}

/* Take back every question still waiting for gdb. */
static void
watch_unask(struct watch *w)
{
	size_t i;

	for (i = 0; i < w->ntokens; i++)
		if (w->tokens[i] != 0 && w->mi != NULL)
			mi_cancel(w->mi, w->tokens[i]);
	w->ntokens = 0;
	w->waiting = 0;
}

/*
 * Stop w: its sampling ends with a last line saying why, or, while it is
 * being resolved, its starter hears why. Then it is freed.
 */
void
watch_stop(struct watch *w, const char *why)
{
	struct rpc_error err = { 0 };

	TAILQ_REMOVE(&w->set->list, w, entry);
	if (w->running)
		watch_sample_stop(w, why);
	else {
		watch_unask(w);
		if (w->started != NULL) {
			rpc_error_set(&err, RPC_NOT_RUNNING, "%s", why);
			w->started(w->started_arg, NULL, &err);
		}
	}
	watch_free(w);
}

/* The session is ending, its streams still open: every watch stops. */
static void
watch_ending(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct watch_set	*ws = k->arg;
	struct watch		*w;
	char			 why[64];

	(void)ev;
	snprintf(why, sizeof why, "session %lu has ended", s->id);
	while ((w = TAILQ_FIRST(&ws->list)) != NULL)
		watch_stop(w, why);
	session_sink_remove(ws->sink);
	TAILQ_REMOVE(&watch_sets, ws, entry);
	free(ws);
}

/* The set of s, made with its sink the first time. */
static struct watch_set *
watch_set_get(struct session *s)
{
	struct watch_set *ws = watch_set_of(s);

	if (ws != NULL)
		return ws;
	ws = xcalloc(1, sizeof *ws);
	ws->s = s;
	ws->next_id = 1;
	TAILQ_INIT(&ws->list);
	ws->sink = session_sink_add(s, SE_ENDING, watch_ending, ws);
	TAILQ_INSERT_TAIL(&watch_sets, ws, entry);
	return ws;
}

/*
 * The refusal of expression e, gdb's message on one line. One about its
 * address replaces one about its size: "not an lvalue" says more.
 */
static void
watch_refuse(struct watch_expr *e, const char *fmt, const char *msg,
    bool first)
{
	char *p;

	if (e->error != NULL && !first)
		return;
	free(e->error);
	xasprintf(&e->error, fmt, e->text, msg != NULL ? msg : "no reason");
	for (p = e->error; *p != '\0'; p++)
		if (*p == '\n')
			*p = ' ';
	p = e->error + strlen(e->error);
	while (p > e->error && p[-1] == ' ')
		*--p = '\0';
}

/* What gdb answered: a number in *v, or NULL and gdb's message in *msg. */
static bool
watch_number(const struct mi_record *rec, long long *v, uint64_t *u,
    const char **msg)
{
	const char	*s;
	char		*end;

	*msg = "gdb ended before it answered";
	if (rec == NULL)
		return false;
	s = json_string_value(json_object_get(rec->results, "value"));
	if (strcmp(rec->cls, "error") == 0 || s == NULL) {
		*msg = json_string_value(json_object_get(rec->results, "msg"));
		return false;
	}
	*msg = s;
	errno = 0;
	if (u != NULL)
		*u = strtoull(s, &end, 0);
	else
		*v = strtoll(s, &end, 0);
	return errno == 0 && end != s && (*end == '\0' || *end == ' ');
}

/* One of gdb's answers about an expression. */
static void
watch_answer(struct watch_ask *a, const struct mi_record *rec)
{
	struct watch_expr	*e = &a->w->exprs[a->i];
	const char		*msg;
	long long		 v = 0;
	uint64_t		 u = 0;

	switch (a->what) {
	case WATCH_ASK_SIZE:
		if (!watch_number(rec, &v, NULL, &msg))
			watch_refuse(e, "gdb cannot evaluate \"%s\": %s", msg,
			    false);
		e->size = v > 0 ? (size_t)v : 0;
		return;
	case WATCH_ASK_ADDR:
		if (!watch_number(rec, NULL, &u, &msg))
			watch_refuse(e, "\"%s\" is not an lvalue gdb can place "
			    "in memory from the program's symbols alone: %s",
			    msg, true);
		e->addr = u;
		return;
	case WATCH_ASK_INTEGRAL:
		if (!watch_number(rec, &e->integral, NULL, &msg))
			watch_refuse(e, "\"%s\" has a type watch does not "
			    "decode (integers of 1, 2, 4 or 8 bytes, float, "
			    "double, pointers; not a struct, array or "
			    "function): %s", msg, false);
		return;
	case WATCH_ASK_SIGNED:
		(void)watch_number(rec, &e->is_signed, NULL, &msg);
		return;
	case WATCH_ASK_POINTER:
		e->pointer = watch_number(rec, &v, NULL, &msg);
		return;
	}
}

/* The type of a resolved expression, or a refusal if its size does not fit. */
static void
watch_typed(struct watch_expr *e)
{
	char size[32];

	snprintf(size, sizeof size, "%zu", e->size);
	if (e->error != NULL)
		return;
	if (e->pointer)
		e->type = WATCH_POINTER;
	else if (!e->integral)
		e->type = WATCH_FLOAT;
	else
		e->type = e->is_signed ? WATCH_SIGNED : WATCH_UNSIGNED;
	if (e->type == WATCH_FLOAT && e->size != 4 && e->size != 8)
		watch_refuse(e, "\"%s\" is a float of %s bytes: watch decodes "
		    "float and double", size, false);
	else if (e->size != 1 && e->size != 2 && e->size != 4 && e->size != 8)
		watch_refuse(e, "\"%s\" is %s bytes: watch decodes integers "
		    "and pointers of 1, 2, 4 or 8 bytes", size, false);
}

/* Every answer is in: the watch samples, or its starter hears why not. */
static void
watch_resolved(struct watch *w)
{
	struct rpc_error	 err = { 0 };
	char			 why[512];
	size_t			 i;
	watch_started_cb	 cb = w->started;

	w->started = NULL;
	w->ntokens = 0;
	for (i = 0; i < w->nexprs; i++) {
		watch_typed(&w->exprs[i]);
		if (w->exprs[i].error != NULL) {
			rpc_error_set(&err, RPC_INVALID_PARAMS, "%s",
			    w->exprs[i].error);
			break;
		}
	}
	if (err.code == 0 && watch_sample_spans(w, why, sizeof why) != 0)
		rpc_error_set(&err, RPC_INVALID_PARAMS, "%s", why);
	if (err.code != 0) {
		TAILQ_REMOVE(&w->set->list, w, entry);
		cb(w->started_arg, NULL, &err);
		watch_free(w);
		return;
	}
	watch_sample_start(w);
	cb(w->started_arg, w, NULL);
}

/* gdb answered one question of a watch being resolved. */
static void
watch_asked(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	struct watch_ask	*a = arg;
	struct watch		*w = a->w;

	(void)out;
	(void)len;
	w->tokens[a->i * WATCH_ASKS + a->what] = 0;
	watch_answer(a, rec);
	if (--w->waiting == 0)
		watch_resolved(w);
}

/* Ask gdb question what of expression i; false if its MI is closed. */
static bool
watch_ask(struct watch *w, size_t i, int what)
{
	static const char *const forms[WATCH_ASKS] = {
		"sizeof(%s)",
		"(unsigned long long)&(%s)",
		"(typeof(%s))1.5 == 1",
		"(typeof(%s))-1 < 0",
		"sizeof(*(%s))",
	};
	struct watch_ask	*a = &w->asks[i * WATCH_ASKS + what];
	char			*expr, *q;
	unsigned long		 token;

	a->w = w;
	a->i = i;
	a->what = what;
	xasprintf(&expr, forms[what], w->exprs[i].text);
	q = mi_cstring_quote(expr);
	free(expr);
	token = mi_command(w->mi, watch_asked, a, "-data-evaluate-expression "
	    "%s", q);
	free(q);
	if (token == 0)
		return false;
	w->tokens[i * WATCH_ASKS + what] = token;
	w->waiting++;
	return true;
}

/* Whether exprs are strings fit to give gdb: the error says which is not. */
static bool
watch_exprs_ok(json_t *exprs, struct rpc_error *err)
{
	json_t	*v;
	size_t	 i;

	if (json_array_size(exprs) == 0 || json_array_size(exprs) >
	    WATCH_EXPRS_MAX) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"expressions\" must "
		    "name 1 to %d expressions", WATCH_EXPRS_MAX);
		return false;
	}
	json_array_foreach(exprs, i, v) {
		if (*json_string_value(v) == '\0' || strpbrk(
		    json_string_value(v), "\r\n") != NULL) {
			rpc_error_set(err, RPC_INVALID_PARAMS, "expression %zu "
			    "is empty or spans lines", i + 1);
			return false;
		}
	}
	return true;
}

/*
 * Start watching exprs (strings) of s at hz: gdb (mi) resolves each, then
 * started hears the watch, or why it was refused. NULL with err if it
 * cannot begin (started is then not called).
 */
struct watch *
watch_start(struct session *s, struct mi *mi, json_t *exprs, unsigned hz,
    watch_started_cb started, void *arg, struct rpc_error *err)
{
	struct watch_set	*ws;
	struct watch		*w;
	json_t			*v;
	size_t			 i, n = 0;
	int			 what;

	if (!watch_exprs_ok(exprs, err))
		return NULL;
	ws = watch_set_get(s);
	TAILQ_FOREACH(w, &ws->list, entry)
		n++;
	if (n >= WATCH_MAX) {
		rpc_error_set(err, RPC_BUSY, "session %lu has %d watches "
		    "already: stop one first", s->id, WATCH_MAX);
		return NULL;
	}
	w = xcalloc(1, sizeof *w);
	w->set = ws;
	w->s = s;
	w->id = ws->next_id++;
	w->hz = hz;
	w->mi = mi;
	w->nexprs = json_array_size(exprs);
	w->exprs = xcalloc(w->nexprs, sizeof *w->exprs);
	json_array_foreach(exprs, i, v)
		w->exprs[i].text = xstrdup(json_string_value(v));
	w->tokens = xcalloc(w->nexprs * WATCH_ASKS, sizeof *w->tokens);
	w->asks = xcalloc(w->nexprs * WATCH_ASKS, sizeof *w->asks);
	w->ntokens = w->nexprs * WATCH_ASKS;
	w->started = started;
	w->started_arg = arg;
	TAILQ_INSERT_TAIL(&ws->list, w, entry);
	for (i = 0; i < w->nexprs; i++)
		for (what = 0; what < WATCH_ASKS; what++)
			if (!watch_ask(w, i, what)) {
				w->started = NULL;
				watch_unask(w);
				TAILQ_REMOVE(&ws->list, w, entry);
				watch_free(w);
				rpc_error_set(err, RPC_NOT_RUNNING, "gdb's MI "
				    "of session %lu is closed", s->id);
				return NULL;
			}
	return w;
}

/* The watch id of s, or NULL. */
struct watch *
watch_find(struct session *s, unsigned long id)
{
	struct watch_set	*ws = watch_set_of(s);
	struct watch		*w;

	if (ws == NULL)
		return NULL;
	TAILQ_FOREACH(w, &ws->list, entry)
		if (w->id == id)
			return w;
	return NULL;
}

/*
 * The connection that started watches is gone: they stop, as no client
 * would know to; watches outlive neither their client nor their session.
 */
void
watch_forget_conn(struct conn *c)
{
	struct watch_set	*ws;
	struct watch		*w, *next;

	TAILQ_FOREACH(ws, &watch_sets, entry)
		TAILQ_FOREACH_SAFE(w, &ws->list, entry, next)
			if (w->owner == c)
				watch_stop(w, "its client's connection closed");
}

/* The name of a watched value's type, as answers say it. */
static const char *
watch_type_name(const struct watch_expr *e)
{
	static const char *const ints[2][9] = {
		{ NULL, "uint8", "uint16", NULL, "uint32", NULL, NULL, NULL,
		    "uint64" },
		{ NULL, "int8", "int16", NULL, "int32", NULL, NULL, NULL,
		    "int64" },
	};

	switch (e->type) {
	case WATCH_FLOAT:
		return e->size == 4 ? "float" : "double";
	case WATCH_POINTER:
		return "pointer";
	case WATCH_SIGNED:
	case WATCH_UNSIGNED:
		break;
	}
	return ints[e->type == WATCH_SIGNED][e->size];
}

/* A watch as answers describe it: its id, rate, expressions, counts. */
json_t *
watch_json(const struct watch *w)
{
	json_t	*exprs = json_array();
	char	 addr[32];
	size_t	 i;

	for (i = 0; i < w->nexprs; i++) {
		snprintf(addr, sizeof addr, "0x%llx",
		    (unsigned long long)w->exprs[i].addr);
		json_array_append_new(exprs, json_pack("{s:s, s:s, s:I, s:s}",
		    "expression", w->exprs[i].text, "address", addr, "size",
		    (json_int_t)w->exprs[i].size, "type",
		    watch_type_name(&w->exprs[i])));
	}
	return json_pack("{s:I, s:I, s:o, s:I, s:I}", "watch",
	    (json_int_t)w->id, "hz", (json_int_t)w->hz, "expressions", exprs,
	    "samples", (json_int_t)w->samples, "skipped",
	    (json_int_t)w->skipped);
}

/* Every sampling watch of s, as watch_json says each. */
json_t *
watch_list(struct session *s)
{
	struct watch_set	*ws = watch_set_of(s);
	struct watch		*w;
	json_t			*out = json_array();

	if (ws == NULL)
		return out;
	TAILQ_FOREACH(w, &ws->list, entry)
		if (w->running)
			json_array_append_new(out, watch_json(w));
	return out;
}
