/*
 * Batches: a line holding an array of requests, each run as a request of
 * its own, answered as one array of replies kept under the line limit,
 * with a budget of answer bytes and of running time for its members.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "conn.h"
#include "request.h"

/*
 * What a batch's reply keeps for each answer to come beside its id: the
 * longest limit error that may stand for it, with its comma.
 */
#define REQUEST_ROOM		176
/*
 * Bytes of answers a batch's members may make before the rest are not run,
 * and how long its members may run: one line must not hold the loop for
 * long, even of members that answer little or later (notifications,
 * launches).
 */
#define REQUEST_BATCH_WORK	FRAME_MAX
#define REQUEST_BATCH_NS	(50 * 1000 * 1000)
/* Members that run whatever the time, so that a small batch runs whole. */
#define REQUEST_BATCH_FREE	16

/*
 * A batch: the replies of its requests, written as one array in the order
 * they come and sent when all are in. Room is kept for an answer to every
 * member yet to answer, so the array always fits in one line.
 */
struct request_batch {
	char		*text;		/* '[' and the replies, comma-separated */
	size_t		 len;
	size_t		 cap;
	size_t		 count;		/* replies in text */
	size_t		 room;		/* kept for the answers to come */
	size_t		 spent;		/* bytes of answers its members made */
	uint64_t	 start;		/* uv_hrtime() as its first member ran */
	unsigned	 ran;		/* members dispatched so far */
	unsigned	 left;		/* requests not answered yet */
	bool		 sealed;	/* every request has been started */
	struct conn	*conn;		/* NULL once the client is gone */
};

/* A member of a batch, parsed before any runs. */
struct request_member {
	struct rpc_request	 rr;
	struct rpc_error	 err;
	bool			 bad;		/* refused: err says why */
	size_t			 room;
};

/* A request of the batch is made: one more answer to wait for. */
void
request_batch_join(struct request_batch *b)
{
	b->left++;
}

/* Send a batch's replies once every request of it is answered. */
static void
request_batch_done(struct request_batch *b)
{
	if (!b->sealed || b->left > 0)
		return;
	if (b->conn != NULL && b->count > 0) {
		b->text[b->len++] = ']';
		b->text[b->len++] = '\n';
		conn_send_text(b->conn, b->text, b->len);
		b->text = NULL;
	}
	free(b->text);
	free(b);
}

/* Make room for need bytes of a batch's reply; it doubles, so few copies. */
static void
request_batch_grow(struct request_batch *b, size_t need)
{
	if (need <= b->cap)
		return;
	while (b->cap < need)
		b->cap = b->cap != 0 ? b->cap * 2 : 4096;
	b->text = xreallocarray(b->text, b->cap, 1);
}

/*
 * One request of a batch is answered with a line of len bytes (taken;
 * NULL: it would not fit in one, len what making it cost): its room goes
 * to it, or to a limit error in its place when the array would grow past
 * the line limit; a notification's answer only counts as work done.
 */
void
request_batch_add(struct request_batch *b, struct request *req, char *line,
    size_t len)
{
	b->room -= req->room;
	b->spent += len;
	/* A member that goes on without its client leaves none to answer. */
	if (req->conn == NULL)
		b->conn = NULL;
	if (req->id == NULL)
		free(line);
	else {
		if (line == NULL || b->len + len + b->room + 1 > FRAME_MAX) {
			free(line);
			line = request_limit_line(req, "the reply would not fit in "
			    "the batch's 1 MiB line", &len);
			if (len > req->room)
				log_fatal("a limit error outgrew its room");
		}
		/* The line's LF makes room for its comma, or for the ']'. */
		request_batch_grow(b, b->len + len + 2);
		if (b->count++ > 0)
			b->text[b->len++] = ',';
		memcpy(b->text + b->len, line, len - 1);
		b->len += len - 1;
		free(line);
	}
	b->left--;
	request_batch_done(b);
}

