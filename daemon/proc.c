/* Keeper processes: the one place that spawns, talks to keepers and sees them exit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

extern char **environ;

/* Build the program's environment: the daemon's, the launch's, the session's. */
static char **
proc_env(struct session *s)
{
	const char	*key;
	json_t		*val;
	char	       **env, *e;
	size_t		 n = 0, i, extra;
	bool		 have_term = false;

	for (i = 0; environ[i] != NULL; i++)
		n++;
	extra = json_object_size(s->env) + 4;
	if ((env = calloc(n + extra, sizeof *env)) == NULL)
		log_fatal("out of memory");
	n = 0;
	for (i = 0; environ[i] != NULL; i++) {
		e = environ[i];
		if (strncmp(e, "DBGCTL_SESSION=", 15) == 0)
			continue;
		if (strncmp(e, "TERM=", 5) == 0)
			have_term = true;
		if (strncmp(e, "PATH=", 5) == 0 && s->backend->path != NULL)
			continue;
		key = e;
		/* A launch's own value replaces the daemon's. */
		if (json_object_getn(s->env, key, strcspn(key, "=")) != NULL)
			continue;
		env[n++] = strdup(e);
	}
	json_object_foreach(s->env, key, val) {
		/* The daemon names the session; a launch cannot. */
		if (strcmp(key, "DBGCTL_SESSION") == 0)
			continue;
		if (strcmp(key, "TERM") == 0)
			have_term = true;
		if (asprintf(&env[n++], "%s=%s", key, json_string_value(val)) < 0)
			log_fatal("out of memory");
	}
	if (asprintf(&env[n++], "DBGCTL_SESSION=%lu", s->id) < 0)
		log_fatal("out of memory");
	if (!have_term)
		env[n++] = strdup("TERM=dumb");
	if (s->backend->path != NULL &&
	    json_object_get(s->env, "PATH") == NULL &&
	    asprintf(&env[n++], "PATH=%s", s->backend->path) < 0)
		log_fatal("out of memory");
	env[n] = NULL;
	for (i = 0; i < n; i++)
		if (env[i] == NULL)
			log_fatal("out of memory");
	return env;
}

/* Build the keeper's own argv around the process's. */
static char **
proc_keeper_argv(struct proc *pr, char **prog)
{
	struct backend_av	 av = { 0 };
	char			 num[32];

	backend_push(&av, dmn.keeper_path);
	backend_push(&av, "--cwd");
	backend_push(&av, pr->s->cwd);
	backend_push(&av, "--stop-timeout");
	snprintf(num, sizeof num, "%ld", pr->s->stop_timeout);
	backend_push(&av, num);
	if (pr->transport) {
		backend_push(&av, pr->stdio_transport ? "--stdin-fd" :
		    "--keep-fd");
		snprintf(num, sizeof num, "%d", PROC_FD_IN);
		backend_push(&av, num);
		backend_push(&av, pr->stdio_transport ? "--stdout-fd" :
		    "--keep-fd");
		snprintf(num, sizeof num, "%d", PROC_FD_OUT);
		backend_push(&av, num);
	}
	backend_push(&av, "--");
	for (; *prog != NULL; prog++)
		backend_push(&av, *prog);
	return av.v;
}

/* Set up an unused process slot of a session. */
void
proc_init(struct proc *pr, struct session *s, const char *role,
    struct console *console)
{
	memset(pr, 0, sizeof *pr);
	pr->s = s;
	pr->role = role;
	pr->console = console;
}

/* Whether nothing of the process is left: keeper gone, reports read, output drained. */
bool
proc_done(const struct proc *pr)
{
	if (!pr->used)
		return true;
	return !pr->keeper_live && !pr->ctl_open && pr->console->drained;
}

/* Write a command line to the keeper, if it still listens. */
static void
proc_send(struct proc *pr, const char *line)
{
	uv_buf_t	buf;
	int		n = strlen(line);

	if (!pr->ctl_open)
		return;
	buf = uv_buf_init((char *)line, n);
	/* A few bytes on an empty socketpair: try_write takes them whole. */
	if (uv_try_write((uv_stream_t *)&pr->ctl, &buf, 1) != n)
		log_warn("session %lu: %s keeper did not take \"%.*s\"",
		    pr->s->id, pr->role, n - 1, line);
}

/* Ask the keeper to end its tree: TERM now, KILL after timeout_ms. */
void
proc_stop(struct proc *pr, long timeout_ms)
{
	char line[64];

	snprintf(line, sizeof line, "stop %ld\n", timeout_ms);
	proc_send(pr, line);
}

