/*
 * Rig hosts over SSH, through a real sshd of the figure's own on loopback:
 * ping's round trip and a launch --wait on a held ssh:// connection (ssh
 * running `dbgctl dial-stdio`), beside the same over an `ssh -L` forward
 * of the daemon's Unix socket, goal 1.1x; and `dbgctl list` as a whole
 * process over ssh://, with and without ControlMaster, beside `ssh host
 * true` the same way.
 */
#include "bench.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where Debian's sshd is. */
#define FIG_SSH_SSHD		"/usr/sbin/sshd"
/* Milliseconds sshd, a forward or a dial may take to come up. */
#define FIG_SSH_START_MS	20000
/* Round trips a sample of the RTT takes, and a warm-up's. */
#define FIG_SSH_BATCH		200
#define FIG_SSH_WARM		50

/* The sshd, the client configs and the links of the figure. */
struct fig_ssh {
	pid_t	 sshd;
	int	 port;
	char	 dir[128];		/* b->dir/ssh */
	char	 fwd[160];		/* the forward's local socket */
	char	 dbgctl[PATH_MAX];	/* b->dbgctl, absolute: the far side's */
	char	 remote[PATH_MAX + 256];	/* dial-stdio's command line */
	char	 dest[64];		/* 127.0.0.1 */
	char	 url[256];		/* ssh://127.0.0.1:PORT/SOCK */
	char	*env_plain;		/* DBGCTL_SSH=ssh -F DIR/plain */
	char	*env_cm;		/* DBGCTL_SSH=ssh -F DIR/cm */
	char	**envp_plain, **envp_cm; /* b->envp and one of those */
	pid_t	 fwd_pid, dial_pid, master_pid;
	struct rpc via_fwd, via_ssh;
};

/* Run argv to its end with envp (NULL: ours); 0 if it exited 0. */
static int
fig_ssh_exec(char *const envp[], const char *const argv[])
{
	return proc_time_ms(argv, envp) >= 0 ? 0 : -1;
}

/* Write text to dir/name, mode 0600. */
static int
fig_ssh_write(const char *dir, const char *name, const char *text)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fputs(text, f);
	fchmod(fileno(f), 0600);
	return fclose(f);
}

