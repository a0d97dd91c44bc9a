/*
 * A bundle as one .tar.gz file: tar(1) archives the finished directory,
 * run through the one spawn path (a keeper on a pty of its own), so the
 * loop never waits for it. tar resolves no path of the bundle's: it is
 * given the directory and the archive (made 0600 by the daemon) as
 * descriptors, and reaches them as /proc/self/fd/N. Its members are under
 * one directory named as the archive, as a release tarball's are.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "capbuf.h"
#include "bundle.h"

/* How long tar may take once asked to stop. */
#define BUNDLE_TAR_STOP_MS 1000

struct bundle_tar {
	struct console	*con;		/* tar's terminal: its complaints */
	struct proc	*proc;
	struct capbuf	 out;
	struct timer	*report;	/* tells the owner on its own turn */
	char		 why[512];	/* empty: the archive is made */
	bundle_tar_cb	 cb;
	void		*arg;
};

/* What tar printed on its terminal, kept for the failure's message. */
static void
bundle_tar_console_cb(void *arg, enum console_event ev, const char *data,
    size_t len)
{
	struct bundle_tar *t = arg;

	if (ev == CONSOLE_OUTPUT && t->out.len < 4096)
		capbuf_add(&t->out, data, len);
}

/* Tell the owner, outside the keeper's callback. */
static void
bundle_tar_report_cb(void *arg)
{
	struct bundle_tar *t = arg;

	t->cb(t->arg, t->why[0] != '\0' ? t->why : NULL);
}

/* tar ran: it failed to start, exited (with what), or its keeper is gone. */
static void
bundle_tar_proc_cb(void *arg, struct proc *pr, enum proc_event ev)
{
	struct bundle_tar	*t = arg;
	const char		*stage;
	int			 errnum, code = 0, sig = 0;

	switch (ev) {
	case PROC_FAILED:
		stage = proc_failure(pr, &errnum);
		snprintf(t->why, sizeof t->why, "cannot run tar (%s): %s",
		    stage, strerror(errnum));
		break;
	case PROC_EXITED:
		(void)proc_exit(pr, &code, &sig);
		if (sig != 0)
			snprintf(t->why, sizeof t->why, "tar was killed by "
			    "signal %d", sig);
		else if (code != 0)
			snprintf(t->why, sizeof t->why, "tar exited with %d: "
			    "%.400s", code, t->out.p != NULL ?
			    t->out.p : "");
		break;
	case PROC_GONE:
		if (t->report == NULL) {
			t->report = timer_new(bundle_tar_report_cb, t);
			timer_start(t->report, 0);
		}
		break;
	default:
		break;
	}
}

/*
 * The archive's one top-level directory: path's last part without
 * ".tar.gz" or ".tgz", as tar -xzf X.tar.gz should give X/; "bundle" for a
 * name a transform's expression cannot carry as it is.
 */
static void
bundle_tar_top(const char *path, char *top, size_t len)
{
	const char	*base = strrchr(path, '/') != NULL ? strrchr(path, '/') +
			    1 : path;
	size_t		 n = strlen(base);

	if (n > 7 && strcmp(base + n - 7, ".tar.gz") == 0)
		n -= 7;
	else if (n > 4 && strcmp(base + n - 4, ".tgz") == 0)
		n -= 4;
	if (n == 0 || n >= len || base[strcspn(base, "|\\&")] != '\0' ||
	    strncmp(base, ".", n) == 0 || strncmp(base, "..", n) == 0) {
		strlcpy(top, "bundle", len);
		return;
	}
	memcpy(top, base, n);
	top[n] = '\0';
}

/*
 * Archive the directory dirfd into the new file tgzfd; cb(arg, NULL) once
 * it is made, cb(arg, why) if not. NULL with err if tar cannot start.
 */
struct bundle_tar *
bundle_tar_start(int dirfd, int tgzfd, const char *path, bundle_tar_cb cb,
    void *arg, char *err, size_t errlen)
{
	struct bundle_tar	*t;
	char			 dir[32], tgz[32], top[NAME_MAX + 1];
	char			 transform[NAME_MAX + 32];
	char			*argv[] = { "tar", "-czf", tgz, transform,
				    "-C", dir, ".", NULL };
	char			*env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C",
				    NULL };
	struct proc_spec	 spec = { .argv = argv, .env = env, .cwd = "/",
				    .stop_timeout = BUNDLE_TAR_STOP_MS,
				    .fd_in = dirfd, .fd_out = tgzfd,
				    .fd_listen = -1,
				    .fd_semihost = -1 };

	/* The keeper hands fd_in and fd_out to tar as its 4 and 5. */
	snprintf(dir, sizeof dir, "/proc/self/fd/%d", PROC_FD_IN);
	snprintf(tgz, sizeof tgz, "/proc/self/fd/%d", PROC_FD_OUT);
	/* "." becomes the top directory, "./manifest.json" top/manifest.json. */
	bundle_tar_top(path, top, sizeof top);
	snprintf(transform, sizeof transform, "--transform=s|^\\.|%s|", top);
	t = xcalloc(1, sizeof *t);
	t->cb = cb;
	t->arg = arg;
	if ((t->con = console_open(true, bundle_tar_console_cb, t, err,
	    errlen)) == NULL) {
		free(t);
		return NULL;
	}
	spec.tty = console_slave(t->con);
	t->proc = proc_spawn(&spec, dmn.keeper_path, bundle_tar_proc_cb, t,
	    err, errlen);
	console_release_slave(t->con);
	if (t->proc == NULL) {
		console_close(t->con);
		free(t);
		return NULL;
	}
	return t;
}

/* Let go of tar: its process, terminal and report. */
void
bundle_tar_free(struct bundle_tar *t)
{
	if (t == NULL)
		return;
	proc_free(t->proc);
	console_close(t->con);
	timer_free(t->report);
	capbuf_free(&t->out);
	free(t);
}
