/*
 * A real OpenSSH server of the test's own: /usr/sbin/sshd with its own
 * sshd_config, host key and authorized key in the test dir, on a loopback
 * port; the client side's config (known_hosts, identity) in DBGCTL_SSH for
 * every child. The far side sees the build's dbgctl on its PATH and the
 * test's marker, so the teardown finds what ssh started there.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where Debian's sshd is. */
#define H_SSHD		"/usr/sbin/sshd"

/* Times sshd is started again when the port picked was taken meanwhile. */
#define H_SSH_TRIES	5

/* The sshd of this test (one Criterion worker), stopped by h_ssh_teardown. */
static struct h_ssh h_ssh_now;

/* Write text to the file at path (asserted). */
static void
h_ssh_write(const char *path, const char *text, mode_t mode)
{
	FILE *f;

	f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

/* Make a key pair at path with ssh-keygen (asserted). */
static void
h_ssh_keygen(const char *path)
{
	struct h_res r;
	char keygen[PATH_MAX];

	cr_assert_not_null(h_which("ssh-keygen", keygen, sizeof keygen),
	    "ssh-keygen is not on PATH (openssh-client)");
	h_run(&r, H_RUN_BOUND, H_ARGS(keygen, "-q", "-t", "ed25519", "-N", "",
	    "-C", "dbgctl-test", "-f", path));
	cr_assert_eq(r.code, 0, "ssh-keygen %s: exit %d: %s", path, r.code,
	    r.err);
	h_run_free(&r);
}

/* A loopback port free now (the kernel's pick; sshd takes no port 0). */
static int
h_ssh_free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof sa;
	int fd, port;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(fd != -1 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0
	    && getsockname(fd, (struct sockaddr *)&sa, &len) == 0,
	    "a free port: %s", strerror(errno));
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* The PATH the far side gets by default: the build's client, then the system's. */
static void
h_ssh_default_path(char *buf, size_t len)
{
	char dir[PATH_MAX - 32];

	snprintf(dir, sizeof dir, "%s", H->dbgctl);
	/* The caller's buffer holds a path and the system's two. */
	*strrchr(dir, '/') = '\0';
	snprintf(buf, len, "%s:/usr/bin:/bin", dir);
}

/* Write sshd_config for port, the far side's PATH path. */
static void
h_ssh_server_config(const struct h_ssh *s, int port, const char *path)
{
	char text[8192], file[PATH_MAX];

	snprintf(text, sizeof text,
	    "ListenAddress 127.0.0.1:%d\n"
	    "HostKey %s/host_key\n"
	    "AuthorizedKeysFile %s/authorized_keys\n"
	    "PidFile none\n"
	    "StrictModes no\n"
	    "UsePAM no\n"
	    "PasswordAuthentication no\n"
	    "KbdInteractiveAuthentication no\n"
	    "PermitRootLogin prohibit-password\n"
	    "AllowStreamLocalForwarding yes\n"
	    "MaxSessions 100\n"
	    "MaxStartups 100:30:200\n"
	    "LogLevel INFO\n"
	    /* HOME too: no shell rc file of the user's slows or changes it. */
	    "SetEnv PATH=%s HOME=%s XDG_RUNTIME_DIR=%s XDG_STATE_HOME=%s/state "
	    "DBGCTL_DAEMON=%s %s\n",
	    port, s->dir, s->dir, path, H->dir, H->dir, H->dir, H->dbgctld,
	    H->marker);
	snprintf(file, sizeof file, "%s/sshd_config", s->dir);
	h_ssh_write(file, text, 0600);
}

/* Write the client's config and known_hosts for port; DBGCTL_SSH names it. */
static void
h_ssh_client_config(struct h_ssh *s, int port)
{
	char text[4096], file[PATH_MAX], *pub;

	snprintf(file, sizeof file, "%s/host_key.pub", s->dir);
	pub = h_read_file(file, NULL);
	cr_assert_not_null(pub, "%s", file);
	pub[strcspn(pub, " ")] = ' ';
	*strchrnul(strchr(pub, ' ') + 1, ' ') = '\0';
	snprintf(text, sizeof text, "[127.0.0.1]:%d %s\n", port, pub);
	free(pub);
	snprintf(file, sizeof file, "%s/known_hosts", s->dir);
	h_ssh_write(file, text, 0600);
	snprintf(text, sizeof text,
	    "Host *\n"
	    "  UserKnownHostsFile %s/known_hosts\n"
	    "  GlobalKnownHostsFile /dev/null\n"
	    "  StrictHostKeyChecking yes\n"
	    "  IdentityFile %s/id_key\n"
	    "  IdentitiesOnly yes\n"
	    "  ControlPath none\n"
	    "  LogLevel ERROR\n", s->dir, s->dir);
	snprintf(s->config, sizeof s->config, "%s/ssh_config", s->dir);
	h_ssh_write(s->config, text, 0600);
	snprintf(text, sizeof text, "DBGCTL_SSH=ssh -F %s", s->config);
	h_ctx_env_add(text);
}

/* Whether sshd's log says it listens. */
static bool
h_ssh_listening(void *arg)
{
	struct h_ssh *s = arg;
	char file[PATH_MAX], *log;
	bool yes;
	int st;

	if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
		s->pid = 0;
		return true;
	}
	snprintf(file, sizeof file, "%s/sshd.log", s->dir);
	log = h_read_file(file, NULL);
	yes = log != NULL && strstr(log, "Server listening on") != NULL;
	free(log);
	return yes;
}

