/*
 * RTT channels (rtt.h). The control block is the layout SEGGER documents:
 * the id "SEGGER RTT" in 16 bytes, MaxNumUpBuffers, MaxNumDownBuffers,
 * then the up- and the down-buffers' descriptors (name, buffer, size,
 * WrOff, RdOff, Flags), all 32-bit little-endian words on Cortex-M. The
 * daemon reads an up-buffer from RdOff to WrOff into its stream and then
 * writes RdOff back; into a down-buffer it writes at WrOff and then
 * advances WrOff, the data first. Both need writes to target RAM while
 * the core runs, so RTT needs shared RAM (live-shm.c): QEMU's monitor
 * reads but cannot write, and a halt for every poll is not what RTT is.
 *
 * Backpressure: a poll takes at most RTT_TAKE_MAX bytes a channel, and
 * none once the stream's transcript cannot keep them (its size limit, a
 * failed write): RdOff then stays, the target's buffer fills, and the
 * target's own mode (block, or skip) decides, as with a probe that stops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "live.h"
#include "adopt.h"
#include "rtt.h"

/* The control block's id, in its 16 bytes. */
static const char rtt_id[16] = "SEGGER RTT";

/* Bytes of the block's head (id and two counts) and of one descriptor. */
#define RTT_HEAD	24
#define RTT_DESC	24
/* The most up- and down-buffers a block may say it has. */
#define RTT_BUFFERS_MAX	32
/* The longest channel name shown. */
#define RTT_NAME_MAX	32

/* One buffer's descriptor, as read from the target. */
struct rtt_desc {
	uint32_t	name;
	uint32_t	buf;
	uint32_t	size;
	uint32_t	wr;
	uint32_t	rd;
	uint32_t	flags;
};

/* A down-channel's bytes waiting for room in its buffer. */
struct rtt_down {
	char		*data;
	size_t		 len;
};

struct rtt {
	struct session	*s;
	struct sink	*sink;
	struct timer	*poll;
	uint64_t	 addr;		/* the control block */
	unsigned	 hz;
	unsigned	 nup;		/* up-channels streamed (<= RTT_UP_MAX) */
	unsigned	 ndown;		/* down-channels written */
	unsigned	 max_up;	/* the block's MaxNumUpBuffers */
	char		*up_name[RTT_UP_MAX];
	char		*down_name[RTT_UP_MAX];
	struct rtt_down	 down[RTT_UP_MAX];
	uint64_t	 stalls;	/* polls that left bytes behind, full */
	uint64_t	 polls;		/* polls made */
	uint64_t	 due;		/* the next poll's time (uv_now) */
};

/* Whether name is an RTT stream, rtt0..rtt3; its channel number if so. */
bool
rtt_stream(const char *name, unsigned *channel)
{
	if (strncmp(name, "rtt", 3) != 0 || name[3] < '0' ||
	    name[3] >= '0' + RTT_UP_MAX || name[4] != '\0')
		return false;
	*channel = (unsigned)(name[3] - '0');
	return true;
}

