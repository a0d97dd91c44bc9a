/*
 * expect: wait for one of several patterns on a session's stream, from an
 * offset or from the connection's own cursor, and answer with the match,
 * or at a timeout or the stream's end with every byte that came.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "cursor-file.h"
#include "expect.h"
#include "conn.h"
#include "method.h"
#include "request.h"

/* Expects one connection may have waiting at once. */
#define EXPECT_WAITING_MAX 256
/* Named cursors a session keeps, for all its streams. */
#define EXPECT_CURSORS_MAX 32
/* Bytes one pattern may have. */
#define EXPECT_PATTERN_MAX (64 * 1024)

/* The compiled patterns of one connection's waiting expects (bytes). */
#define METHOD_EXPECT_PATTERNS (16 * 1024 * 1024)

/*
 * Where expects on one session's stream go on from: a connection's own
 * (kept on the connection), or one named by the clients that share it
 * (kept on the session), such as the command line's.
 */
struct method_expect_cursor {
	unsigned long	 session;
	char		 stream[16];
	char		 name[33];
	uint64_t	 off;
};

static bool	method_expect_name_ok(const char *);

/* Free a closed connection's cursors. */
static void
method_expect_conn_closed(struct conn *c, void *arg)
{
	(void)arg;
	free(c->cursors);
	c->cursors = NULL;
	c->ncursors = 0;
}

/*
 * c's cursor for stream of s, made if it has none: at the session's first
 * byte if c launched it, else at the stream's end now.
 */
static struct method_expect_cursor *
method_expect_cursor(struct conn *c, struct session *s, const char *stream,
    struct output *o)
{
	struct method_expect_cursor	*k;
	size_t				 i;

	for (i = 0; i < c->ncursors; i++) {
		k = &c->cursors[i];
		if (k->session == s->id && strcmp(k->stream, stream) == 0)
			return k;
	}
	if (c->ncursors == 0)
		conn_hook_add(c, method_expect_conn_closed, NULL);
	c->cursors = xreallocarray(c->cursors, c->ncursors + 1,
	    sizeof *c->cursors);
	k = &c->cursors[c->ncursors++];
	k->session = s->id;
	strlcpy(k->stream, stream, sizeof k->stream);
	k->off = s->launched_by == c->serial ? 0 : output_size(o);
	return k;
}

/* s's cursor called name for stream, made at its first byte; NULL past the cap. */
static struct method_expect_cursor *
method_expect_find(struct session *s, const char *name, const char *stream)
{
	struct method_expect_cursor	*k;
	size_t				 i;

	for (i = 0; i < s->ncursors; i++) {
		k = &s->cursors[i];
		if (strcmp(k->name, name) == 0 && strcmp(k->stream, stream) == 0)
			return k;
	}
	if (s->ncursors == EXPECT_CURSORS_MAX)
		return NULL;
	s->cursors = xreallocarray(s->cursors, s->ncursors + 1,
	    sizeof *s->cursors);
	k = &s->cursors[s->ncursors++];
	memset(k, 0, sizeof *k);
	k->session = s->id;
	strlcpy(k->stream, stream, sizeof k->stream);
	strlcpy(k->name, name, sizeof k->name);
	return k;
}

/*
 * The session's cursor called name for stream, made at the session's
 * first byte if there is none; NULL with the error answered past the cap.
 */
static struct method_expect_cursor *
method_expect_named(struct request *req, const char *name, const char *stream)
{
	struct method_expect_cursor *k;

	if ((k = method_expect_find(req->session, name, stream)) == NULL)
		request_error(req, RPC_LIMIT, "session %lu has %d named cursors "
		    "already", req->session->id, EXPECT_CURSORS_MAX);
	return k;
}

/*
 * A named cursor the daemon that adopted s had left at off (its cursors
 * file, see cursor-file.c): expects go on from there, not from byte 0.
 */
void
method_expect_restore(struct session *s, const char *stream, const char *name,
    uint64_t off)
{
	struct method_expect_cursor *k;

	if (!method_expect_name_ok(name) || strlen(stream) >= sizeof k->stream ||
	    (k = method_expect_find(s, name, stream)) == NULL)
		return;
	k->off = off;
}