/* A loopback port free now (sshd takes no port 0). */
static int
fig_ssh_free_port(void)
{
	struct sockaddr_in	sa = { .sin_family = AF_INET };
	socklen_t		len = sizeof sa;
	int			fd, port = -1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* Make the host key, the user key and authorized_keys. */
static int
fig_ssh_keys(struct fig_ssh *s)
{
	char		 host[PATH_MAX], id[PATH_MAX], *pub;
	const char	*kh[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "",
			    "-f", host, NULL };
	const char	*ki[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "",
			    "-f", id, NULL };
	FILE		*f;
	size_t		 n;

	snprintf(host, sizeof host, "%s/host_key", s->dir);
	snprintf(id, sizeof id, "%s/id_key", s->dir);
	if (fig_ssh_exec(NULL, kh) != 0 || fig_ssh_exec(NULL, ki) != 0)
		return -1;
	snprintf(id, sizeof id, "%s/id_key.pub", s->dir);
	if ((f = fopen(id, "r")) == NULL || (pub = calloc(1, 4096)) == NULL)
		return -1;
	n = fread(pub, 1, 4095, f);
	fclose(f);
	pub[n] = '\0';
	n = fig_ssh_write(s->dir, "authorized_keys", pub);
	free(pub);
	return (int)n;
}

/* Write sshd_config, known_hosts and the two client configs for s->port. */
static int
fig_ssh_configs(struct bench *b, struct fig_ssh *s)
{
	char	 text[8192], bin[PATH_MAX], pub[512], path[PATH_MAX];
	FILE	*f;

	snprintf(bin, sizeof bin, "%s", s->dbgctl);
	*strrchr(bin, '/') = '\0';
	snprintf(text, sizeof text, "ListenAddress 127.0.0.1:%d\nHostKey "
	    "%s/host_key\nAuthorizedKeysFile %s/authorized_keys\nPidFile none\n"
	    "StrictModes no\nUsePAM no\nPasswordAuthentication no\n"
	    "KbdInteractiveAuthentication no\nPermitRootLogin "
	    "prohibit-password\nAllowStreamLocalForwarding yes\nMaxSessions "
	    "100\nMaxStartups 100:30:200\nLogLevel INFO\nSetEnv PATH=%s:/usr/bin:"
	    "/bin HOME=%s\n", s->port, s->dir, s->dir, bin, b->dir);
	if (fig_ssh_write(s->dir, "sshd_config", text) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/host_key.pub", s->dir);
	if ((f = fopen(path, "r")) == NULL || fgets(pub, sizeof pub, f) == NULL)
		return f != NULL ? fclose(f), -1 : -1;
	fclose(f);
	*strchrnul(strchr(pub, ' ') + 1, ' ') = '\0';
	snprintf(text, sizeof text, "[127.0.0.1]:%d %s\n", s->port, pub);
	if (fig_ssh_write(s->dir, "known_hosts", text) != 0)
		return -1;
	snprintf(text, sizeof text, "Host *\n  UserKnownHostsFile %s/known_hosts"
	    "\n  GlobalKnownHostsFile /dev/null\n  IdentityFile %s/id_key\n"
	    "  IdentitiesOnly yes\n  LogLevel ERROR\n  ControlPath none\n",
	    s->dir, s->dir);
	if (fig_ssh_write(s->dir, "plain", text) != 0)
		return -1;
	snprintf(text, sizeof text, "Host *\n  UserKnownHostsFile %s/known_hosts"
	    "\n  GlobalKnownHostsFile /dev/null\n  IdentityFile %s/id_key\n"
	    "  IdentitiesOnly yes\n  LogLevel ERROR\n  ControlMaster auto\n"
	    "  ControlPath %s/cm-%%p\n  ControlPersist 300\n", s->dir, s->dir,
	    s->dir);
	return fig_ssh_write(s->dir, "cm", text);
}

/* Whether sshd's log says it listens; -1 if sshd has exited. */
static int
fig_ssh_listening(struct fig_ssh *s)
{
	char	 path[PATH_MAX], buf[8192];
	FILE	*f;
	size_t	 n;

	if (proc_wait(s->sshd, 0) != -1)
		return s->sshd = 0, -1;
	snprintf(path, sizeof path, "%s/sshd.log", s->dir);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, "Server listening on") != NULL;
}

/* Start sshd on a free port (again if it was taken meanwhile). */
static int
fig_ssh_sshd(struct bench *b, struct fig_ssh *s)
{
	char		 conf[PATH_MAX], log[PATH_MAX];
	const char	*argv[] = { FIG_SSH_SSHD, "-D", "-f", conf, "-E", log,
			    NULL };
	double		 end;
	int		 tries, up;

	snprintf(conf, sizeof conf, "%s/sshd_config", s->dir);
	snprintf(log, sizeof log, "%s/sshd.log", s->dir);
	for (tries = 0; tries < 5; tries++) {
		if ((s->port = fig_ssh_free_port()) == -1 ||
		    fig_ssh_configs(b, s) != 0)
			return -1;
		unlink(log);
		if ((s->sshd = proc_spawn(argv, NULL, -1, -1, -1)) == -1)
			return s->sshd = 0, -1;
		end = stat_now_ms() + FIG_SSH_START_MS;
		while ((up = fig_ssh_listening(s)) == 0 && stat_now_ms() < end)
			stat_sleep_ms(10);
		if (up == 1)
			return 0;
		if (up == 0)
			return -1;
	}
	return -1;
}

/* b's environment with DBGCTL_SSH=ssh -F DIR/config added (as *kv). */
static char **
fig_ssh_env(struct bench *b, struct fig_ssh *s, const char *config,
    char **kv)
{
	char	**envp;
	size_t	  n = 0, i;

	while (b->envp[n] != NULL)
		n++;
	if ((envp = calloc(n + 2, sizeof *envp)) == NULL ||
	    asprintf(kv, "DBGCTL_SSH=ssh -F %s/%s", s->dir, config) < 0)
		abort();
	for (i = 0; i < n; i++)
		envp[i] = b->envp[i];
	envp[n] = *kv;
	return envp;
}

/* The start of every ssh command line: ssh -F DIR/config -o BatchMode=yes -p PORT. */
static int
fig_ssh_argv(struct fig_ssh *s, const char *config, const char **argv,
    char *path, char *port)
{
	int n = 0;

	snprintf(path, PATH_MAX, "%s/%s", s->dir, config);
	snprintf(port, 8, "%d", s->port);
	argv[n++] = "ssh";
	argv[n++] = "-F";
	argv[n++] = path;
	argv[n++] = "-o";
	argv[n++] = "BatchMode=yes";
	argv[n++] = "-p";
	argv[n++] = port;
	return n;
}

/* The baseline's link: ssh -N -L FWD:SOCK, and a connection through it. */
static int
fig_ssh_forward(struct bench *b, struct fig_ssh *s)
{
	char		 path[PATH_MAX], port[8], spec[256];
	const char	*argv[16];
	double		 end = stat_now_ms() + FIG_SSH_START_MS;
	int		 n = fig_ssh_argv(s, "plain", argv, path, port);

	snprintf(s->fwd, sizeof s->fwd, "%s/fwd.sock", s->dir);
	snprintf(spec, sizeof spec, "%s:%s", s->fwd, b->sock);
	argv[n++] = "-N";
	argv[n++] = "-o";
	argv[n++] = "ExitOnForwardFailure=yes";
	argv[n++] = "-L";
	argv[n++] = spec;
	argv[n++] = s->dest;
	argv[n] = NULL;
	if ((s->fwd_pid = proc_spawn(argv, NULL, -1, -1, -1)) == -1)
		return s->fwd_pid = 0, -1;
	while (!rpc_listens(s->fwd) && stat_now_ms() < end)
		stat_sleep_ms(10);
	return rpc_open(&s->via_fwd, s->fwd);
}

/* The figure's link: ssh running dial-stdio, on a socketpair, as dbgctl does. */
static int
fig_ssh_dial(struct bench *b, struct fig_ssh *s)
{
	char		 path[PATH_MAX], port[8];
	const char	*argv[16];
	int		 n = fig_ssh_argv(s, "plain", argv, path, port), sv[2];

	snprintf(s->remote, sizeof s->remote, "%s dial-stdio -s %s --no-start",
	    s->dbgctl, b->sock);
	argv[n++] = s->dest;
	argv[n++] = "--";
	argv[n++] = s->remote;
	argv[n] = NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	s->dial_pid = proc_spawn(argv, NULL, sv[1], sv[1], -1);
	close(sv[1]);
	if (s->dial_pid == -1 || rpc_adopt(&s->via_ssh, sv[0]) != 0)
		return s->dial_pid = 0, -1;
	return rpc_call(&s->via_ssh, "ping", NULL) != NULL ? 0 : -1;
}

/* Start sshd, the forward and the dial; -1 with b->why. */
static int
fig_ssh_up(struct bench *b, struct fig_ssh *s)
{
	memset(s, 0, sizeof *s);
	s->via_fwd.fd = s->via_ssh.fd = -1;
	snprintf(s->dest, sizeof s->dest, "127.0.0.1");
	snprintf(s->dir, sizeof s->dir, "%s/ssh", b->dir);
	if (realpath(b->dbgctl, s->dbgctl) == NULL)
		return bench_fail(b, "%s: not found", b->dbgctl);
	if (mkdir(s->dir, 0700) != 0 || fig_ssh_keys(s) != 0)
		return bench_fail(b, "ssh-keygen failed");
	if (geteuid() == 0)
		(void)mkdir("/run/sshd", 0755);
	if (fig_ssh_sshd(b, s) != 0)
		return bench_fail(b, "sshd did not start (%s/sshd.log)",
		    s->dir);
	snprintf(s->url, sizeof s->url, "ssh://127.0.0.1:%d%s", s->port,
	    b->sock);
	s->envp_plain = fig_ssh_env(b, s, "plain", &s->env_plain);
	s->envp_cm = fig_ssh_env(b, s, "cm", &s->env_cm);
	if (fig_ssh_forward(b, s) != 0)
		return bench_fail(b, "ssh -L did not forward: %s",
		    s->via_fwd.err);
	if (fig_ssh_dial(b, s) != 0)
		return bench_fail(b, "ssh to dial-stdio failed: %s",
		    s->via_ssh.err);
	return 0;
}

/* Stop what fig_ssh_up started, the ControlMaster first. */
static void
fig_ssh_down(struct fig_ssh *s)
{
	pid_t		*pids[] = { &s->dial_pid, &s->fwd_pid, &s->sshd };
	char		 path[PATH_MAX], port[8];
	const char	*argv[16];
	size_t		 i;
	int		 n;

	if (s->envp_cm != NULL) {
		n = fig_ssh_argv(s, "cm", argv, path, port);
		argv[n++] = "-O";
		argv[n++] = "exit";
		argv[n++] = s->dest;
		argv[n] = NULL;
		(void)fig_ssh_exec(NULL, argv);
	}
	rpc_close(&s->via_ssh);
	rpc_close(&s->via_fwd);
	for (i = 0; i < sizeof pids / sizeof pids[0]; i++) {
		if (*pids[i] <= 0)
			continue;
		kill(*pids[i], SIGTERM);
		if (proc_wait(*pids[i], 5000) == -1) {
			kill(*pids[i], SIGKILL);
			proc_wait(*pids[i], -1);
		}
	}
	free(s->envp_plain);
	free(s->envp_cm);
	free(s->env_plain);
	free(s->env_cm);
}

/* One held-connection sample: a batch of pings and a launch --wait on each link. */
static int
fig_ssh_held(struct fig_ssh *s, struct samples *p50, struct samples *p99,
    struct samples *launch, int warm)
{
	struct rpc	*r[2] = { &s->via_ssh, &s->via_fwd };
	double		 a, c, t0;
	json_t		*res;
	int		 i;

	for (i = 0; i < 2; i++) {
		if (rpc_ping_pct(r[i], warm ? FIG_SSH_WARM : FIG_SSH_BATCH, &a,
		    &c) == -1)
			return -1;
		t0 = stat_now_ms();
		res = rpc_call(r[i], "launch", json_pack("{s:s, s:[s], s:b}",
		    "kind", "exec", "argv", "/bin/true", "wait", 1));
		if (res == NULL)
			return -1;
		json_decref(res);
		if (warm)
			continue;
		stat_add(&launch[i], stat_now_ms() - t0);
		stat_add(&p50[i], a);
		stat_add(&p99[i], c);
	}
	return 0;
}

/* `ssh host true` as a whole process, with the client config config. */
static double
fig_ssh_true_ms(struct fig_ssh *s, const char *config)
{
	char		 path[PATH_MAX], port[8];
	const char	*argv[16];
	int		 n = fig_ssh_argv(s, config, argv, path, port);

	argv[n++] = s->dest;
	argv[n++] = "true";
	argv[n] = NULL;
	return proc_time_ms(argv, NULL);
}

/* One whole-process sample: dbgctl list and ssh host true, plain and with ControlMaster. */
static int
fig_ssh_whole(struct bench *b, struct fig_ssh *s, struct samples *w)
{
	const char	*list[] = { b->dbgctl, "-H", s->url, "list", NULL };
	const char	*fwd[] = { b->dbgctl, "-s", s->fwd, "launch", "--kind",
			    "exec", "--wait", "--", "/bin/true", NULL };
	const char	*over[] = { b->dbgctl, "-H", s->url, "launch", "--kind",
			    "exec", "--wait", "--", "/bin/true", NULL };
	double		 v[6];
	int		 i;

	v[0] = proc_time_ms(list, s->envp_plain);
	v[1] = fig_ssh_true_ms(s, "plain");
	v[2] = proc_time_ms(list, s->envp_cm);
	v[3] = fig_ssh_true_ms(s, "cm");
	v[4] = proc_time_ms(over, s->envp_cm);
	v[5] = proc_time_ms(fwd, b->envp);
	for (i = 0; i < 6; i++) {
		if (!(v[i] >= 0))
			return -1;
		stat_add(&w[i], v[i]);
	}
	return 0;
}

/* Print the figure's rows. */
static void
fig_ssh_rows(struct samples *p50, struct samples *p99,
    struct samples *launch, struct samples *w)
{
	table_row("us", stat_median(&p50[0]), stat_median(&p50[1]),
	    TARGET(RATIO_MAX, 1.1), NULL, "ping RTT p50, held ssh:// "
	    "connection [vs the same over ssh -L of the socket]");
	table_row("us", stat_median(&p99[0]), stat_median(&p99[1]),
	    NO_TARGET, NULL, "ping RTT p99, held ssh:// connection [vs "
	    "over ssh -L]");
	table_row("ms", stat_median(&launch[0]), stat_median(&launch[1]),
	    TARGET(RATIO_MAX, 1.1), NULL, "launch exec --wait /bin/true, "
	    "held ssh:// connection [vs over ssh -L]");
	table_row("ms", stat_median(&w[4]), stat_median(&w[5]), NO_TARGET,
	    NULL, "dbgctl -H ssh:// launch --wait, whole, ControlMaster [vs "
	    "dbgctl -s through ssh -L]");
	table_row("ms", stat_median(&w[2]), stat_median(&w[3]), NO_TARGET,
	    NULL, "dbgctl -H ssh:// list, whole, ControlMaster [vs ssh host "
	    "true, ControlMaster]");
	table_row("ms", stat_median(&w[0]), stat_median(&w[1]), NO_TARGET,
	    NULL, "dbgctl -H ssh:// list, whole, no ControlMaster [vs ssh "
	    "host true]");
}

/* Figure: dbgctl over ssh:// beside ssh -L and ssh host true. */
int
fig_ssh_run(struct bench *b)
{
	struct samples	 p50[2] = { 0 }, p99[2] = { 0 }, launch[2] = { 0 };
	struct samples	 w[6] = { 0 };
	struct fig_ssh	 s;
	cpu_set_t	 saved;
	int		 run, rv;

	if (access(FIG_SSH_SSHD, X_OK) != 0 || !proc_exists("ssh")) {
		table_na(NO_TARGET, "openssh-server or -client is not "
		    "installed", "ssh:// figures");
		return 0;
	}
	/*
	 * One CPU for all, as for ping's RTT: sshd, ssh and dial-stdio
	 * inherit it from here. Cross-CPU wake-ups on a virtual machine
	 * would measure the hypervisor, once per process on the path.
	 */
	fig_ping_pin(b, &saved);
	if ((rv = fig_ssh_up(b, &s)) == 0)
		rv = fig_ssh_held(&s, p50, p99, launch, 1);
	for (run = 0; run < b->runs && rv == 0; run++) {
		if (fig_ssh_held(&s, p50, p99, launch, 0) != 0)
			rv = bench_fail(b, "over ssh: %s / %s", s.via_ssh.err,
			    s.via_fwd.err);
		else if (fig_ssh_whole(b, &s, w) != 0)
			rv = bench_fail(b, "a whole dbgctl or ssh failed");
	}
	fig_ssh_down(&s);
	fig_ping_unpin(b, &saved);
	if (rv == 0)
		fig_ssh_rows(p50, p99, launch, w);
	for (run = 0; run < 6; run++)
		stat_free(&w[run]);
	for (run = 0; run < 2; run++) {
		stat_free(&p50[run]);
		stat_free(&p99[run]);
		stat_free(&launch[run]);
	}
	return rv;
}