/* Word i of a descriptor at p, little-endian as the target stores it. */
static uint32_t
rtt_word(const unsigned char *p, unsigned i)
{
	p += 4 * i;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Descriptor i of the block (ups first): false if it is not in shared RAM. */
static bool
rtt_desc(struct rtt *rt, unsigned i, struct rtt_desc *d)
{
	const unsigned char *p = live_map(rt->s, rt->addr + RTT_HEAD +
	    (uint64_t)i * RTT_DESC, RTT_DESC);

	if (p == NULL)
		return false;
	d->name = rtt_word(p, 0);
	d->buf = rtt_word(p, 1);
	d->size = rtt_word(p, 2);
	d->wr = rtt_word(p, 3);
	d->rd = rtt_word(p, 4);
	d->flags = rtt_word(p, 5);
	/* A buffer the daemon cannot reach, or offsets past it: not used. */
	return d->size >= 2 && d->wr < d->size && d->rd < d->size &&
	    live_map(rt->s, d->buf, d->size) != NULL;
}

/* Word 4 (RdOff) or 3 (WrOff) of descriptor i, written back to the target. */
static void
rtt_set(struct rtt *rt, unsigned i, unsigned word, uint32_t v)
{
	unsigned char	 b[4] = { v, v >> 8, v >> 16, v >> 24 };
	struct rpc_error err = { 0 };

	live_write(rt->s, rt->addr + RTT_HEAD + (uint64_t)i * RTT_DESC +
	    4 * word, b, 4, NULL, NULL, &err);
	(void)err;
}

/* The streams of the up-channels, by number. */
static const char *const rtt_streams[RTT_UP_MAX] = {
	"rtt0", "rtt1", "rtt2", "rtt3"
};

/*
 * Up-channel i: what the target wrote since the last poll, copied out of
 * its ring first (the target may write there again once its read offset
 * moves), into the stream, and only then told to the readers, so that
 * none of them runs while the channel is half taken.
 */
static void
rtt_up(struct rtt *rt, unsigned i)
{
	struct output		*o = rt->s->rtt_out[i];
	struct session_event	 ev = { .kind = SE_STREAM,
				    .stream = rtt_streams[i] };
	struct rtt_desc		 d;
	const char		*buf;
	char			*got;
	uint64_t		 missing;
	uint32_t		 n, rd;

	/* A channel whose stream a failed start never opened. */
	if (o == NULL || !rtt_desc(rt, i, &d) || d.wr == d.rd)
		return;
	if (output_error(o, &missing) != NULL) {
		rt->stalls++;
		return;
	}
	buf = (const char *)live_map(rt->s, d.buf, d.size);
	got = xmalloc(RTT_TAKE_MAX);
	for (rd = d.rd, n = 0; rd != d.wr && n < RTT_TAKE_MAX;) {
		uint32_t end = d.wr > rd ? d.wr : d.size;
		uint32_t len = end - rd;

		if (len > RTT_TAKE_MAX - n)
			len = RTT_TAKE_MAX - n;
		memcpy(got + n, buf + rd, len);
		n += len;
		rd = rd + len == d.size ? 0 : rd + len;
	}
	ev.offset = output_size(o);
	output_add(o, got, n);
	rtt_set(rt, i, 4, rd);
	ev.data = got;
	ev.len = n;
	session_fire(rt->s, &ev);
	free(got);
}

/* Down-channel i: as much of its queue as its buffer has room for. */
static void
rtt_down(struct rtt *rt, unsigned i)
{
	struct rtt_down	*q = &rt->down[i];
	struct rtt_desc	 d;
	struct rpc_error err = { 0 };
	uint32_t	 room, len, wr, k = rt->max_up + i;
	size_t		 done = 0;

	if (q->len == 0 || !rtt_desc(rt, k, &d))
		return;
	for (wr = d.wr; done < q->len; wr = wr + len == d.size ? 0 : wr +
	    len, done += len) {
		room = d.rd > wr ? d.rd - wr - 1 : d.size - wr - (d.rd == 0);
		if ((len = room) == 0)
			break;
		if (len > q->len - done)
			len = (uint32_t)(q->len - done);
		live_write(rt->s, d.buf + wr, (const unsigned char *)q->data +
		    done, len, NULL, NULL, &err);
	}
	(void)err;
	/* The bytes are in before WrOff says so: the target reads no stale byte. */
	rtt_set(rt, k, 3, wr);
	memmove(q->data, q->data + done, q->len - done);
	q->len -= done;
}

/*
 * The next poll, a period after the last one was due rather than after
 * this one ended: a timer started anew from each poll's end runs late by
 * the loop's turn and the timer's rounding (about 0.15 ms a poll at 1000
 * Hz), which a deadline kept in step does not add up. A poll late by more
 * than a period starts the count again, so no burst catches up.
 */
static void
rtt_again(struct rtt *rt)
{
	uint64_t now = uv_now(dmn.loop), period = 1000 / rt->hz;

	rt->due += period;
	if (rt->due + period < now || rt->due > now + period)
		rt->due = now + period;
	timer_start(rt->poll, rt->due > now ? rt->due - now : 0);
}

/* A poll: every up-channel read, every down-channel's queue moved on. */
static void
rtt_poll(void *arg)
{
	struct rtt	*rt = arg;
	unsigned	 i;

	rt->polls++;
	for (i = 0; i < rt->nup; i++)
		rtt_up(rt, i);
	for (i = 0; i < rt->ndown; i++)
		rtt_down(rt, i);
	rtt_again(rt);
}

/* A channel's name from target RAM, if it is in the shared RAM. */
static char *
rtt_name(struct rtt *rt, uint32_t at)
{
	const unsigned char	*p;
	size_t			 n;

	for (n = RTT_NAME_MAX; n > 0; n--)
		if ((p = live_map(rt->s, at, n)) != NULL)
			break;
	if (at == 0 || n == 0)
		return NULL;
	return strndup((const char *)p, strnlen((const char *)p, n));
}

/* The session ends: a last poll while its streams are open, then let go. */
static void
rtt_ending(struct sink *sink, struct session *s,
    const struct session_event *ev)
{
	struct rtt	*rt = s->rtt;
	unsigned	 i;

	(void)sink;
	(void)ev;
	for (i = 0; i < rt->nup; i++)
		rtt_up(rt, i);
	session_sink_remove(rt->sink);
	timer_free(rt->poll);
	for (i = 0; i < RTT_UP_MAX; i++) {
		free(rt->up_name[i]);
		free(rt->down_name[i]);
		free(rt->down[i].data);
	}
	free(rt);
	s->rtt = NULL;
}

/* The first control block in the shared RAM, by its id; false if none. */
static bool
rtt_scan(struct session *s, uint64_t *addr)
{
	const char	*machine = launch_get_str(&s->l, "machine");
	const char	*ram, *p;
	uint64_t	 base;
	size_t		 size;

	if (machine == NULL || !live_shm_machine(machine, &base, &size) ||
	    (ram = (const char *)live_map(s, base, size)) == NULL)
		return false;
	for (p = ram; (p = memmem(p, size - (size_t)(p - ram), rtt_id,
	    sizeof rtt_id)) != NULL; p++)
		if ((p - ram) % 4 == 0) {
			*addr = base + (uint64_t)(p - ram);
			return true;
		}
	return false;
}

/* The block at addr, checked: its id and counts. 0, or -1 with err. */
static int
rtt_check(struct session *s, uint64_t addr, unsigned *nup, unsigned *ndown,
    struct rpc_error *err)
{
	const unsigned char *p = live_map(s, addr, RTT_HEAD);

	if (p == NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "the RTT control block "
		    "must be in the machine's shared RAM; 0x%llx is not",
		    (unsigned long long)addr);
		return -1;
	}
	if (memcmp(p, rtt_id, sizeof rtt_id) != 0) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "no RTT control block "
		    "at 0x%llx: its id is not \"SEGGER RTT\"",
		    (unsigned long long)addr);
		return -1;
	}
	*nup = rtt_word(p, 4);
	*ndown = rtt_word(p, 5);
	if (*nup > RTT_BUFFERS_MAX || *ndown > RTT_BUFFERS_MAX) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "the RTT control block "
		    "at 0x%llx says %u up- and %u down-buffers (at most %d)",
		    (unsigned long long)addr, *nup, *ndown, RTT_BUFFERS_MAX);
		return -1;
	}
	return 0;
}