/* Whether a cursor's name is 1 to 32 letters, digits, '-', '_' or '.'. */
static bool
method_expect_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n >= 1 && n <= 32 && strspn(name, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n;
}

/* A request's expect, the stream it reads and the cursor a match moves. */
struct method_expect_data {
	struct expect	*e;
	const char	*stream;
	struct output	*o;
	const char	*cursor;	/* a named cursor, or NULL: the conn's */
	const char	*what;		/* the first pattern, for messages */
	size_t		 cost;		/* its patterns, charged to the conn */
};

/* Free a request's expect; its connection, if still there, has one fewer waiting. */
static void
method_expect_free(struct request *req)
{
	struct method_expect_data *d = req->data;

	if (req->conn != NULL) {
		req->conn->nexpects--;
		req->conn->pattern_bytes -= d->cost;
	}
	expect_free(d->e);
	free(d);
}

/* The cursor the request goes on from and a match moves, or NULL (answered past the cap). */
static struct method_expect_cursor *
method_expect_which(struct request *req, struct method_expect_data *d)
{
	if (d->cursor != NULL)
		return method_expect_named(req, d->cursor, d->stream);
	if (req->conn != NULL)
		return method_expect_cursor(req->conn, req->session, d->stream,
		    d->o);
	return NULL;
}

/* Answer an expect's outcome: the match (moving its cursor), or none with what came. */
static enum method_return
method_expect_answer(struct request *req, struct method_expect_data *d,
    enum expect_result r)
{
	struct method_expect_cursor	*k;
	char				 why[512], *text;
	size_t				 len;

	switch (r) {
	case EXPECT_MATCH:
		if ((k = method_expect_which(req, d)) != NULL)
			k->off = expect_next(d->e);
		/* A named one outlives the daemon: the next goes on there. */
		if (k != NULL && d->cursor != NULL)
			cursor_file_cursor(req->session, k->stream, k->name,
			    k->off);
		text = expect_answer(d->e, &len);
		return request_done_text(req, text, len);
	case EXPECT_TIMEOUT:
		return request_error_data(req, RPC_TIMEOUT, expect_answer_got(d->e),
		    "no match for %s in session %lu's %s stream after %lld ms",
		    d->what, req->session->id, d->stream,
		    request_int(req, "timeout", 0));
	case EXPECT_FAILED:
		expect_failure(d->e, why, sizeof why);
		return request_error_data(req, RPC_LIMIT, expect_answer_got(d->e),
		    "%s", why);
	case EXPECT_END:
		return request_error_data(req, RPC_EOF, expect_answer_got(d->e),
		    "session %lu's %s stream ended with no match for %s",
		    req->session->id, d->stream, d->what);
	default:
		log_fatal("an expect answered while it waits (%d)", r);
	}
}

/* The outcome of a waiting expect. */
static void
method_expect_done(void *arg, struct expect *e, enum expect_result r)
{
	struct request *req = arg;

	(void)e;
	method_expect_answer(req, req->data, r);
}

/*
 * The wait ran out: what came before now is still matched, a match that
 * could have grown taken as it stands; the answer may come a turn later.
 */
static void
method_expect_timeout(struct request *req)
{
	struct method_expect_data	*d = req->data;
	enum expect_result		 r = expect_time_up(d->e);

	if (r != EXPECT_BUSY)
		method_expect_answer(req, d, r);
}

/* The PCRE2 options the flags ask for; -1 for one not known. */
static int
method_expect_flags(json_t *flags, uint32_t *options, const char **bad)
{
	static const struct {
		const char	*name;
		uint32_t	 option;
	} table[] = {
		{ "caseless", PCRE2_CASELESS },
		{ "multiline", PCRE2_MULTILINE },
		{ "dotall", PCRE2_DOTALL },
		{ "extended", PCRE2_EXTENDED },
	};
	json_t	*v;
	size_t	 i, j;

	*options = 0;
	json_array_foreach(flags, i, v) {
		for (j = 0; j < sizeof table / sizeof table[0]; j++)
			if (strcmp(json_string_value(v), table[j].name) == 0)
				break;
		if (j == sizeof table / sizeof table[0]) {
			*bad = json_string_value(v);
			return -1;
		}
		*options |= table[j].option;
	}
	return 0;
}

