/*
 * The bundle method: write a session's bundle (its record, logs,
 * transcripts, where its threads are, its registers, a core where it is
 * cheap) to a new path, as a directory or a .tar.gz, and answer with
 * what it holds. The bundle is the daemon's: a client that leaves before
 * the answer does not stop it.
 */
#include <limits.h>

#include "daemon.h"
#include "method.h"
#include "request.h"

/* The refusal or failure error as the request's answer: its kind, errno in data. */
static enum method_return
method_bundle_error(struct request *req, const struct bundle_error *error)
{
	json_t *data = error->errnum != 0 ? json_pack("{s:i}", "errno",
	    error->errnum) : NULL;

	return request_error_data(req, error->code, data, "%s", error->msg);
}

/* The bundle is written, or failed: the answer. */
static void
method_bundle_done(void *arg, struct bundle *b, json_t *result,
    const struct bundle_error *error)
{
	struct request *req = arg;

	(void)b;
	req->data = NULL;
	if (error != NULL) {
		method_bundle_error(req, error);
		return;
	}
	request_done(req, json_incref(result));
}

/* The request is finished or its client gone: the bundle goes on unheard. */
static void
method_bundle_free(struct request *req)
{
	if (req->data != NULL)
		bundle_forget(req->data);
	req->data = NULL;
}

/* bundle: write the session's bundle at a new absolute path. */
static enum method_return
method_bundle_exec(struct request *req)
{
	struct bundle		*b;
	struct bundle_error	 err;
	json_t			*core = request_get(req, "core");

	b = bundle_start(req->session, request_str(req, "path", NULL),
	    request_bool(req, "tar"), core == NULL || json_is_true(core), NULL,
	    method_bundle_done, req, &err);
	if (b == NULL)
		return method_bundle_error(req, &err);
	return pending_wait(req, b, method_bundle_free);
}

static const struct method_param method_bundle_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "path", PT_STRING, true, 0, 0 },
	{ "tar", PT_BOOL, false, 0, 0 },
	{ "core", PT_BOOL, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_bundle = {
	.name = "bundle",
	.params = method_bundle_params,
	.exec = method_bundle_exec,
};

const struct method *const method_bundles[] = {
	&method_bundle,
	NULL
};
