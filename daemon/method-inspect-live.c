/*
 * memory with "live": the target's memory read or written while it runs,
 * through the session's live memory (live.c), never halting it. An
 * address that is an expression (&counter) is asked of gdb first, as a
 * number: gdb works out a symbol's address without the target, and
 * refuses what would need its memory while it runs. Kinds without live
 * memory are served by method-inspect.c's halt, access and resume, which
 * says "intrusive".
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "daemon.h"
#include "gdb.h"
#include "live.h"
#include "method-inspect.h"
#include "method.h"
#include "mi.h"
#include "request.h"

/* One live memory request while it waits: for gdb's address, then the access. */
struct method_inspect_live {
	struct request	*req;
	struct gdb_data	*g;
	unsigned long	 token;		/* gdb's evaluation of the address */
	struct live_op	*op;
	bool		 write;
	uint64_t	 addr;
	unsigned char	*data;		/* a write's bytes */
	size_t		 len;
};

/* The request is finished (answered, timed out, client gone): let go. */
static void
method_inspect_live_gone(struct request *req)
{
	struct method_inspect_live *ml = req->data;

	if (ml->token != 0 && ml->g->mi != NULL)
		mi_cancel(ml->g->mi, ml->token);
	live_cancel(ml->op);
	free(ml->data);
	free(ml);
	req->data = NULL;
}

/* A live access ran out of the verb's time. */
static void
method_inspect_live_timeout(struct request *req)
{
	request_error(req, RPC_TIMEOUT, "session %lu: live memory did not "
	    "answer in time", req->session->id);
}

/* The access's answer: where, how much, by which way; a read's bytes. */
static void
method_inspect_live_done(void *arg, const struct live_result *r)
{
	struct method_inspect_live	*ml = arg;
	json_t			*out;
	char			*b64, *hex, addr[32];
	size_t			 i;

	ml->op = NULL;
	if (r->code != 0) {
		request_error(ml->req, r->code, "%s", r->error);
		return;
	}
	snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)ml->addr);
	out = json_pack("{s:s, s:I, s:s, s:b, s:O*}", "address", addr,
	    "length", (json_int_t)r->len, "via", r->via, "intrusive", 0,
	    "target", ml->req->session->target);
	if (!ml->write) {
		b64 = b64_encode(r->data, r->len);
		hex = xmalloc(r->len * 2 + 1);
		for (i = 0; i < r->len; i++)
			snprintf(hex + 2 * i, 3, "%02x", r->data[i]);
		json_object_set_new(out, "base64", json_string(b64));
		json_object_set_new(out, "hex", json_string(hex));
		free(b64);
		free(hex);
	}
	request_done(ml->req, out);
}

/* Start the access at ml->addr; the request is answered if it cannot. */
static void
method_inspect_live_access(struct method_inspect_live *ml)
{
	struct rpc_error err = { 0 };

	if (ml->write)
		ml->op = live_write(ml->req->session, ml->addr, ml->data,
		    ml->len, method_inspect_live_done, ml, &err);
	else
		ml->op = live_read(ml->req->session, ml->addr, ml->len,
		    method_inspect_live_done, ml, &err);
	if (ml->op == NULL)
		request_error(ml->req, err.code, "%s", err.message);
}

/* gdb's value of the address expression: the access goes on at it. */
static void
method_inspect_live_addressed(void *arg, const struct mi_record *rec,
    const char *out, size_t len)
{
	struct method_inspect_live	*ml = arg;
	const char		*v, *msg;
	char			*end;

	(void)out;
	(void)len;
	ml->token = 0;
	if (rec == NULL) {
		request_error(ml->req, RPC_NOT_RUNNING, "gdb ended before it "
		    "answered");
		return;
	}
	v = json_string_value(json_object_get(rec->results, "value"));
	if (strcmp(rec->cls, "error") == 0 || v == NULL) {
		msg = json_string_value(json_object_get(rec->results, "msg"));
		request_error(ml->req, RPC_INVALID_PARAMS, "a live address "
		    "must be a number, or an expression gdb works out without "
		    "the target's memory (&counter): %s", msg != NULL ? msg :
		    "gdb gave no value");
		return;
	}
	errno = 0;
	ml->addr = strtoull(v, &end, 0);
	if (errno != 0 || *end != '\0') {
		request_error(ml->req, RPC_INVALID_PARAMS, "gdb's value of the "
		    "address is not a number: %s", v);
		return;
	}
	method_inspect_live_access(ml);
}

/* Whether s is a whole number (decimal, or hex after 0x): its value in *v. */
static bool
method_inspect_live_number(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, strncmp(s, "0x", 2) == 0 || strncmp(s, "0X",
	    2) == 0 ? 16 : 10);
	return errno == 0 && *end == '\0';
}

/*
 * memory with "live" on a session with live memory: a number as the
 * address goes to the access at once, an expression by way of gdb.
 * data and len are a write's bytes (taken), NULL for a read of len.
 */
enum method_return
method_inspect_live(struct request *req, struct gdb_data *g,
    unsigned char *data, size_t len)
{
	struct method_inspect_live	*ml = xcalloc(1, sizeof *ml);
	json_t			*a = request_get(req, "address");
	char			*q, *expr;

	ml->req = req;
	ml->g = g;
	ml->write = data != NULL;
	ml->data = data;
	ml->len = len;
	pending_wait(req, ml, method_inspect_live_gone);
	pending_timeout(req, (uint64_t)request_int(req, "timeout",
	    METHOD_INSPECT_TIMEOUT), method_inspect_live_timeout);
	if (json_is_integer(a)) {
		ml->addr = (uint64_t)json_integer_value(a);
		method_inspect_live_access(ml);
		return METHOD_WAIT;
	}
	if (method_inspect_live_number(json_string_value(a), &ml->addr)) {
		method_inspect_live_access(ml);
		return METHOD_WAIT;
	}
	xasprintf(&expr, "(unsigned long long)(%s)", json_string_value(a));
	q = mi_cstring_quote(expr);
	free(expr);
	ml->token = g->mi != NULL ? mi_command(g->mi, method_inspect_live_addressed,
	    ml, "-data-evaluate-expression %s", q) : 0;
	free(q);
	if (ml->token == 0)
		request_error(req, RPC_NOT_RUNNING, "gdb's MI of session %lu is "
		    "closed", req->session->id);
	return METHOD_WAIT;
}
