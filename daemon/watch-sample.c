/*
 * A watch's sampling (watch.h): a timerfd aimed at a fixed grid of ticks
 * (tick n is due at t0 + n / hz, so a late tick does not delay the next),
 * at each tick a read of every span of the watch's expressions over live
 * memory, and a JSON line on the session's "watch" stream once all are
 * in. Shared RAM is read at the tick itself; QEMU's monitor answers
 * later, in order, and up to WATCH_INFLIGHT ticks may wait for it (each
 * sample keeps its tick's time); a tick past that is skipped, not queued:
 * what a watch holds stays bounded whatever the target, QEMU or the
 * stream's readers do, and every sample says how many ticks went
 * unsampled before it ("skipped"). Readers read the stream
 * from its transcript at their own pace; nothing is kept for them here.
 */
#include <sys/timerfd.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "live.h"
#include "watch.h"

/*
 * A timer aimed at an absolute CLOCK_MONOTONIC time to the nanosecond, a
 * timerfd the loop polls: libuv's timers count whole milliseconds from a
 * loop time that may be stale, a period at 1000 Hz.
 */
struct watch_clock {
	uv_poll_t	 poll;
	int		 fd;
	struct watch	*w;
};

static void	watch_sample_tick(struct watch *);

/* The clock's handle is closed: its descriptor and memory go. */
static void
watch_sample_clock_closed(uv_handle_t *h)
{
	struct watch_clock *c = h->data;

	close(c->fd);
	free(c);
}

/* The clock's time came: the watch takes its tick. */
static void
watch_sample_clock_fired(uv_poll_t *p, int status, int events)
{
	struct watch_clock	*c = p->data;
	uint64_t		 n;

	(void)status;
	(void)events;
	if (read(c->fd, &n, sizeof n) == -1 && errno == EAGAIN)
		return;
	watch_sample_tick(c->w);
}

/* A clock for w, not aimed yet. */
static struct watch_clock *
watch_sample_clock_new(struct watch *w)
{
	struct watch_clock *c = xcalloc(1, sizeof *c);

	c->w = w;
	c->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c->fd == -1)
		log_fatal("timerfd_create: %s", strerror(errno));
	uv_poll_init(dmn.loop, &c->poll, c->fd);
	c->poll.data = c;
	uv_poll_start(&c->poll, UV_READABLE, watch_sample_clock_fired);
	return c;
}

