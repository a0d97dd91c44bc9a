/*
 * A recording's firmware, or a replay's image, copied before its session
 * exists: up to REPLAY_MAX_FILE bytes each, which the loop does not wait
 * for, so the copy runs on the threadpool while the launch waits. It goes
 * to a name of its own in the state directory, which the session's file
 * takes over (replay_open) or which is removed with the launch.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "replay.h"

/* A copy on its way: the launch it is for, and where the request stands. */
struct replay_stage {
	uv_work_t	 work;
	struct request	*req;		/* NULL once the request is gone */
	struct launch	 l;
	replay_staged_cb cb;
	char		*src;
	int		 flags;
	int		 rc;
	char		 err[2 * PATH_MAX + 128];
};

/* The file a launch needs copied and how, or NULL if it needs none. */
static char *
replay_stage_source(const struct launch *l, int *flags)
{
	const char	*dir = launch_get_str(l, "replay");
	char		*src;

	if (dir != NULL) {
		*flags = REPLAY_FILE_QCOW2;
		xasprintf(&src, "%s/%s", dir, REPLAY_IMAGE);
		return src;
	}
	if (!json_is_true(json_object_get(l->kind_params, "record")))
		return NULL;
	*flags = REPLAY_FILE_FOLLOW;
	return launch_program_path(l);
}

/* Whether a launch has a file to copy before its session is made. */
bool
replay_stage_needed(const struct launch *l)
{
	return launch_get_str(l, "replay") != NULL || json_is_true(
	    json_object_get(l->kind_params, "record"));
}

/* On the threadpool: the copy, which makes its destination anew. */
static void
replay_stage_work(uv_work_t *w)
{
	struct replay_stage *st = w->data;

	st->rc = replay_file_copy(st->src, st->l.staged, st->flags, st->err,
	    sizeof st->err);
}

/* Free a stage and what its launch holds (its copy, if any, removed). */
static void
replay_stage_free(struct replay_stage *st)
{
	launch_free(&st->l);
	free(st->src);
	free(st);
}

/* Back on the loop: the launch goes on with its copy, or fails. */
static void
replay_stage_done(uv_work_t *w, int status)
{
	struct replay_stage	*st = w->data;
	struct request		*req = st->req;

	if (req == NULL) {
		replay_stage_free(st);
		return;
	}
	st->req = NULL;
	if (status != 0 && st->rc == 0) {
		st->rc = -1;
		snprintf(st->err, sizeof st->err, "cannot copy %s: %s",
		    st->src, uv_strerror(status));
	}
	if (st->rc != 0) {
		log_warn("launch: %s", st->err);
		st->cb(req, NULL, st->err);
	} else
		st->cb(req, &st->l, NULL);
	replay_stage_free(st);
}

/*
 * Copy the file l needs (replay_stage_needed) on the threadpool; l's
 * contents are taken. cb(req, launch, NULL) goes on with the launch, its
 * copy at launch->staged, or cb(req, NULL, why) says why it failed; the
 * request waits meanwhile. NULL, with err, if the copy cannot start.
 */
struct replay_stage *
replay_stage(struct request *req, struct launch *l, replay_staged_cb cb,
    char *err, size_t errlen)
{
	struct replay_stage	*st = xcalloc(1, sizeof *st);
	int			 fd;

	st->l = *l;
	memset(l, 0, sizeof *l);
	if ((st->src = replay_stage_source(&st->l, &st->flags)) == NULL) {
		snprintf(err, errlen, "%s: %s", json_string_value(
		    json_array_get(st->l.argv, 0)), strerror(errno));
		replay_stage_free(st);
		return NULL;
	}
	xasprintf(&st->l.staged, "%s/sessions/stage.XXXXXX", dmn.state_dir);
	if ((fd = mkostemp(st->l.staged, O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", st->l.staged, strerror(errno));
		free(st->l.staged);
		st->l.staged = NULL;
		replay_stage_free(st);
		return NULL;
	}
	close(fd);
	st->req = req;
	st->cb = cb;
	st->work.data = st;
	if (uv_queue_work(dmn.loop, &st->work, replay_stage_work,
	    replay_stage_done) != 0)
		log_fatal("launch: cannot queue the copy of %s", st->src);
	return st;
}

/* The request is gone: the copy ends on its own and is removed then. */
void
replay_stage_drop(struct replay_stage *st)
{
	st->req = NULL;
}
