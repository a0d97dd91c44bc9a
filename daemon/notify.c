/* Subscriptions: notifications of state changes and console output. */
#include <stdlib.h>

#include "b64.h"
#include "daemon.h"

/* Subscribe c to session id (0 for every session); output says whether to send console output. */
void
notify_subscribe(struct conn *c, unsigned long id, bool output)
{
	size_t i;

	c->sub.output = output;
	if (id == 0) {
		c->sub.all = true;
		return;
	}
	for (i = 0; i < c->sub.n; i++)
		if (c->sub.ids[i] == id)
			return;
	c->sub.ids = reallocarray(c->sub.ids, c->sub.n + 1, sizeof *c->sub.ids);
	if (c->sub.ids == NULL)
		log_fatal("out of memory");
	c->sub.ids[c->sub.n++] = id;
}

/* Drop c's subscription to id, or every one when id is 0. */
void
notify_unsubscribe(struct conn *c, unsigned long id)
{
	size_t i;

	if (id == 0) {
		free(c->sub.ids);
		c->sub.ids = NULL;
		c->sub.n = 0;
		c->sub.all = false;
		return;
	}
	for (i = 0; i < c->sub.n; i++) {
		if (c->sub.ids[i] == id) {
			c->sub.ids[i] = c->sub.ids[--c->sub.n];
			return;
		}
	}
}

/* Whether c wants news of s. */
static bool
notify_wants(const struct conn *c, const struct session *s)
{
	size_t i;

	if (c->sub.all)
		return true;
	for (i = 0; i < c->sub.n; i++)
		if (c->sub.ids[i] == s->id)
			return true;
	return false;
}

/* Send a notification to every connection subscribed to s. */
static void
notify_send(struct session *s, bool output, const char *method,
    json_t *params)
{
	struct conn *c, *next;

	/* conn_send may drop a slow connection; the list stays walkable. */
	TAILQ_FOREACH_SAFE(c, &dmn.conns, entry, next) {
		if (c->raw != NULL || c->viewing != NULL ||
		    !notify_wants(c, s) || (output && !c->sub.output))
			continue;
		conn_send(c, rpc_notification_new(method, json_incref(params)));
	}
	json_decref(params);
}

/* Whether any connection subscribes to anything (most often none does). */
static bool
notify_anyone(void)
{
	struct conn *c;

	TAILQ_FOREACH(c, &dmn.conns, entry)
		if (c->sub.all || c->sub.n > 0)
			return true;
	return false;
}

/* The session changed state. */
void
notify_state(struct session *s)
{
	json_t *params;

	if (!notify_anyone())
		return;
	params = json_pack("{s:I, s:s}", "session", (json_int_t)s->id,
	    "state", session_state_name(s->state));
	if (s->main.have_exit)
		json_object_set_new(params, "exit", json_pack("{s:i}",
		    s->main.exit_signal ? "signal" : "code",
		    s->main.exit_signal ? s->main.exit_signal :
		    s->main.exit_code));
	notify_send(s, false, "session.state", params);
}

/* The console printed len bytes, now ending at offset end of its log. */
void
notify_output(struct session *s, const char *data, size_t len, uint64_t end)
{
	json_t	*params;
	char	*text;

	if (!notify_anyone())
		return;
	if ((text = b64_encode((const unsigned char *)data, len)) == NULL)
		log_fatal("out of memory");
	params = json_pack("{s:I, s:s, s:s, s:I}", "session",
	    (json_int_t)s->id, "stream", "console", "data", text, "offset",
	    (json_int_t)(end - len));
	free(text);
	notify_send(s, true, "session.output", params);
}