/* Whether s can have RTT: live memory with shared RAM; err if not. */
static bool
rtt_can(struct session *s, struct rpc_error *err)
{
	const char	*machine = launch_get_str(&s->l, "machine");
	uint64_t	 base;
	size_t		 size;

	if (session_ended(s)) {
		rpc_error_set(err, RPC_NOT_RUNNING, "session %lu %s", s->id,
		    session_is(s));
		return false;
	}
	if (!live_has(s)) {
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu (kind %s) "
		    "has no live memory, which RTT reads; with OpenOCD, its "
		    "own \"rtt server\" serves RTT on a TCP port "
		    "(dbgctl-protocol(7))", s->id, s->backend->name);
		return false;
	}
	if (machine == NULL || !live_shm_machine(machine, &base, &size) ||
	    live_map(s, base, 1) == NULL) {
		rpc_error_set(err, RPC_NOT_SUPPORTED, "RTT needs the machine's "
		    "RAM shared with the daemon (the host writes RdOff back as "
		    "it reads, and QEMU's monitor cannot write memory); "
		    "machine %s has none", machine != NULL ? machine : "?");
		return false;
	}
	return true;
}

/* Open channel i's stream and note its name; 0, or -1 with err. */
static int
rtt_open_up(struct rtt *rt, unsigned i, struct rpc_error *err)
{
	struct rtt_desc	 d;
	char		 name[8], why[256];

	if (rtt_desc(rt, i, &d))
		rt->up_name[i] = rtt_name(rt, d.name);
	snprintf(name, sizeof name, "rtt%u", i);
	if (session_stream_open(rt->s, name, why, sizeof why) != 0) {
		rpc_error_set(err, RPC_IO_ERROR, "stream %s: %s", name, why);
		return -1;
	}
	return 0;
}

/* The RTT of s, set up at addr: its streams open, its polls going. */
static int
rtt_open(struct session *s, uint64_t addr, unsigned nup, unsigned ndown,
    unsigned hz, struct rpc_error *err)
{
	struct rtt	*rt = xcalloc(1, sizeof *rt);
	struct rtt_desc	 d;
	unsigned	 i;

	rt->s = s;
	rt->addr = addr;
	rt->hz = hz;
	rt->max_up = nup;
	rt->nup = nup < RTT_UP_MAX ? nup : RTT_UP_MAX;
	rt->ndown = ndown < RTT_UP_MAX ? ndown : RTT_UP_MAX;
	rt->poll = timer_new(rtt_poll, rt);
	rt->sink = session_sink_add(s, SE_ENDING, rtt_ending, rt);
	s->rtt = rt;
	for (i = 0; i < rt->ndown; i++)
		if (rtt_desc(rt, nup + i, &d))
			rt->down_name[i] = rtt_name(rt, d.name);
	for (i = 0; i < rt->nup; i++)
		if (rtt_open_up(rt, i, err) != 0)
			return -1;
	rt->due = uv_now(dmn.loop);
	timer_start(rt->poll, 0);
	session_record_note(s);
	return 0;
}

