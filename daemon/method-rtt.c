/*
 * rtt: RTT channels of a running target as streams (rtt.c). The control
 * block is at "address" (a number, or an expression gdb works out from
 * the program's symbols), else at the symbol _SEGGER_RTT, else the first
 * found by its id in the machine's shared RAM. The answer is status's
 * "rtt" member, with how the block was found.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "method.h"
#include "mi.h"
#include "request.h"
#include "rtt.h"

/* How long gdb may take to work out the block's address (ms), by default. */
#define METHOD_RTT_TIMEOUT	10000

/* An rtt request while gdb works out the block's address. */
struct method_rtt {
	struct request	*req;
	struct gdb_data	*g;
	unsigned long	 token;
	bool		 asked;		/* an address was given, not the symbol */
};

/* Start RTT at addr (or by a scan if !has_addr) and answer. */
static enum method_return
method_rtt_go(struct request *req, bool has_addr, uint64_t addr,
    const char *found_by)
{
	struct rpc_error	 err = { 0 };
	json_t			*out;

	if (rtt_start(req->session, has_addr, addr, (unsigned)request_int(req,
	    "poll_hz", RTT_HZ_DEFAULT), &err) != 0)
		return request_error(req, err.code, "%s", err.message);
	out = rtt_status(req->session);
	json_object_set_new(out, "found_by", json_string(found_by));
	return request_done(req, out);
}

/* The request is finished: gdb's answer, if still to come, is not wanted. */
static void
method_rtt_gone(struct request *req)
{
	struct method_rtt *mr = req->data;

	if (mr->token != 0 && mr->g->mi != NULL)
		mi_cancel(mr->g->mi, mr->token);
	free(mr);
	req->data = NULL;
}

/* gdb did not answer in time. */
static void
method_rtt_timeout(struct request *req)
{
	request_error(req, RPC_TIMEOUT, "session %lu: gdb did not work out the "
	    "RTT control block's address in time", req->session->id);
}

/*
 * gdb's value of the address: RTT starts there. Without the symbol
 * _SEGGER_RTT the shared RAM is scanned instead; a given expression gdb
 * refused is an error.
 */
static void
method_rtt_addressed(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	struct method_rtt	*mr = arg;
	const char		*v = NULL, *msg = NULL;
	char			*end = NULL;
	uint64_t		 addr = 0;

	(void)out;
	(void)len;
	mr->token = 0;
	if (rec != NULL && strcmp(rec->cls, "error") != 0)
		v = json_string_value(json_object_get(rec->results, "value"));
	else if (rec != NULL)
		msg = json_string_value(json_object_get(rec->results, "msg"));
	if (v != NULL) {
		errno = 0;
		addr = strtoull(v, &end, 0);
	}
	if (v != NULL && errno == 0 && *end == '\0') {
		method_rtt_go(mr->req, true, addr, mr->asked ? "address" :
		    "symbol");
		return;
	}
	if (!mr->asked) {
		method_rtt_go(mr->req, false, 0, "scan");
		return;
	}
	request_error(mr->req, RPC_INVALID_PARAMS, "\"address\" must be a "
	    "number, or an expression gdb works out without the target's "
	    "memory (&_SEGGER_RTT): %s", msg != NULL ? msg : "gdb gave no "
	    "value");
}

/* Whether s is a whole number (decimal, or hex after 0x): its value in *v. */
static bool
method_rtt_number(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno == 0 && *end == '\0';
}

/* Ask gdb for the address of expr (the symbol, or the given expression). */
static enum method_return
method_rtt_ask(struct request *req, const char *expr, bool asked)
{
	struct method_rtt	*mr = xcalloc(1, sizeof *mr);
	char			*e, *q;

	mr->req = req;
	mr->g = gdb_of(req->session);
	mr->asked = asked;
	pending_wait(req, mr, method_rtt_gone);
	pending_timeout(req, (uint64_t)request_int(req, "timeout",
	    METHOD_RTT_TIMEOUT), method_rtt_timeout);
	xasprintf(&e, "(unsigned long long)(%s)", expr);
	q = mi_cstring_quote(e);
	free(e);
	mr->token = mr->g->mi != NULL ? mi_command(mr->g->mi,
	    method_rtt_addressed, mr, "-data-evaluate-expression %s", q) : 0;
	free(q);
	if (mr->token == 0)
		request_error(req, RPC_NOT_RUNNING, "gdb's MI of session %lu is "
		    "closed", req->session->id);
	return METHOD_WAIT;
}

/* rtt: find the control block, then stream its channels. */
static enum method_return
method_rtt_exec(struct request *req)
{
	const char	*a = request_str(req, "address", NULL);
	uint64_t	 addr;

	if (a != NULL && method_rtt_number(a, &addr))
		return method_rtt_go(req, true, addr, "address");
	/* Started already: only the rate changes, gdb need not be asked. */
	if (req->session->rtt != NULL && a == NULL)
		return method_rtt_go(req, false, 0, "started");
	if (!gdb_family(req->session))
		return a != NULL ? request_error(req, RPC_INVALID_PARAMS,
		    "\"address\" must be a number: session %lu has no gdb to "
		    "work out an expression", req->session->id) :
		    method_rtt_go(req, false, 0, "scan");
	return method_rtt_ask(req, a != NULL ? a : "&_SEGGER_RTT", a != NULL);
}

static const struct method_param method_rtt_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "address", PT_STRING, false, 0, 0 },
	{ "poll_hz", PT_INT, false, 1, RTT_HZ_MAX },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_rtt = {
	.name = "rtt",
	.params = method_rtt_params,
	.exec = method_rtt_exec,
};

const struct method *const method_rtts[] = {
	&method_rtt,
	NULL
};