/* Start sshd on port; true once it listens, false if it exited. */
static bool
h_ssh_run(struct h_ssh *s)
{
	char conf[PATH_MAX], log[PATH_MAX];
	struct h_proc p;

	snprintf(conf, sizeof conf, "%s/sshd_config", s->dir);
	snprintf(log, sizeof log, "%s/sshd.log", s->dir);
	unlink(log);
	cr_assert_eq(h_run_start(&p, H_ARGS(H_SSHD, "-D", "-f", conf, "-E",
	    log)), 0, "start sshd");
	close(p.outfd);
	close(p.errfd);
	s->pid = p.pid;
	cr_assert(h_wait_for(h_ssh_listening, s, H_WAIT_BOUND),
	    "sshd did not listen within %d ms", H_WAIT_BOUND);
	return s->pid > 0;
}

/*
 * Start the test's sshd, the far side's PATH path (NULL: the build's
 * client first); skips the test when sshd is not installed (fails it
 * under DBGCTL_CI=1). The address
 * of the test's socket through it into s->url.
 */
struct h_ssh *
h_ssh_start(const char *path)
{
	struct h_ssh *s = &h_ssh_now;
	char file[PATH_MAX], def[PATH_MAX + 32], *log;
	int tries;

	/* In CI (DBGCTL_CI=1), what scripts/setup installs must be there. */
	if (access(H_SSHD, X_OK) != 0 && getenv("DBGCTL_CI") != NULL &&
	    strcmp(getenv("DBGCTL_CI"), "1") == 0)
		cr_assert_fail("DBGCTL_CI=1: %s is not installed "
		    "(openssh-server)", H_SSHD);
	if (access(H_SSHD, X_OK) != 0)
		cr_skip_test("%s is not installed (openssh-server)", H_SSHD);
	memset(s, 0, sizeof *s);
	snprintf(s->dir, sizeof s->dir, "%s/ssh", H->dir);
	cr_assert_eq(mkdir(s->dir, 0700), 0, "%s: %s", s->dir,
	    strerror(errno));
	/* Privilege separation wants its empty directory when run as root. */
	if (geteuid() == 0 && mkdir("/run/sshd", 0755) != 0)
		cr_assert_eq(errno, EEXIST, "/run/sshd: %s", strerror(errno));
	snprintf(file, sizeof file, "%s/host_key", s->dir);
	h_ssh_keygen(file);
	snprintf(file, sizeof file, "%s/id_key", s->dir);
	h_ssh_keygen(file);
	snprintf(file, sizeof file, "%s/id_key.pub", s->dir);
	log = h_read_file(file, NULL);
	snprintf(file, sizeof file, "%s/authorized_keys", s->dir);
	h_ssh_write(file, log, 0600);
	free(log);
	h_ssh_default_path(def, sizeof def);
	for (tries = 0; tries < H_SSH_TRIES; tries++) {
		s->port = h_ssh_free_port();
		h_ssh_server_config(s, s->port, path != NULL ? path : def);
		if (h_ssh_run(s))
			break;
	}
	snprintf(file, sizeof file, "%s/sshd.log", s->dir);
	log = h_read_file(file, NULL);
	cr_assert(s->pid > 0, "sshd would not start: %s", log ? log : "");
	free(log);
	h_ssh_client_config(s, s->port);
	snprintf(s->url, sizeof s->url, "ssh://127.0.0.1:%d%s", s->port,
	    H->sock);
	return s;
}

/* Give every client started after this the test's daemon through ssh. */
void
h_ssh_use(const struct h_ssh *s)
{
	char kv[sizeof s->url + 16];

	snprintf(kv, sizeof kv, "DBGCTL_HOST=%s", s->url);
	h_ctx_env_add(kv);
}

/* Stop the test's sshd, if it runs, and reap it. */
void
h_ssh_stop(void)
{
	struct h_ssh *s = &h_ssh_now;

	if (s->pid <= 0)
		return;
	kill(s->pid, SIGTERM);
	(void)h_run_reap(s->pid, 10000);
	s->pid = 0;
}

/*
 * Criterion .fini: stop sshd, then the daemon and all of the test's, what
 * ssh started on the far side too (it carries the marker).
 */
void
h_ssh_teardown(void)
{
	h_ssh_stop();
	h_ctx_teardown();
}