/* Aim the clock at at (CLOCK_MONOTONIC ns); a time past fires at once. */
static void
watch_sample_clock_aim(struct watch_clock *c, uint64_t at)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	/* Zero would disarm it. */
	if (at == 0)
		at = 1;
	its.it_value.tv_sec = (time_t)(at / 1000000000ULL);
	its.it_value.tv_nsec = (long)(at % 1000000000ULL);
	timerfd_settime(c->fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Stop and free the clock; it never fires after this. */
static void
watch_sample_clock_free(struct watch_clock *c)
{
	if (c == NULL)
		return;
	uv_poll_stop(&c->poll);
	uv_close((uv_handle_t *)&c->poll, watch_sample_clock_closed);
}

/* CLOCK_MONOTONIC in nanoseconds. */
static uint64_t
watch_sample_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The watch whose expressions watch_sample_cmp orders (qsort has no argument). */
static const struct watch *watch_sample_sorting;

/* The order of two expressions by address, for qsort of their indices. */
static int
watch_sample_cmp(const void *a, const void *b)
{
	const struct watch_expr	*ea = &watch_sample_sorting->exprs[*(const
				    size_t *)a];
	const struct watch_expr	*eb = &watch_sample_sorting->exprs[*(const
				    size_t *)b];

	return ea->addr < eb->addr ? -1 : ea->addr > eb->addr;
}

/* Whether every span is in shared RAM: else QEMU's monitor reads some. */
static bool
watch_sample_shared(struct watch *w)
{
	size_t i;

	for (i = 0; i < w->nspans; i++)
		if (live_map(w->s, w->spans[i].addr, w->spans[i].len) == NULL)
			return false;
	return true;
}

/*
 * Group w's expressions into spans, one read each: those at most
 * WATCH_SPAN_GAP bytes apart, up to what one read moves. -1 with err if
 * the rate is over what the way the spans are read allows.
 */
int
watch_sample_spans(struct watch *w, char *err, size_t errlen)
{
	size_t			*order = xcalloc(w->nexprs, sizeof *order);
	struct watch_span	*sp = NULL;
	struct watch_expr	*e;
	size_t			 i;
	uint64_t		 end;

	for (i = 0; i < w->nexprs; i++)
		order[i] = i;
	watch_sample_sorting = w;
	qsort(order, w->nexprs, sizeof *order, watch_sample_cmp);
	w->spans = xcalloc(w->nexprs, sizeof *w->spans);
	for (i = 0; i < w->nexprs; i++) {
		e = &w->exprs[order[i]];
		end = e->addr + e->size;
		if (sp == NULL || e->addr > sp->addr + sp->len +
		    WATCH_SPAN_GAP || end - sp->addr > LIVE_QMP_MAX) {
			sp = &w->spans[w->nspans++];
			sp->addr = e->addr;
		}
		if (end - sp->addr > sp->len)
			sp->len = end - sp->addr;
		e->span = (size_t)(sp - w->spans);
		e->off = e->addr - sp->addr;
	}
	free(order);
	for (i = 0; i < w->nspans; i++) {
		w->spans[i].boff = w->nbytes;
		w->nbytes += w->spans[i].len;
	}
	for (i = 0; i < WATCH_INFLIGHT; i++) {
		w->slots[i].w = w;
		w->slots[i].bytes = xcalloc(1, w->nbytes);
		w->slots[i].reads = xcalloc(w->nspans, sizeof
		    *w->slots[i].reads);
	}
	if (w->hz > WATCH_HZ_MAX_QMP && !watch_sample_shared(w)) {
		snprintf(err, errlen, "%u Hz is over the most a watch samples "
		    "through QEMU's monitor, %d Hz: some of its expressions "
		    "are outside the machine's shared RAM (or it shares none)",
		    w->hz, WATCH_HZ_MAX_QMP);
		return -1;
	}
	return 0;
}

/* A little-endian value of size bytes at p, as an unsigned number. */
static uint64_t
watch_sample_le(const unsigned char *p, size_t size)
{
	uint64_t	v = 0;
	size_t		i;

	for (i = size; i > 0; i--)
		v = v << 8 | p[i - 1];
	return v;
}

/* An expression's value from a tick's bytes, as JSON. */
static json_t *
watch_sample_value(const struct watch *w, const struct watch_expr *e,
    const unsigned char *bytes)
{
	uint64_t	 v = watch_sample_le(bytes + w->spans[e->span].boff +
			    e->off, e->size);
	unsigned	 bits = (unsigned)e->size * 8;
	char		 hex[32];
	float		 f;
	double		 d;
	uint32_t	 v32 = (uint32_t)v;

	switch (e->type) {
	case WATCH_SIGNED:
		if (bits < 64 && (v >> (bits - 1)) != 0)
			v |= ~0ULL << bits;
		return json_integer((json_int_t)(int64_t)v);
	case WATCH_UNSIGNED:
		return v <= INT64_MAX ? json_integer((json_int_t)v) :
		    json_real((double)v);
	case WATCH_POINTER:
		snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)v);
		return json_string(hex);
	case WATCH_FLOAT:
		break;
	}
	if (e->size == 4) {
		memcpy(&f, &v32, sizeof f);
		d = f;
	} else
		memcpy(&d, &v, sizeof d);
	/* JSON has no NaN or infinity. */
	return isfinite(d) ? json_real(d) : json_null();
}

/* Append line (a JSON object, taken) to the session's watch stream. */
static void
watch_sample_emit(struct watch *w, json_t *line)
{
	struct output	*o = session_stream(w->s, "watch");
	char		*text;
	size_t		 len;
	struct session_event ev = { .kind = SE_STREAM, .stream = "watch",
				    .json = line };

	text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER);
	len = strlen(text);
	text[len++] = '\n';
	/* With no stream, the line goes to waiters only: it has no offset. */
	if (o != NULL) {
		ev.offset = output_size(o);
		output_add(o, text, len);
		ev.data = text;
		ev.len = len;
	}
	session_fire(w->s, &ev);
	free(text);
	json_decref(line);
}

/* A tick whose reads are all in: its sample goes out, or it was skipped. */
static void
watch_sample_done(struct watch *w, struct watch_slot *sl)
{
	json_t	*values, *line;
	size_t	 i;
	double	 t;

	if (sl->failed) {
		sl->failed = false;
		w->skipped++;
		w->skipped_new++;
		return;
	}
	values = json_object();
	for (i = 0; i < w->nexprs; i++)
		json_object_set_new(values, w->exprs[i].text,
		    watch_sample_value(w, &w->exprs[i], sl->bytes));
	t = w->t0_real + (double)(sl->ns - w->t0) / 1e9;
	line = json_pack("{s:I, s:I, s:f, s:o}", "watch", (json_int_t)w->id,
	    "seq", (json_int_t)sl->tick, "t", t, "values", values);
	if (w->skipped_new > 0)
		json_object_set_new(line, "skipped",
		    json_integer((json_int_t)w->skipped_new));
	w->skipped_new = 0;
	w->samples++;
	json_decref(w->last);
	w->last = json_incref(line);
	watch_sample_emit(w, line);
}