/* Act on one line the keeper sent. */
static int
proc_line(void *arg, char *line, size_t len)
{
	struct proc	*pr = arg;
	struct session	*s = pr->s;
	char		 stage[32];
	long		 a;
	int		 b;

	(void)len;
	if (sscanf(line, "started %ld", &a) == 1) {
		pr->pid = (pid_t)a;
		log_info("session %lu: %s pid %ld started", s->id, pr->role, a);
		session_proc_started(pr);
		return 0;
	}
	if (sscanf(line, "failed %31s %d", stage, &b) == 2) {
		session_fail(s, b, "%s %s: %s", stage,
		    strcmp(stage, "chdir") == 0 ? s->cwd : pr->exec_name,
		    strerror(b));
		return 0;
	}
	if (sscanf(line, "exit code %d", &b) == 1)
		pr->exit_code = b;
	else if (sscanf(line, "exit signal %d", &b) == 1)
		pr->exit_signal = b;
	else {
		log_warn("session %lu: keeper said \"%s\"", s->id, line);
		return 0;
	}
	pr->have_exit = true;
	log_info("session %lu: %s ended (%s %d)", s->id, pr->role,
	    pr->exit_signal ? "signal" : "code", b);
	session_proc_exited(pr);
	return 0;
}

/* Read the keeper's reports; EOF means it is gone or going. */
static void
proc_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct proc *pr = st->data;

	if (nread > 0) {
		if (frame_feed(&pr->ctl_frame, buf->base, nread, proc_line,
		    pr) != 0)
			log_warn("session %lu: keeper sent garbage", pr->s->id);
		return;
	}
	if (nread == 0)
		return;
	uv_read_stop(st);
	uv_close((uv_handle_t *)st, NULL);
	pr->ctl_open = false;
	frame_free(&pr->ctl_frame);
	session_check_done(pr->s);
}

/* The keeper exited: nothing it started is alive; collect the output. */
static void
proc_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	struct proc *pr = p->data;

	pr->keeper_live = false;
	uv_close((uv_handle_t *)p, NULL);
	if (status != 0 || sig != 0)
		log_warn("session %lu: %s keeper %ld ended badly (status %ld, "
		    "signal %d)", pr->s->id, pr->role, (long)pr->keeper_pid,
		    (long)status, sig);
	console_drain(pr->console);
	session_proc_gone(pr);
	session_check_done(pr->s);
}

/* Start a keeper running argv on the process's pty; the one spawn function. */
int
proc_spawn(struct proc *pr, char **argv, char *err, size_t errlen)
{
	struct session		*s = pr->s;
	uv_process_options_t	 opt;
	uv_stdio_container_t	 stdio[6];
	char		       **kav, **env;
	int			 rc, i;

	free(pr->exec_name);
	if ((pr->exec_name = strdup(argv[0])) == NULL)
		log_fatal("out of memory");
	kav = proc_keeper_argv(pr, argv);
	env = proc_env(s);
	memset(&opt, 0, sizeof opt);
	for (i = 0; i < 3; i++) {
		stdio[i].flags = UV_INHERIT_FD;
		stdio[i].data.fd = pr->console->slave;
	}
	uv_pipe_init(dmn.loop, &pr->ctl, 0);
	pr->ctl.data = pr;
	stdio[3].flags = UV_CREATE_PIPE | UV_READABLE_PIPE | UV_WRITABLE_PIPE;
	stdio[3].data.stream = (uv_stream_t *)&pr->ctl;
	opt.file = kav[0];
	opt.args = kav;
	opt.env = env;
	opt.stdio = stdio;
	opt.stdio_count = 4;
	if (pr->transport) {
		stdio[PROC_FD_IN].flags = UV_INHERIT_FD;
		stdio[PROC_FD_IN].data.fd = s->transport.child_in;
		stdio[PROC_FD_OUT].flags = UV_INHERIT_FD;
		stdio[PROC_FD_OUT].data.fd = s->transport.child_out;
		opt.stdio_count = 6;
	}
	opt.exit_cb = proc_exit_cb;
	pr->keeper.data = pr;
	pr->used = true;
	rc = uv_spawn(dmn.loop, &pr->keeper, &opt);
	backend_argv_free(kav);
	backend_argv_free(env);
	/* The keeper holds the child ends now; our copies would hide EOF. */
	close(pr->console->slave);
	pr->console->slave = -1;
	if (pr->transport)
		transport_spawned(&s->transport);
	if (rc != 0) {
		uv_close((uv_handle_t *)&pr->keeper, NULL);
		uv_close((uv_handle_t *)&pr->ctl, NULL);
		pr->used = false;
		snprintf(err, errlen, "spawn %s: %s", dmn.keeper_path,
		    uv_strerror(rc));
		return -rc;
	}
	pr->keeper_live = true;
	pr->keeper_pid = pr->keeper.pid;
	pr->ctl_open = true;
	frame_init(&pr->ctl_frame, 4096);
	uv_read_start((uv_stream_t *)&pr->ctl, daemon_alloc_cb, proc_read_cb);
	return 0;
}
