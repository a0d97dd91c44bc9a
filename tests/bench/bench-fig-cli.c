/*
 * The client as a user runs it: `dbgctl ping` and `dbgctl list` as whole
 * processes (spawn, exec, wait; output to /dev/null) with one live
 * session, beside the spawn of /bin/true, the floor of any process, and
 * beside `supervisorctl status` of a supervisord running one program when
 * supervisor is installed.
 */
#include "bench.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

/* Milliseconds supervisord may take to run its program. */
#define FIG_CLI_SUPERVISOR_MS 15000

/* A supervisord of our own, in the daemon's directory. */
struct fig_cli_sup {
	pid_t	pid;
	char	conf[128];
};

/* Write supervisord's configuration: one program, a socket of its own. */
static int
fig_cli_sup_conf(struct bench *b, struct fig_cli_sup *s)
{
	FILE *f;

	snprintf(s->conf, sizeof s->conf, "%s/supervisord.conf", b->dir);
	if ((f = fopen(s->conf, "w")) == NULL)
		return -1;
	fprintf(f, "[unix_http_server]\nfile=%s/supervisor.sock\n"
	    "[supervisord]\nnodaemon=true\nlogfile=%s/supervisord.log\n"
	    "pidfile=%s/supervisord.pid\nchildlogdir=%s\n"
	    "[rpcinterface:supervisor]\nsupervisor.rpcinterface_factory = "
	    "supervisor.rpcinterface:make_main_rpcinterface\n"
	    "[supervisorctl]\nserverurl=unix://%s/supervisor.sock\n"
	    "[program:sleep]\ncommand=sleep 1000\nstartsecs=0\n",
	    b->dir, b->dir, b->dir, b->dir, b->dir);
	return fclose(f);
}

/* Start supervisord and wait until `status` says its program runs. */
static int
fig_cli_sup_start(struct bench *b, struct fig_cli_sup *s, const char **why)
{
	const char	*argv[] = { "supervisord", "-c", s->conf, NULL };
	const char	*ctl[] = { "supervisorctl", "-c", s->conf, "status",
			    NULL };
	double		 end = stat_now_ms() + FIG_CLI_SUPERVISOR_MS;

	s->pid = 0;
	if (!proc_exists("supervisord") || !proc_exists("supervisorctl")) {
		*why = "baseline n/a: supervisor is not installed";
		return -1;
	}
	if (fig_cli_sup_conf(b, s) != 0 ||
	    (s->pid = proc_spawn(argv, NULL, -1, -1, -1)) == -1) {
		*why = "baseline n/a: supervisord did not start";
		return s->pid = 0, -1;
	}
	while (!(proc_time_ms(ctl, NULL) >= 0)) {
		if (stat_now_ms() > end) {
			*why = "baseline n/a: supervisord's program did not "
			    "run";
			return -1;
		}
		stat_sleep_ms(50);
	}
	return 0;
}

/* Stop supervisord, and its program with it. */
static void
fig_cli_sup_stop(struct fig_cli_sup *s)
{
	if (s->pid <= 0)
		return;
	kill(s->pid, SIGTERM);
	if (proc_wait(s->pid, 10000) == -1) {
		kill(s->pid, SIGKILL);
		proc_wait(s->pid, -1);
	}
}

/* The samples of the figure, one run at a time, interleaved. */
struct fig_cli_samples {
	struct samples ping, list, bare, sup;
};

/* One run: every command once; -1 if one of ours failed. */
static int
fig_cli_sample(struct bench *b, struct fig_cli_samples *s,
    const struct fig_cli_sup *sup)
{
	const char	*ping[] = { "ping", NULL }, *list[] = { "list", NULL };
	const char	*bare[] = { "/bin/true", NULL };
	const char	*ctl[] = { "supervisorctl", "-c", sup->conf, "status",
			    NULL };
	double		 p, t, l, c = NA;

	p = daemon_client_ms(b, ping);
	t = proc_time_ms(bare, NULL);
	l = daemon_client_ms(b, list);
	if (sup->pid > 0 && (c = proc_time_ms(ctl, NULL)) >= 0)
		stat_add(&s->sup, c);
	if (!(p >= 0) || !(l >= 0) || !(t >= 0))
		return bench_fail(b, "dbgctl ping or list, or /bin/true, "
		    "failed");
	stat_add(&s->bare, t);
	stat_add(&s->ping, p);
	stat_add(&s->list, l);
	return 0;
}

/* Figure: dbgctl ping and list, whole, beside their baselines. */
int
fig_cli_run(struct bench *b)
{
	struct fig_cli_samples	 s = { 0 };
	struct fig_cli_sup	 sup;
	struct rpc		 r;
	const char		*why = NULL;
	json_t			*sess;
	int			 run, rv = 0;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	if ((sess = rpc_launch_sleep(&r)) == NULL) {
		rpc_close(&r);
		return bench_fail(b, "launch: %s", r.err);
	}
	json_decref(sess);
	fig_cli_sup_start(b, &sup, &why);
	for (run = 0; run < b->runs && rv == 0; run++)
		rv = fig_cli_sample(b, &s, &sup);
	fig_cli_sup_stop(&sup);
	rpc_close(&r);
	if (rv == 0) {
		table_row("ms", stat_median(&s.ping), stat_median(&s.bare),
		    TARGET(MAX, 0.5), NULL,
		    "dbgctl ping, whole process [vs spawn /bin/true]");
		table_row("ms", stat_median(&s.list), stat_median(&s.bare),
		    NO_TARGET, NULL, "dbgctl list, 1 session, whole process "
		    "[vs spawn /bin/true]");
		table_row("ms", stat_median(&s.list), why != NULL ? NA :
		    stat_median(&s.sup), NO_TARGET, why != NULL ? why : NULL,
		    "dbgctl list, 1 session [vs supervisorctl status, "
		    "1 program]");
	}
	stat_free(&s.ping);
	stat_free(&s.list);
	stat_free(&s.bare);
	stat_free(&s.sup);
	return rv;
}
