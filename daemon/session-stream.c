/*
 * A session's streams by name: the console, the target's output and input
 * on the transport, a managed server's pty, and the firmware's
 * semihosting console. Each is an output (ring,
 * log file, arrival times) with offsets from the session's start.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "semihost.h"
#include "session.h"

/*
 * The streams: where each is in a session (the console's output itself,
 * the others' pointer to theirs, made when opened), its log (after
 * sessions/ID), its ring, and whether a subscriber may have its output as
 * session.output (the target's goes to one reader, tap.c).
 */
static const struct {
	const char	*name;
	size_t		 at;
	bool		 made;		/* at holds a pointer, NULL until opened */
	const char	*suffix;
	size_t		 ring;
	bool		 subscribe;
} session_stream_table[] = {
	{ "console", offsetof(struct session, output), false, ".log",
	    OUTPUT_RING_SIZE, true },
	{ "target", offsetof(struct session, target_out), true,
	    ".target.log", TRANSPORT_MAX, false },
	{ "target-in", offsetof(struct session, target_in), true,
	    ".target-in.log", OUTPUT_RING_SIZE, false },
	{ "server", offsetof(struct session, server_out), true,
	    ".server.log", OUTPUT_RING_SIZE, false },
	{ "semihost", offsetof(struct session, semihost_out), true,
	    ".semihost.log", OUTPUT_RING_SIZE, true },
	{ "watch", offsetof(struct session, watch_out), true, ".watch.log",
	    OUTPUT_RING_SIZE, true },
	/* RTT's up-channels (rtt.c), opened when RTT starts. */
	{ "rtt0", offsetof(struct session, rtt_out[0]), true, ".rtt0.log",
	    OUTPUT_RING_SIZE, true },
	{ "rtt1", offsetof(struct session, rtt_out[1]), true, ".rtt1.log",
	    OUTPUT_RING_SIZE, true },
	{ "rtt2", offsetof(struct session, rtt_out[2]), true, ".rtt2.log",
	    OUTPUT_RING_SIZE, true },
	{ "rtt3", offsetof(struct session, rtt_out[3]), true, ".rtt3.log",
	    OUTPUT_RING_SIZE, true },
};

#define SESSION_STREAMS \
	(sizeof session_stream_table / sizeof session_stream_table[0])

/* Where stream number i of s keeps its output's pointer (a made one's). */
static struct output **
session_stream_slot(struct session *s, size_t i)
{
	if (i >= SESSION_STREAMS || !session_stream_table[i].made)
		log_fatal("stream %zu has no pointer", i);
	return (struct output **)(void *)((char *)s +
	    session_stream_table[i].at);
}

/* The output that stream number i of s is, or NULL if it was never opened. */
static struct output *
session_stream_at(struct session *s, size_t i)
{
	if (i >= SESSION_STREAMS)
		log_fatal("stream %zu", i);
	if (session_stream_table[i].made)
		return *session_stream_slot(s, i);
	return (struct output *)(void *)((char *)s +
	    session_stream_table[i].at);
}