/* The patterns (or literals) a request gives, as an array; NULL with an error. */
static json_t *
method_expect_list(struct request *req, bool *exact)
{
	json_t *p = request_get(req, "patterns"), *x = request_get(req,
	    "exact"), *a;

	*exact = x != NULL;
	if ((p == NULL) == (x == NULL)) {
		request_error(req, RPC_INVALID_PARAMS, "give \"patterns\" or "
		    "\"exact\" (one of them)");
		return NULL;
	}
	if (x != NULL)
		p = x;
	if (json_is_string(p)) {
		a = json_array();
		json_array_append(a, p);
		return a;
	}
	if (json_array_size(p) == 0 || json_array_size(p) >
	    EXPECT_PATTERNS_MAX) {
		request_error(req, RPC_INVALID_PARAMS, "\"%s\" must have 1 to "
		    "%d members", *exact ? "exact" : "patterns",
		    EXPECT_PATTERNS_MAX);
		return NULL;
	}
	return json_incref(p);
}

/* Compile every pattern of list into e; false with the error answered. */
static bool
method_expect_compile(struct request *req, struct expect *e, json_t *list,
    bool exact, uint32_t options)
{
	struct rpc_error	 err;
	json_t			*v;
	size_t			 i;

	json_array_foreach(list, i, v) {
		if (json_string_length(v) > EXPECT_PATTERN_MAX) {
			request_error(req, RPC_INVALID_PARAMS, "pattern %zu has "
			    "more than %d bytes", i, EXPECT_PATTERN_MAX);
			return false;
		}
		if (expect_add(e, json_string_value(v), json_string_length(v),
		    exact, options, &err) != 0) {
			request_fail(req, &err);
			return false;
		}
	}
	return true;
}

/* Build the request's expect: its start and compiled patterns; NULL answered. */
static struct expect *
method_expect_build(struct request *req, struct method_expect_data *d)
{
	struct method_expect_cursor	*k = NULL;
	struct expect			*e;
	json_t				*list;
	const char			*bad = NULL;
	uint32_t			 options;
	uint64_t			 from;
	bool				 exact, ok;

	if (method_expect_flags(request_get(req, "flags"), &options,
	    &bad) != 0) {
		request_error(req, RPC_INVALID_PARAMS, "no flag \"%s\": the "
		    "flags are caseless, multiline, dotall and extended", bad);
		return NULL;
	}
	if (d->cursor != NULL && !method_expect_name_ok(d->cursor)) {
		request_error(req, RPC_INVALID_PARAMS, "a cursor's name is 1 to "
		    "32 letters, digits, '-', '_' or '.'");
		return NULL;
	}
	/* `from`, else the cursor's place; the cursor is made either way. */
	if ((d->cursor != NULL || req->conn != NULL) &&
	    (k = method_expect_which(req, d)) == NULL)
		return NULL;
	from = request_get(req, "from") != NULL ? (uint64_t)request_int(req,
	    "from", 0) : k != NULL ? k->off : output_size(d->o);
	if ((list = method_expect_list(req, &exact)) == NULL)
		return NULL;
	e = expect_new(req->session, d->stream, d->o, from);
	ok = method_expect_compile(req, e, list, exact, options);
	json_decref(list);
	if (!ok) {
		expect_free(e);
		return NULL;
	}
	return e;
}

/* The first pattern as messages quote it, cut short when long. */
static const char *
method_expect_what(struct request *req)
{
	json_t *v = request_get(req, "patterns");

	if (v == NULL)
		v = request_get(req, "exact");
	if (json_is_array(v))
		v = json_array_get(v, 0);
	return json_string_value(v);
}

/* The stream grew or ended: the expect has work on the next turn. */
static void
method_expect_event(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct request			*req = k->arg;
	struct method_expect_data	*d = req->data;

	(void)s;
	(void)ev;
	expect_poke(d->e);
}

/*
 * Charge a waiting expect's compiled patterns to its connection; false,
 * answered with `limit`, past the connection's share. (The daemon's own
 * cap was checked as they were compiled.)
 */
