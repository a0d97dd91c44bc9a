/*
 * Rig hosts over SSH, as Docker's ssh:// does: ssh://[user@]host[:port][/socket]
 * runs `dbgctl dial-stdio` on the host through ssh, and the connection is
 * a socketpair whose other end is ssh's stdin and stdout. SSH
 * authenticates; ssh never prompts (BatchMode), and when it fails its own
 * words, kept in a memfd as its stderr, say why.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "dbgctl.h"

extern char **environ;

/* The parts of an ssh:// address. */
struct ssh_url {
	char	user[128];
	char	host[256];
	char	port[8];
	char	path[PATH_MAX];
};

/* Most words of $DBGCTL_SSH, and of the whole ssh command line. */
#define SSH_WORDS	32
#define SSH_ARGV	(SSH_WORDS + 8)

/* How long ssh is given to exit once its connection is closed (ms). */
#define SSH_EXIT_MS	5000

/* The most of ssh's stderr a message quotes: bytes, and last lines. */
#define SSH_SAID_MAX	1024
#define SSH_SAID_LINES	3

/* Whether addr is an ssh:// address. */
int
ssh_is_url(const char *addr)
{
	return addr != NULL && strncmp(addr, "ssh://", 6) == 0;
}

/* Put why an address is bad into cause; -1, to return. */
static int __attribute__((format(printf, 3, 4)))
ssh_bad(char *cause, size_t len, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(cause, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Whether s is fit for ssh's command line: no option, blank or control. */
static int
ssh_word_ok(const char *s)
{
	if (*s == '-')
		return 0;
	for (; *s != '\0'; s++) {
		if (isspace((unsigned char)*s) || iscntrl((unsigned char)*s))
			return 0;
	}
	return 1;
}

/* Split [user@]host[:port] into u; -1 with the cause. */
static int
ssh_parse_authority(const char *auth, size_t len, struct ssh_url *u,
    char *cause, size_t clen)
{
	char		 buf[512], *at, *host, *colon, *end;
	long		 port;

	if (len >= sizeof buf)
		return ssh_bad(cause, clen, "address too long");
	memcpy(buf, auth, len);
	buf[len] = '\0';
	host = buf;
	if ((at = strrchr(buf, '@')) != NULL) {
		*at = '\0';
		host = at + 1;
		if (*buf == '\0' || strlcpy(u->user, buf, sizeof u->user) >=
		    sizeof u->user || !ssh_word_ok(u->user))
			return ssh_bad(cause, clen, "bad user name");
	}
	colon = *host == '[' ? strchr(host, ']') : strrchr(host, ':');
	if (*host == '[') {
		if (colon == NULL)
			return ssh_bad(cause, clen, "no ] after [HOST");
		*colon++ = '\0';
		host++;
		if (*colon != '\0' && *colon != ':')
			return ssh_bad(cause, clen, "junk after [HOST]");
		if (*colon == '\0')
			colon = NULL;
	}
	if (colon != NULL) {
		*colon++ = '\0';
		port = strtol(colon, &end, 10);
		if (*colon == '\0' || *end != '\0' || !isdigit((unsigned char)
		    *colon) || port < 1 || port > 65535)
			return ssh_bad(cause, clen, "bad port: %s", colon);
		snprintf(u->port, sizeof u->port, "%ld", port);
	}
	if (*host == '\0')
		return ssh_bad(cause, clen, "no host");
	if (strlcpy(u->host, host, sizeof u->host) >= sizeof u->host ||
	    !ssh_word_ok(u->host))
		return ssh_bad(cause, clen, "bad host name");
	return 0;
}

/*
 * Parse ssh://[user@]host[:port][/path/to/socket] into u; -1 with the
 * cause. A path names the socket on the host; none is its default one.
 */
static int
ssh_parse(const char *url, struct ssh_url *u, char *cause, size_t clen)
{
	const char	*auth, *slash;
	const char	*p;

	memset(u, 0, sizeof *u);
	if (!ssh_is_url(url))
		return ssh_bad(cause, clen, "not ssh://");
	auth = url + 6;
	slash = strchr(auth, '/');
	if (ssh_parse_authority(auth, slash != NULL ? (size_t)(slash - auth) :
	    strlen(auth), u, cause, clen) != 0)
		return -1;
	if (slash == NULL || slash[1] == '\0')
		return 0;
	for (p = slash; *p != '\0'; p++) {
		if (iscntrl((unsigned char)*p))
			return ssh_bad(cause, clen, "control character in "
			    "the socket path");
	}
	if (strlcpy(u->path, slash, sizeof u->path) >= sizeof u->path)
		return ssh_bad(cause, clen, "socket path too long");
	return 0;
}

/* Check an ssh:// address before anything is run: 0, or -1 with the cause. */
int
ssh_check(const char *url, char *cause, size_t len)
{
	struct ssh_url	u;

	return ssh_parse(url, &u, cause, len);
}

/* Append s to the remote command in buf, quoted for the host's shell. */
static void
ssh_quote(char *buf, size_t len, const char *s)
{
	strlcat(buf, " '", len);
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			strlcat(buf, "'\\''", len);
		else
			strlcat(buf, (char[]){ *s, '\0' }, len);
	}
	strlcat(buf, "'", len);
}

/*
 * The command line of ssh, into argv (words pointing into words and
 * remote): $DBGCTL_SSH (default ssh) split at blanks, then -o BatchMode=yes,
 * the port and the host, and the remote command: $DBGCTL_SSH_COMMAND
 * (default `dbgctl dial-stdio`), -s PATH and --no-start after it.
 */
static void
ssh_argv(const struct ssh_url *u, int autostart, char *words, char *remote,
    size_t rlen, char *dest, size_t dlen, char **argv)
{
	const char	*cmd = getenv("DBGCTL_SSH_COMMAND");
	char		*w, *save = NULL;
	int		 n = 0;

	for (w = strtok_r(words, " \t", &save); w != NULL && n < SSH_WORDS;
	    w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	if (n == 0)
		argv[n++] = (char *)"ssh";
	argv[n++] = (char *)"-o";
	argv[n++] = (char *)"BatchMode=yes";
	if (*u->port != '\0') {
		argv[n++] = (char *)"-p";
		argv[n++] = (char *)u->port;
	}
	snprintf(dest, dlen, "%s%s%s", u->user, *u->user != '\0' ? "@" : "",
	    u->host);
	argv[n++] = dest;
	argv[n++] = (char *)"--";
	strlcpy(remote, cmd != NULL && *cmd != '\0' ? cmd :
	    "dbgctl dial-stdio", rlen);
	if (*u->path != '\0') {
		strlcat(remote, " -s", rlen);
		ssh_quote(remote, rlen, u->path);
	}
	if (!autostart)
		strlcat(remote, " --no-start", rlen);
	argv[n++] = remote;
	argv[n] = NULL;
}

/* Start ssh on the far end of a socketpair; the near end into c->fd. */
static void
ssh_spawn(struct client *c, const char *url, char **argv)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	int				 sv[2], e;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		client_fatal("socketpair: %s", strerror(errno));
	if ((c->ssh_err = memfd_create("dbgctl-ssh", MFD_CLOEXEC)) == -1)
		client_fatal("memfd_create: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, sv[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, c->ssh_err, STDERR_FILENO);
	posix_spawnattr_init(&attr);
	/*
	 * A process group of its own: the terminal's Ctrl-C is the client's
	 * (dbgctl mi passes it on as an interrupt), not a kill of the link.
	 */
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	e = posix_spawnp(&c->ssh_pid, argv[0], &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(sv[1]);
	if (e != 0) {
		close(sv[0]);
		c->ssh_pid = 0;
		client_fatal("%s: cannot run %s: %s (DBGCTL_SSH names the ssh "
		    "program)", url, argv[0], strerror(e));
	}
	c->fd = sv[0];
}

/*
 * What ssh wrote on its stderr: its last SSH_SAID_LINES lines but the
 * banners of @s, joined by "; ", into buf.
 */
static void
ssh_said(const struct client *c, char *buf, size_t len)
{
	char	raw[16384], *line, *save = NULL, *lines[SSH_SAID_LINES];
	ssize_t	n;
	int	k = 0, i;

	*buf = '\0';
	n = pread(c->ssh_err, raw, sizeof raw - 1, 0);
	raw[n > 0 ? n : 0] = '\0';
	for (line = strtok_r(raw, "\r\n", &save); line != NULL;
	    line = strtok_r(NULL, "\r\n", &save)) {
		if (*line == '@')
			continue;
		if (k == SSH_SAID_LINES)
			memmove(lines, lines + 1, --k * sizeof *lines);
		lines[k++] = line;
	}
	for (i = 0; i < k; i++) {
		if (i > 0)
			strlcat(buf, "; ", len);
		strlcat(buf, lines[i], len);
	}
}

/* Whether ssh said any of the words (a NULL-terminated list). */
static int
ssh_said_any(const char *said, const char *const *words)
{
	for (; *words != NULL; words++) {
		if (strcasestr(said, *words) != NULL)
			return 1;
	}
	return 0;
}

/* Why the link failed, in words, from ssh's exit status and stderr. */
static void
ssh_explain(int status, const char *said, char *buf, size_t len)
{
	static const char *const hostkey[] = { "host key", "IDENTIFICATION "
	    "HAS CHANGED", NULL };
	static const char *const auth[] = { "Permission denied",
	    "Too many authentication failures", NULL };
	static const char *const unreachable[] = { "Connection refused",
	    "Could not resolve", "No route to host", "timed out",
	    "Network is unreachable", "Connection closed by",
	    "Connection reset", "kex_exchange_identification", NULL };
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;

	if (WIFSIGNALED(status))
		snprintf(buf, len, "ssh was killed by signal %d",
		    WTERMSIG(status));
	else if (code == 127)
		snprintf(buf, len, "dbgctl is not installed on the host, or "
		    "not on the PATH ssh gives it (set DBGCTL_SSH_COMMAND to "
		    "its path there)");
	else if (code == 126)
		snprintf(buf, len, "the host cannot run dbgctl");
	else if (code == 255 && ssh_said_any(said, hostkey))
		snprintf(buf, len, "the host key is unknown or has changed: "
		    "check it and add it to known_hosts (ssh-keyscan, or one "
		    "ssh by hand); dbgctl never turns the check off");
	else if (code == 255 && ssh_said_any(said, auth))
		snprintf(buf, len, "authentication refused: no key the host "
		    "accepts (ssh runs with BatchMode=yes and never asks for a "
		    "password: use ssh-agent or ~/.ssh/config)");
	else if (code == 255 && ssh_said_any(said, unreachable))
		snprintf(buf, len, "host unreachable");
	else if (code == 255)
		snprintf(buf, len, "ssh failed (exit 255)");
	else if (code == 0)
		snprintf(buf, len, "the daemon there closed the connection");
	else
		snprintf(buf, len, "dbgctl dial-stdio on the host failed "
		    "(exit %d)", code);
}

/*
 * Wait up to SSH_EXIT_MS for ssh to exit: on a pidfd, told at once, or
 * where the kernel has none, looking every millisecond. Whether it did.
 */
static int
ssh_exited(pid_t pid)
{
	struct timespec	ts = { 0, 1000000L };
	siginfo_t	si;
	int		fd, waited, rv;

	if ((fd = (int)syscall(SYS_pidfd_open, pid, 0)) != -1) {
		while ((rv = poll(&(struct pollfd){ fd, POLLIN, 0 }, 1,
		    SSH_EXIT_MS)) == -1 && errno == EINTR)
			continue;
		close(fd);
		return rv == 1;
	}
	for (waited = 0; waited < SSH_EXIT_MS; waited++) {
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == pid)
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Reap ssh within SSH_EXIT_MS, killing it after that; its wait status. */
static int
ssh_reap(struct client *c)
{
	int	status = 0;

	if (!ssh_exited(c->ssh_pid))
		kill(c->ssh_pid, SIGKILL);
	while (waitpid(c->ssh_pid, &status, 0) == -1 && errno == EINTR)
		continue;
	c->ssh_pid = 0;
	return status;
}

/* Close the connection and reap ssh; its wait status. */
static int
ssh_hangup(struct client *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	return ssh_reap(c);
}

/* Say why the link failed, from ssh's wait status and words; exit 3. */
static void __attribute__((noreturn))
ssh_fail(struct client *c, int status)
{
	char	said[SSH_SAID_MAX], why[512];

	ssh_said(c, said, sizeof said);
	ssh_explain(status, said, why, sizeof why);
	client_fatal("%s: %s%s%s", c->ssh_url, why, *said != '\0' ? ": " : "",
	    said);
}

/*
 * The connection over ssh is lost (or never came up): close it, wait for
 * ssh to exit and say why; exit 3.
 */
void
ssh_lost(struct client *c)
{
	ssh_fail(c, ssh_hangup(c));
}

/*
 * The connection over ssh reached its end (a pipe's, an attach's): reap
 * ssh; unless it exited 0, the far side having closed cleanly, say why
 * and exit 3, as for a lost connection.
 */
void
ssh_end(struct client *c)
{
	int	status;

	if (c->ssh_pid <= 0)
		return;
	status = ssh_hangup(c);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		ssh_fail(c, status);
}

/*
 * Say hello over the new link: the daemon there must speak this client's
 * protocol; its version may differ (hello's features tell what it has).
 */
static void
ssh_hello(struct client *c)
{
	json_t		*r;
	json_int_t	 proto;

	if ((r = client_call(c, "hello", json_object())) == NULL)
		exit(client_error(c));
	proto = json_integer_value(json_object_get(r, "protocol"));
	if (proto != CLIENT_PROTOCOL)
		client_fatal("%s: the daemon there (dbgctl %s) speaks protocol "
		    "%lld, this dbgctl (%s) protocol %d", c->ssh_url,
		    json_string_value(json_object_get(r, "version")) != NULL ?
		    json_string_value(json_object_get(r, "version")) : "?",
		    (long long)proto, DBGCTL_VERSION, CLIENT_PROTOCOL);
	json_decref(r);
}

/*
 * Connect over ssh to the daemon at url (ssh://...): run ssh, then hello.
 * Exits with the cause if ssh cannot run, fails, or the daemon there will
 * not do.
 */
void
ssh_open(struct client *c, const char *url)
{
	struct ssh_url	 u;
	const char	*env = getenv("DBGCTL_SSH");
	char		 cause[256], words[1024], remote[PATH_MAX + 1024];
	char		 dest[512], *argv[SSH_ARGV];

	if (ssh_parse(url, &u, cause, sizeof cause) != 0)
		client_fatal("%s: %s", url, cause);
	strlcpy(c->ssh_url, url, sizeof c->ssh_url);
	strlcpy(words, env != NULL ? env : "", sizeof words);
	ssh_argv(&u, c->autostart, words, remote, sizeof remote, dest,
	    sizeof dest, argv);
	ssh_spawn(c, url, argv);
	ssh_hello(c);
}

/* Let go of ssh once its connection is closed: reap it (bounded). */
void
ssh_close(struct client *c)
{
	if (c->ssh_pid > 0)
		(void)ssh_reap(c);
	if (c->ssh_err != -1)
		close(c->ssh_err);
	c->ssh_err = -1;
}