/* A request of a batch is dropped unanswered: the batch is sent nowhere. */
void
request_batch_gone(struct request_batch *b, struct request *req)
{
	b->room -= req->room;
	b->conn = NULL;
	b->left--;
	request_batch_done(b);
}

/* What a batch's reply keeps for an answer with id (NULL: none comes). */
static size_t
request_batch_room(const json_t *id, const char *id_text)
{
	if (id == NULL)
		return 0;
	if (id_text != NULL)
		return REQUEST_ROOM + strlen(id_text);
	return REQUEST_ROOM + json_dumpb(id, NULL, 0, JSON_COMPACT |
	    JSON_ENCODE_ANY);
}

/* Parse a batch's member v into m, and what its answer may need. */
static void
request_batch_member(json_t *v, struct request_member *m)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	memset(m, 0, sizeof *m);
	if (text == NULL)
		log_fatal("cannot write a member of a batch");
	m->bad = rpc_parse(text, strlen(text), &m->rr, &m->err) != 0;
	free(text);
	if (m->bad)
		m->room = request_batch_room(m->err.id != NULL ? m->err.id :
		    json_null(), NULL);
	else
		m->room = request_batch_room(m->rr.id, m->rr.id_text);
}

/*
 * A batch (a JSON array): its members are parsed first, and it is refused
 * whole when an answer to each could not fit in one line; then each runs
 * as a request, those after its replies have reached REQUEST_BATCH_WORK
 * bytes are answered "not run", and the replies go back as one array once
 * all are answered (none for notifications only). An empty array is one
 * invalid request. False if the line is no batch.
 */
bool
request_batch_line(struct conn *c, const char *line, size_t len)
{
	struct request_batch	*b;
	struct request_member	*m;
	struct rpc_error	 err = { 0 };
	json_t			*root, *v;
	size_t			 i, n, need = 2;

	if (!rpc_parse_is_batch(line) || (root = json_loadb(line, len,
	    JSON_REJECT_DUPLICATES, NULL)) == NULL || !json_is_array(root)) {
		return false;
	}
	if ((n = json_array_size(root)) == 0) {
		json_decref(root);
		rpc_error_set(&err, RPC_INVALID_REQUEST, "an empty batch");
		request_refuse(c, &err, NULL, 0);
		return true;
	}
	m = xreallocarray(NULL, n, sizeof *m);
	json_array_foreach(root, i, v) {
		request_batch_member(v, &m[i]);
		need += m[i].room;
	}
	json_decref(root);
	if (need > FRAME_MAX) {
		for (i = 0; i < n; i++) {
			json_decref(m[i].err.id);
			rpc_parse_free(&m[i].rr);
		}
		free(m);
		rpc_error_set(&err, RPC_LIMIT, "a batch of %zu requests: an "
		    "answer to each would not fit in one 1 MiB line", n);
		request_refuse(c, &err, NULL, 0);
		return true;
	}
	b = xcalloc(1, sizeof *b);
	request_batch_grow(b, 2);
	b->text[b->len++] = '[';
	b->room = need - 2;
	b->conn = c;
	b->start = uv_hrtime();
	for (i = 0; i < n; i++) {
		if (m[i].bad)
			request_refuse(c, &m[i].err, b, m[i].room);
		else
			request_dispatch(c, &m[i].rr, b, m[i].room);
		rpc_parse_free(&m[i].rr);
	}
	free(m);
	b->sealed = true;
	request_batch_done(b);
	return true;
}

/*
 * Why a batch's next member is not run (its replies are at their budget,
 * or its members ran for their time), or NULL: it runs, and is counted.
 */
const char *
request_batch_refusal(struct request_batch *b)
{
	if (b->spent >= REQUEST_BATCH_WORK)
		return "not run: the batch's replies reached their 1 MiB budget";
	if (b->ran++ >= REQUEST_BATCH_FREE &&
	    uv_hrtime() - b->start >= REQUEST_BATCH_NS)
		return "not run: the batch's members ran for their 50 ms; "
		    "send the rest again";
	return NULL;
}