static bool
method_expect_charge(struct request *req, struct method_expect_data *d)
{
	struct conn *c = req->conn;

	d->cost = expect_cost(d->e);
	if (c->pattern_bytes + d->cost > METHOD_EXPECT_PATTERNS) {
		request_error(req, RPC_LIMIT, "the compiled patterns of this "
		    "connection's waiting expects would take more than %d MiB",
		    METHOD_EXPECT_PATTERNS >> 20);
		return false;
	}
	c->pattern_bytes += d->cost;
	return true;
}

/* expect: the earliest match of any pattern from the cursor or `from`. */
static enum method_return
method_expect_exec(struct request *req)
{
	struct session			*s = req->session;
	struct method_expect_data	*d;
	struct rpc_error		 err;
	enum expect_result		 r;
	enum method_return		 rv;
	long long			 timeout = request_int(req, "timeout",
					    -1);

	/* Each waits with its compiled patterns and up to a window of bytes. */
	if (req->conn != NULL && req->conn->nexpects >= EXPECT_WAITING_MAX)
		return request_error(req, RPC_LIMIT, "%d expects wait on this "
		    "connection already", EXPECT_WAITING_MAX);
	d = xcalloc(1, sizeof *d);
	d->stream = request_str(req, "stream", session_stream_default(s));
	d->cursor = request_str(req, "cursor", NULL);
	d->what = method_expect_what(req);
	if ((d->o = session_stream_find(s, d->stream, &err)) == NULL) {
		free(d);
		return request_fail(req, &err);
	}
	if (strcmp(d->stream, "target-in") == 0) {
		free(d);
		return request_error(req, RPC_NOT_SUPPORTED, "expect reads "
		    "what a session writes; \"target-in\" is what was written "
		    "to it (read it with logs)");
	}
	if ((d->e = method_expect_build(req, d)) == NULL) {
		free(d);
		return METHOD_ERROR;
	}
	r = expect_start(d->e, method_expect_done, req);
	/* A timeout of 0: a match as it stands, or none, once all is seen. */
	if (timeout == 0 && (r == EXPECT_MORE || r == EXPECT_BUSY))
		r = expect_time_up(d->e);
	/* All seen, no match: a session its verdict holds is not waited on. */
	if (r == EXPECT_MORE && pending_held(req)) {
		rv = pending_verdict_end(req, expect_answer_got(d->e));
		expect_free(d->e);
		free(d);
		return rv;
	}
	if (r != EXPECT_MORE && r != EXPECT_BUSY) {
		rv = method_expect_answer(req, d, r);
		expect_free(d->e);
		free(d);
		return rv;
	}
	if (req->conn != NULL && !method_expect_charge(req, d)) {
		expect_free(d->e);
		free(d);
		return METHOD_ERROR;
	}
	pending_wait(req, d, method_expect_free);
	if (req->conn != NULL)
		req->conn->nexpects++;
	pending_sink(req, s, session_stream_events(), method_expect_event);
	if (timeout > 0)
		pending_timeout(req, timeout, method_expect_timeout);
	return METHOD_WAIT;
}

/* What a waiting expect ended early says: every byte that came, as a timeout's. */
static json_t *
method_expect_waited(struct request *req)
{
	struct method_expect_data *d = req->data;

	return expect_answer_got(d->e);
}

static const struct method_param method_expect_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "stream", PT_STRING, false, 0, 0 },
	{ "patterns", PT_STRING | PT_STRINGS, false, 0, 0 },
	{ "exact", PT_STRING | PT_STRINGS, false, 0, 0 },
	{ "flags", PT_STRINGS, false, 0, 0 },
	{ "from", PT_INT, false, 0, 1LL << 53 },
	{ "cursor", PT_STRING, false, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_expect = {
	.name = "expect",
	.params = method_expect_params,
	.flags = METHOD_WHILE_SHUTDOWN | METHOD_VERDICT_ENDS,
	.waited = method_expect_waited,
	.exec = method_expect_exec,
};

const struct method *const method_expects[] = {
	&method_expect,
	NULL
};