/*
 * Start RTT on s: the block at addr if has_addr, else the first found in
 * its shared RAM; polled hz times a second. Again on a session that has
 * it: the rate changes. 0, or -1 with err.
 */
int
rtt_start(struct session *s, bool has_addr, uint64_t addr, unsigned hz,
    struct rpc_error *err)
{
	unsigned nup, ndown;

	if (!rtt_can(s, err))
		return -1;
	if (s->rtt != NULL) {
		if (has_addr && addr != s->rtt->addr) {
			rpc_error_set(err, RPC_EXISTS, "session %lu reads the "
			    "RTT control block at 0x%llx already", s->id,
			    (unsigned long long)s->rtt->addr);
			return -1;
		}
		s->rtt->hz = hz;
		session_record_note(s);
		return 0;
	}
	if (!has_addr && !rtt_scan(s, &addr)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "no RTT control block "
		    "(id \"SEGGER RTT\") found in the shared RAM of session "
		    "%lu: has the firmware set it up yet?", s->id);
		return -1;
	}
	if (rtt_check(s, addr, &nup, &ndown, err) != 0)
		return -1;
	return rtt_open(s, addr, nup, ndown, hz, err);
}

/*
 * Bytes for down-channel channel: queued, and moved into the target's
 * buffer as it has room, from now on. 0, or -1 with err (no such
 * channel, or its queue is full).
 */
int
rtt_write(struct session *s, unsigned channel, const char *data, size_t len,
    struct rpc_error *err)
{
	struct rtt	*rt = s->rtt;
	struct rtt_down	*q;

	if (rt == NULL) {
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu has no RTT: "
		    "start it with the rtt method", s->id);
		return -1;
	}
	if (channel >= rt->ndown) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "session %lu has %u RTT "
		    "down-channel%s; rtt%u is not one", s->id, rt->ndown,
		    rt->ndown == 1 ? "" : "s", channel);
		return -1;
	}
	q = &rt->down[channel];
	if (q->len + len > RTT_DOWN_QUEUE) {
		rpc_error_set(err, RPC_LIMIT, "RTT down-channel %u of session "
		    "%lu has %zu bytes waiting for the target; try again",
		    channel, s->id, q->len);
		return -1;
	}
	q->data = xreallocarray(q->data, 1, q->len + len + 1);
	memcpy(q->data + q->len, data, len);
	q->len += len;
	rtt_down(rt, channel);
	return 0;
}

/* A buffer's member of status: its stream or channel, name, size. */
static json_t *
rtt_status_buffer(struct rtt *rt, unsigned i, bool up)
{
	struct rtt_desc	 d = { 0 };
	char		 stream[8];
	const char	*name = up ? rt->up_name[i] : rt->down_name[i];

	rtt_desc(rt, up ? i : rt->max_up + i, &d);
	snprintf(stream, sizeof stream, "rtt%u", i);
	return json_pack("{s:s, s:s?, s:I, s:I}", "stream", stream, "name",
	    name, "size", (json_int_t)d.size, "flags", (json_int_t)d.flags);
}

/*
 * What the session's record keeps of its RTT (SE_RECORD), for a new
 * daemon to read it on where the target's read offsets are: the block
 * and the rate; nothing if RTT is off.
 */
void
rtt_record(struct sink *k, struct session *s, const struct session_event *ev)
{
	(void)k;
	if (s->rtt == NULL)
		return;
	json_object_set_new(ev->json, "rtt", json_pack("{s:I, s:i}",
	    "address", (json_int_t)s->rtt->addr, "hz", (int)s->rtt->hz));
}

/* The member "rtt" of status: the block, the rate and the channels. */
json_t *
rtt_status(const struct session *s)
{
	struct rtt	*rt = s->rtt;
	json_t		*up, *down;
	char		 addr[32];
	unsigned	 i;

	if (rt == NULL)
		return NULL;
	up = json_array();
	down = json_array();
	for (i = 0; i < rt->nup; i++)
		json_array_append_new(up, rtt_status_buffer(rt, i, true));
	for (i = 0; i < rt->ndown; i++)
		json_array_append_new(down, rtt_status_buffer(rt, i, false));
	snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)rt->addr);
	return json_pack("{s:s, s:i, s:o, s:o, s:I, s:I}", "address", addr,
	    "poll_hz", (int)rt->hz, "up", up, "down", down, "stalls",
	    (json_int_t)rt->stalls, "polls", (json_int_t)rt->polls);
}
