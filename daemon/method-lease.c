/*
 * The lease method: claim a leased session whose connection has gone,
 * within its grace, with the token its launch answered; the lease is the
 * claiming connection's from then on.
 */
#include "daemon.h"
#include "lease.h"
#include "method.h"
#include "request.h"

/* lease: claim the session's lease with its token; answered with its status. */
static enum method_return
method_lease_exec(struct request *req)
{
	struct rpc_error err;

	/* A request whose client has left has nothing to hold the lease. */
	if (req->conn == NULL)
		return request_error(req, RPC_NOT_SUPPORTED, "a lease is "
		    "claimed by a connection");
	if (lease_claim(req->session, req->conn, request_str(req, "token", ""),
	    &err) != 0)
		return request_fail(req, &err);
	return request_done(req, status_json(req->session));
}

static const struct method_param method_lease_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "token", PT_STRING, true, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_lease = {
	.name = "lease",
	.params = method_lease_params,
	.exec = method_lease_exec,
};

const struct method *const method_leases[] = {
	&method_lease,
	NULL
};
