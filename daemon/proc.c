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

/* Build the keeper's own argv around the backend's. */
static char **
proc_keeper_argv(struct session *s, char **prog)
{
	char	**av, timeout[32];
	size_t	  n = 0, i, np = 0;
	bool	  stdio;

	while (prog[np] != NULL)
		np++;
	if ((av = calloc(np + 12, sizeof *av)) == NULL)
		log_fatal("out of memory");
	snprintf(timeout, sizeof timeout, "%ld", s->stop_timeout);
	av[n++] = strdup(dmn.keeper_path);
	av[n++] = strdup("--cwd");
	av[n++] = strdup(s->cwd);
	av[n++] = strdup("--stop-timeout");
	av[n++] = strdup(timeout);
	if (s->transport.enabled) {
		/* The pipes arrive as fds 4 and 5 (PROC_FD_IN, PROC_FD_OUT). */
		stdio = s->backend->stdio_transport;
		av[n++] = strdup(stdio ? "--stdin-fd" : "--keep-fd");
		av[n++] = strdup("4");
		av[n++] = strdup(stdio ? "--stdout-fd" : "--keep-fd");
		av[n++] = strdup("5");
	}
	av[n++] = strdup("--");
	for (i = 0; i < np; i++)
		av[n++] = strdup(prog[i]);
	av[n] = NULL;
	for (i = 0; i < n; i++)
		if (av[i] == NULL)
			log_fatal("out of memory");
	return av;
}

/* Write a formatted command line to the keeper, if it still listens. */
void
proc_send(struct session *s, const char *fmt, ...)
{
	uv_buf_t	buf;
	va_list		ap;
	char		line[128];
	int		n;

	if (!s->ctl_open)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof line)
		log_fatal("keeper command too long");
	buf = uv_buf_init(line, n);
	/* A few bytes on an empty socketpair: try_write takes them whole. */
	if (uv_try_write((uv_stream_t *)&s->ctl, &buf, 1) != n)
		log_warn("session %lu: keeper did not take \"%.*s\"", s->id,
		    n - 1, line);
}

/* Act on one line the keeper sent. */
static int
proc_line(void *arg, char *line, size_t len)
{
	struct session	*s = arg;
	char		 stage[32];
	long		 a;
	int		 b;

	(void)len;
	if (sscanf(line, "started %ld", &a) == 1) {
		s->pid = (pid_t)a;
		log_info("session %lu: pid %ld started", s->id, a);
		if (s->state != S_STARTING)
			return 0;
		if (s->backend->start != NULL)
			s->backend->start(s);
		else
			session_set_state(s, S_RUNNING);
		return 0;
	}
	if (sscanf(line, "failed %31s %d", stage, &b) == 2) {
		session_fail(s, b, "%s %s: %s", stage,
		    strcmp(stage, "chdir") == 0 ? s->cwd : s->exec_name,
		    strerror(b));
		return 0;
	}
	if (sscanf(line, "exit code %d", &b) == 1) {
		s->have_exit = true;
		s->exit_code = b;
	} else if (sscanf(line, "exit signal %d", &b) == 1) {
		s->have_exit = true;
		s->exit_signal = b;
	} else {
		log_warn("session %lu: keeper said \"%s\"", s->id, line);
		return 0;
	}
	log_info("session %lu: program ended (%s %d)", s->id,
	    s->exit_signal ? "signal" : "code", b);
	if (s->state == S_RUNNING)
		session_set_state(s, S_STOPPING);
	return 0;
}

/* Give libuv a buffer for the control channel. */
static void
proc_alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	static char	chunk[1024];

	(void)h;
	(void)hint;
	buf->base = chunk;
	buf->len = sizeof chunk;
}

/* Read the keeper's reports; EOF means it is gone or going. */
static void
proc_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct session *s = st->data;

	if (nread > 0) {
		if (frame_feed(&s->ctl_frame, buf->base, nread, proc_line,
		    s) != 0)
			log_warn("session %lu: keeper sent garbage", s->id);
		return;
	}
	if (nread == 0)
		return;
	uv_read_stop(st);
	uv_close((uv_handle_t *)st, NULL);
	s->ctl_open = false;
	frame_free(&s->ctl_frame);
	session_check_done(s);
}

/* The keeper exited: nothing it started is alive; collect the output. */
static void
proc_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	struct session *s = p->data;

	s->keeper_live = false;
	uv_close((uv_handle_t *)p, NULL);
	if (status != 0 || sig != 0)
		log_warn("session %lu: keeper %ld ended badly (status %ld, "
		    "signal %d)", s->id, (long)s->keeper_pid, (long)status, sig);
	if (!s->have_exit && s->error == NULL)
		session_fail(s, 0, "the keeper process ended unexpectedly");
	console_drain(&s->console);
	session_check_done(s);
}

/* Start a keeper running argv on the session's pty; the one spawn function. */
int
proc_spawn(struct session *s, char **argv, char *err, size_t errlen)
{
	uv_process_options_t	 opt;
	uv_stdio_container_t	 stdio[6];
	char		       **kav, **env;
	int			 rc, i;

	free(s->exec_name);
	if ((s->exec_name = strdup(argv[0])) == NULL)
		log_fatal("out of memory");
	kav = proc_keeper_argv(s, argv);
	env = proc_env(s);
	memset(&opt, 0, sizeof opt);
	for (i = 0; i < 3; i++) {
		stdio[i].flags = UV_INHERIT_FD;
		stdio[i].data.fd = s->console.slave;
	}
	uv_pipe_init(dmn.loop, &s->ctl, 0);
	s->ctl.data = s;
	stdio[3].flags = UV_CREATE_PIPE | UV_READABLE_PIPE | UV_WRITABLE_PIPE;
	stdio[3].data.stream = (uv_stream_t *)&s->ctl;
	opt.file = kav[0];
	opt.args = kav;
	opt.env = env;
	opt.stdio = stdio;
	opt.stdio_count = 4;
	if (s->transport.enabled) {
		stdio[PROC_FD_IN].flags = UV_INHERIT_FD;
		stdio[PROC_FD_IN].data.fd = s->transport.child_in;
		stdio[PROC_FD_OUT].flags = UV_INHERIT_FD;
		stdio[PROC_FD_OUT].data.fd = s->transport.child_out;
		opt.stdio_count = 6;
	}
	opt.exit_cb = proc_exit_cb;
	s->keeper.data = s;
	rc = uv_spawn(dmn.loop, &s->keeper, &opt);
	backend_argv_free(kav);
	backend_argv_free(env);
	/* The keeper holds the child ends now; our copies would hide EOF. */
	close(s->console.slave);
	s->console.slave = -1;
	transport_spawned(&s->transport);
	if (rc != 0) {
		uv_close((uv_handle_t *)&s->keeper, NULL);
		uv_close((uv_handle_t *)&s->ctl, NULL);
		snprintf(err, errlen, "spawn %s: %s", dmn.keeper_path,
		    uv_strerror(rc));
		return -rc;
	}
	s->keeper_live = true;
	s->keeper_pid = s->keeper.pid;
	s->ctl_open = true;
	frame_init(&s->ctl_frame, 4096);
	uv_read_start((uv_stream_t *)&s->ctl, proc_alloc_cb, proc_read_cb);
	return 0;
}