/* The number of the stream called name, or -1. */
static int
session_stream_index(const char *name)
{
	size_t i;

	for (i = 0; i < SESSION_STREAMS; i++)
		if (strcmp(session_stream_table[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Whether name is a stream's name, whether or not a session has it. */
static bool
session_stream_known(const char *name)
{
	return session_stream_index(name) != -1;
}

/*
 * The bit of the stream called name in a set of streams (a subscriber's),
 * or 0 if no stream is called so.
 */
unsigned
session_stream_bit(const char *name)
{
	int i = session_stream_index(name);

	return i == -1 ? 0 : 1u << i;
}

/* The bit of name if a subscriber may have its output, or 0. */
unsigned
session_stream_subscribable(const char *name)
{
	int i = session_stream_index(name);

	return i == -1 || !session_stream_table[i].subscribe ? 0 : 1u << i;
}

/* The names of the streams a subscriber may have, quoted, for an error. */
void
session_stream_subscribables(char *buf, size_t len)
{
	size_t	i, at = 0;
	int	n;

	buf[0] = '\0';
	for (i = 0; i < SESSION_STREAMS && at < len; i++) {
		if (!session_stream_table[i].subscribe)
			continue;
		n = snprintf(buf + at, len - at, "%s\"%s\"", at > 0 ? ", " :
		    "", session_stream_table[i].name);
		at += n > 0 ? (size_t)n : 0;
	}
}

/* Make the console's output empty; the others are made when opened. */
void
session_stream_init(struct session *s)
{
	size_t i;

	for (i = 0; i < SESSION_STREAMS; i++)
		if (!session_stream_table[i].made)
			output_init(session_stream_at(s, i));
}

/* Open the stream called name: its log file and ring; -1 with err. */
int
session_stream_open(struct session *s, const char *name, char *err,
    size_t errlen)
{
	char	path[PATH_MAX + 64];
	int	i = session_stream_index(name);

	if (i == -1)
		log_fatal("no stream %s", name);
	snprintf(path, sizeof path, "%s/sessions/%lu%s", dmn.state_dir, s->id,
	    session_stream_table[i].suffix);
	if (session_stream_table[i].made && *session_stream_slot(s, i) == NULL) {
		*session_stream_slot(s, i) = xmalloc(sizeof (struct output));
		output_init(*session_stream_slot(s, i));
	}
	/* The console's log is not capped, as it never was. */
	if (i > 0)
		session_stream_at(s, i)->max = dmn.transcript_max;
	/*
	 * An adopted session's streams go on where they were, those opened
	 * after the adoption too (RTT, watch): their logs are the dead
	 * daemon's.
	 */
	if (dmn.adopting != NULL || s->adopted)
		return output_reopen(session_stream_at(s, i), path,
		    session_stream_table[i].ring, err, errlen);
	return output_open(session_stream_at(s, i), path,
	    session_stream_table[i].ring, err, errlen);
}

/* The stream called name, or NULL if s does not have it. */
struct output *
session_stream(struct session *s, const char *name)
{
	struct output	*o;
	int		 i = session_stream_index(name);

	if (i == -1)
		return NULL;
	o = session_stream_at(s, i);
	return o != NULL && output_path(o) != NULL ? o : NULL;
}

/*
 * The stream a request names, default def, or NULL with the error set:
 * a name no session has, or one this session does not have (and why).
 */
struct output *
session_stream_find(struct session *s, const char *name,
    struct rpc_error *err)
{
	struct output *o;

	if (!session_stream_known(name)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"stream\" must be "
		    "\"console\", \"target\", \"target-in\", \"server\", "
		    "\"semihost\", \"watch\" or \"rtt0\" to \"rtt3\", not "
		    "\"%s\"", name);
		return NULL;
	}
	if ((o = session_stream(s, name)) != NULL)
		return o;
	if (strcmp(name, "watch") == 0)
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu has no "
		    "watch stream: no watch has been started", s->id);
	else if (strncmp(name, "rtt", 3) == 0)
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu has no %s "
		    "stream: RTT is not on (the rtt method), or its control "
		    "block has fewer up-channels", s->id, name);
	else if (strncmp(name, "target", 6) == 0)
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu has no %s "
		    "stream: it was launched without --transport", s->id, name);
	else if (strcmp(name, "semihost") == 0 && semihost_wanted(s))
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu has no "
		    "semihost stream: its %s server keeps the semihosting "
		    "console (only a qemu session's is a stream)", s->id,
		    s->backend->name);
	else if (strcmp(name, "semihost") == 0)
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu has no "
		    "semihost stream: it was launched without --semihosting "
		    "(a qemu session's)", s->id);
	else
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu has no %s "
		    "stream: it has no managed server", s->id, name);
	return NULL;
}

/* The session events after which a stream may have grown or ended. */
unsigned
session_stream_events(void)
{
	return SE_OUTPUT | SE_TARGET | SE_TARGET_EOF | SE_STATE | SE_RUNSTATE |
	    SE_SERVER_END | SE_STREAM;
}

/* The stream a reader gets when it names none: the target's, if there is one. */
const char *
session_stream_default(const struct session *s)
{
	return s->transport != NULL ? "target" : "console";
}

/*
 * Whether the stream called name has ended: no byte will come after what
 * it has, for good, or (unless for_good) until the program runs again.
 */
bool
session_stream_ended(struct session *s, const char *name, bool for_good)
{
	struct output *o;

	if (strcmp(name, "target") == 0) {
		if (s->transport == NULL || transport_at_eof(s->transport))
			return true;
		/*
		 * Not at the session's end: the pipe's last bytes may be read
		 * after it, and its EOF follows them.
		 */
		return !for_good && transport_ended(s->transport);
	}
	/* The others end when their writer does, or with the session. */
	if ((o = session_stream(s, name)) == NULL)
		return session_ended(s);
	return output_ended(o);
}

/*
 * The session has ended: close every stream but the target's, which ends
 * at its pipe's EOF (told again then); closing twice is harmless.
 */
void
session_stream_end(struct session *s)
{
	size_t i;

	for (i = 0; i < SESSION_STREAMS; i++)
		if (session_stream_at(s, i) != NULL && (strcmp(
		    session_stream_table[i].name, "target") != 0 ||
		    s->transport == NULL || transport_at_eof(s->transport)))
			output_close(session_stream_at(s, i));
}

/* Free every stream's output. */
void
session_stream_free(struct session *s)
{
	struct output	*o;
	size_t		 i;

	for (i = 0; i < SESSION_STREAMS; i++) {
		if ((o = session_stream_at(s, i)) == NULL)
			continue;
		output_free(o);
		if (session_stream_table[i].made) {
			free(o);
			*session_stream_slot(s, i) = NULL;
		}
	}
}

/* Remove every stream's log and times file. */
void
session_stream_remove(struct session *s)
{
	struct output	*o;
	char		 path[PATH_MAX + 64];
	size_t		 i;

	for (i = 0; i < SESSION_STREAMS; i++) {
		o = session_stream_at(s, i);
		if (o == NULL || output_path(o) == NULL)
			continue;
		session_prune_unlink(s, output_path(o));
		if (output_times_path(o, path, sizeof path))
			session_prune_unlink(s, path);
	}
}