/* Every tick from the oldest on whose reads are in goes out, in order. */
static void
watch_sample_flush(struct watch *w)
{
	struct watch_slot *sl;

	while (w->busy > 0 && (sl = &w->slots[w->head])->reading == 0) {
		w->head = (w->head + 1) % WATCH_INFLIGHT;
		w->busy--;
		watch_sample_done(w, sl);
	}
}

/* QEMU's monitor answered one read of a tick. */
static void
watch_sample_read(void *arg, const struct live_result *r)
{
	struct watch_read	*rd = arg;
	struct watch_slot	*sl = rd->slot;
	struct watch_span	*sp = &sl->w->spans[rd->span];

	rd->op = NULL;
	if (r->code != 0 || r->len != sp->len)
		sl->failed = true;
	else
		memcpy(sl->bytes + sp->boff, r->data, sp->len);
	sl->reading--;
	watch_sample_flush(sl->w);
}

/*
 * Read every span for tick into a free slot: at once from shared RAM,
 * later from QMP, whose answers come in order, so ticks end in order.
 */
static void
watch_sample_reads(struct watch *w, uint64_t tick, uint64_t now)
{
	struct rpc_error	 err = { 0 };
	struct watch_slot	*sl;
	struct watch_span	*sp;
	struct watch_read	*rd;
	const unsigned char	*p;
	size_t			 i;

	sl = &w->slots[(w->head + w->busy++) % WATCH_INFLIGHT];
	sl->tick = tick;
	sl->ns = now;
	sl->failed = false;
	sl->reading = 0;
	for (i = 0; i < w->nspans; i++) {
		sp = &w->spans[i];
		if ((p = live_map(w->s, sp->addr, sp->len)) != NULL) {
			memcpy(sl->bytes + sp->boff, p, sp->len);
			continue;
		}
		rd = &sl->reads[i];
		rd->slot = sl;
		rd->span = i;
		rd->op = live_read(w->s, sp->addr, sp->len, watch_sample_read,
		    rd, &err);
		if (rd->op == NULL)
			sl->failed = true;
		else
			sl->reading++;
	}
	watch_sample_flush(w);
}

/* Aim the clock at the next tick's time on the grid. */
static void
watch_sample_aim(struct watch *w)
{
	watch_sample_clock_aim(w->clock, w->t0 + w->next * w->period);
}

/* The clock fired: take the tick due now, unless it is early or reads wait. */
static void
watch_sample_tick(struct watch *w)
{
	uint64_t	 now = watch_sample_mono();
	uint64_t	 due = (now - w->t0) / w->period;

	if (due < w->next) {
		watch_sample_aim(w);
		return;
	}
	/* Ticks passed while the loop was busy; this one too if all wait. */
	w->skipped += due - w->next;
	w->skipped_new += due - w->next;
	w->next = due + 1;
	if (w->busy == WATCH_INFLIGHT) {
		w->skipped++;
		w->skipped_new++;
	} else
		watch_sample_reads(w, due, now);
	watch_sample_aim(w);
}

/* Begin sampling a resolved watch: tick 0 is now. */
void
watch_sample_start(struct watch *w)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	w->t0 = watch_sample_mono();
	w->t0_real = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	w->period = 1000000000ULL / w->hz;
	w->next = 0;
	w->running = true;
	w->clock = watch_sample_clock_new(w);
	watch_sample_aim(w);
}

/* Stop sampling: reads still waiting are cancelled; a last line says why. */
void
watch_sample_stop(struct watch *w, const char *why)
{
	size_t i, j;

	for (i = 0; i < WATCH_INFLIGHT; i++)
		for (j = 0; j < w->nspans; j++) {
			live_cancel(w->slots[i].reads[j].op);
			w->slots[i].reads[j].op = NULL;
		}
	w->busy = 0;
	watch_sample_clock_free(w->clock);
	w->clock = NULL;
	w->running = false;
	watch_sample_emit(w, json_pack("{s:I, s:b, s:s, s:I, s:I}", "watch",
	    (json_int_t)w->id, "stopped", 1, "why", why, "samples",
	    (json_int_t)w->samples, "skipped", (json_int_t)w->skipped));
}
