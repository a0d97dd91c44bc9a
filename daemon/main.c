/* dbgctld: start-up, detaching, and the loop. */
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libutil.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "sdnotify.h"
#include "cgroup.h"
#include "activate.h"
#include "adopt.h"
#include "listener.h"
#include "paths.h"
#include "peer.h"
#include "replace.h"
#include "request.h"

/* The pid file, locked while the daemon runs. */
static struct pidfh	*main_pidfh;

/* Bytes a bundle's files may have together, unless DBGCTLD_BUNDLE_MAX says. */
#define BUNDLE_MAX_DEFAULT (64ULL * 1024 * 1024)
/* Ended sessions kept in the table unless DBGCTLD_KEEP_ENDED says otherwise. */
#define KEEP_ENDED_DEFAULT 1000
/* A transcript's log size, unless DBGCTLD_TRANSCRIPT_MAX says. */
#define TRANSCRIPT_MAX_DEFAULT (1024ULL * 1024 * 1024)
/* Seconds an ended session is kept, unless DBGCTLD_KEEP_ENDED_SECONDS says. */
#define KEEP_ENDED_SECONDS_DEFAULT 86400
/* The daemon log's size when it is turned over, unless DBGCTLD_LOG_MAX. */
#define LOG_MAX_DEFAULT (8 * 1024 * 1024)

/* Print how to run the daemon. */
static void
main_usage(FILE *f)
{
	fprintf(f, "usage: dbgctld [--foreground] [--listen unix:PATH | "
	    "tcp:HOST:PORT]... [--token-file F]\n");
}

/*
 * The next session id: past every session file already in the state
 * directory (N.log, N.target.log, N.core, ...), so that none is reused.
 */
static unsigned long
main_scan_ids(const char *dir)
{
	struct dirent	*de;
	DIR		*d;
	unsigned long	 id, max = 0;
	char		*end;

	if ((d = opendir(dir)) == NULL)
		return 1;
	while ((de = readdir(d)) != NULL) {
		errno = 0;
		id = strtoul(de->d_name, &end, 10);
		if (errno == 0 && end != de->d_name && *end == '.' && id > max)
			max = id;
	}
	closedir(d);
	return max + 1;
}

/*
 * Fork into the background. The parent exits 0 once the child reports that
 * it listens (byte on the pipe), 1 if the child died first.
 */
static int
main_detach(void)
{
	int	fds[2];
	char	c;
	ssize_t	n;
	pid_t	pid;

	if (pipe2(fds, O_CLOEXEC) != 0)
		log_fatal("pipe: %s", strerror(errno));
	if ((pid = fork()) == -1) {
		fprintf(stderr, "dbgctld: fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid > 0) {
		close(fds[1]);
		do
			n = read(fds[0], &c, 1);
		while (n < 0 && errno == EINTR);
		_exit(n == 1 ? 0 : 1);
	}
	close(fds[0]);
	setsid();
	return fds[1];
}

/*
 * Put stdin on /dev/null and stdout and stderr on the daemon log, turned
 * over at max bytes.
 */
static void
main_redirect(off_t max)
{
	char	path[PATH_MAX + 16];
	int	fd;

	snprintf(path, sizeof path, "%s/dbgctld.log", dmn.state_dir);
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, 0);
		if (fd > 2)
			close(fd);
	}
	if (log_file(path, max) == 0)
		return;
	if ((fd = open("/dev/null", O_WRONLY)) != -1) {
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

/* What the command line asks for. */
struct main_opts {
	bool		 foreground;
	const char	*unix_path;	/* --listen unix:PATH */
	const char	*tcp[8];	/* --listen tcp:HOST:PORT */
	size_t		 ntcp;
	const char	*token_file;
	struct activate	 act;		/* sockets a service manager passed */
};

/* Take one --listen address; exits on a bad one. */
static void
main_listen(struct main_opts *o, const char *arg)
{
	if (strncmp(arg, "unix:", 5) == 0 && arg[5] != '\0') {
		o->unix_path = arg + 5;
		return;
	}
	if (strncmp(arg, "tcp:", 4) == 0 && strchr(arg + 4, ':') != NULL &&
	    o->ntcp < sizeof o->tcp / sizeof *o->tcp) {
		o->tcp[o->ntcp++] = arg + 4;
		return;
	}
	fprintf(stderr, "dbgctld: cannot listen on \"%s\": want unix:PATH "
	    "or tcp:HOST:PORT (at most 8)\n", arg);
	exit(2);
}

/*
 * Check the command line against the sockets passed by socket activation:
 * an activated TCP socket needs the token as --listen tcp does, and an
 * activated Unix socket is the daemon's socket, so --listen unix: would
 * name a second one.
 */
static void
main_activated_options(const struct main_opts *o)
{
	char what[160];

	if (activate_tcp(&o->act, what, sizeof what) &&
	    o->token_file == NULL) {
		fprintf(stderr, "dbgctld: the socket-activated TCP listener %s "
		    "needs --token-file\n", what);
		exit(2);
	}
	if (activate_unix(&o->act) != NULL && o->unix_path != NULL &&
	    strcmp(o->unix_path, activate_unix(&o->act)) != 0) {
		fprintf(stderr, "dbgctld: --listen unix:%s, but the socket "
		    "passed by socket activation is %s: give one of them\n",
		    o->unix_path, activate_unix(&o->act));
		exit(2);
	}
}

/*
 * Take the sockets a service manager passed (LISTEN_FDS), before the
 * inherited fds are closed; exits 1 with the reason if they are not
 * listening stream sockets.
 */
static void
main_activate(struct main_opts *o)
{
	char err[PATH_MAX + 256];

	if (activate_take(&o->act, err, sizeof err) >= 0) {
		dmn.activated = activate_managed(&o->act);
		return;
	}
	fprintf(stderr, "dbgctld: %s\n", err);
	exit(1);
}

/* Parse the command line; exits on bad usage. */
static void
main_options(int argc, char **argv, struct main_opts *o)
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "listen", required_argument, NULL, 'l' },
		{ "token-file", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "fl:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			o->foreground = true;
			break;
		case 'l':
			main_listen(o, optarg);
			break;
		case 't':
			o->token_file = optarg;
			break;
		case 'h':
			main_usage(stdout);
			exit(0);
		case 'V':
			printf("dbgctld %s\n", DBGCTL_VERSION);
			exit(0);
		default:
			main_usage(stderr);
			exit(2);
		}
	}
	if (optind != argc) {
		main_usage(stderr);
		exit(2);
	}
	if (o->ntcp > 0 && o->token_file == NULL) {
		fprintf(stderr, "dbgctld: a tcp listener needs --token-file\n");
		exit(2);
	}
	main_activated_options(o);
}

/* Load the token TCP clients present; exits with the reason. */
static void
main_token(const struct main_opts *o)
{
	char err[PATH_MAX + 128];

	if (o->token_file == NULL ||
	    peer_token_load(o->token_file, err, sizeof err) == 0)
		return;
	fprintf(stderr, "dbgctld: %s\n", err);
	exit(1);
}

/* Open the TCP listeners; exits with the reason (the starter sees it). */
static void
main_tcp(const struct main_opts *o)
{
	char	err[PATH_MAX + 128];
	size_t	i;

	for (i = 0; i < o->ntcp; i++) {
		if (listener_tcp(o->tcp[i], &request_rpc_mode, err,
		    sizeof err) == 0)
			continue;
		fprintf(stderr, "dbgctld: %s\n", err);
		pidfile_remove(main_pidfh);
		exit(1);
	}
}

/*
 * Listen: on --listen's TCP addresses, on the sockets passed by socket
 * activation, and on the Unix socket unless one of those is it; exits 1
 * with the reason. The Unix socket comes last because a client takes its
 * accepting a connection as the daemon being up, TCP included.
 */
static void
main_listen_all(const struct main_opts *o)
{
	char err[PATH_MAX + 256];

	main_tcp(o);
	if ((activate_unix(&o->act) == NULL &&
	    listener_unix(dmn.sock_path, &request_rpc_mode, err,
	    sizeof err) != 0) ||
	    activate_listen(&o->act, &request_rpc_mode, err, sizeof err) != 0) {
		fprintf(stderr, "dbgctld: %s\n", err);
		pidfile_remove(main_pidfh);
		exit(1);
	}
}

/*
 * Raise the soft fd limit to the hard one, so that many clients can
 * connect; programs get the limit the daemon was started with.
 */
static void
main_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	dmn.nofile_orig = dmn.nofile = rl.rlim_cur;
	if (rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		dmn.nofile = rl.rlim_cur;
}

/* Refuse a path that is not UTF-8: it could not be told to clients in JSON. */
static void
main_utf8(const char *what, const char *path)
{
	json_t *v;

	if ((v = json_string(path)) != NULL) {
		json_decref(v);
		return;
	}
	fprintf(stderr, "dbgctld: the %s path is not valid UTF-8 (check "
	    "XDG_RUNTIME_DIR, XDG_STATE_HOME, HOME and --listen)\n", what);
	exit(1);
}

/* Create the state directory, and its parents up to base/daemons, checked. */
static void
main_state_dirs(void)
{
	char	dir[PATH_MAX + 16], up[PATH_MAX + 16], err[PATH_MAX + 128];

	snprintf(dir, sizeof dir, "%s", dmn.state_dir);
	if (strstr(dir, "/daemons/") != NULL) {
		paths_dirname(dir, up, sizeof up);
		paths_dirname(up, dir, sizeof dir);
		if (paths_secure_dir(dir, err, sizeof err) != 0 ||
		    paths_secure_dir(up, err, sizeof err) != 0)
			goto fail;
	}
	/* Session logs are written here: checked as the socket's directory is. */
	snprintf(dir, sizeof dir, "%s/sessions", dmn.state_dir);
	if (paths_secure_dir(dmn.state_dir, err, sizeof err) != 0 ||
	    paths_secure_dir(dir, err, sizeof err) != 0)
		goto fail;
	return;
fail:
	fprintf(stderr, "dbgctld: %s\n", err);
	exit(1);
}

/* Resolve and prepare the socket directory, the state and the keeper. */
static void
main_paths(const char *listen)
{
	char	dir[PATH_MAX + 16], err[PATH_MAX + 128];

	if (paths_socket(listen, dmn.sock_path, sizeof dmn.sock_path) != 0 ||
	    paths_dirname(dmn.sock_path, dir, sizeof dir) != 0) {
		fprintf(stderr, "dbgctld: path too long\n");
		exit(1);
	}
	main_utf8("socket", dmn.sock_path);
	if (paths_secure_dir(dir, err, sizeof err) != 0) {
		fprintf(stderr, "dbgctld: %s\n", err);
		exit(1);
	}
	/* Named by the socket's real path: its directory is there now. */
	if (paths_state_dir(dmn.sock_path, dmn.state_dir,
	    sizeof dmn.state_dir) != 0) {
		fprintf(stderr, "dbgctld: path too long\n");
		exit(1);
	}
	main_utf8("state directory", dmn.state_dir);
	main_state_dirs();
	paths_sibling("dbgctl-keeper", DBGCTL_LIBEXECDIR, dmn.keeper_path,
	    sizeof dmn.keeper_path);
	if (access(dmn.keeper_path, X_OK) != 0) {
		fprintf(stderr, "dbgctld: %s: %s\n", dmn.keeper_path,
		    strerror(errno));
		exit(1);
	}
}

/* Take the start lock (the pidfile); a second daemon on the socket stops here. */
static void
main_lock(void)
{
	char		path[PATH_MAX + 8];
	pid_t		other = 0;
	struct stat	st;

	snprintf(path, sizeof path, "%s.pid", dmn.sock_path);
	/* pidfile_open follows links; in our own 0700 directory none belongs. */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "dbgctld: %s: not a regular file\n", path);
		exit(1);
	}
	main_pidfh = pidfile_open(path, 0600, &other);
	if (main_pidfh == NULL && errno == EEXIST) {
		fprintf(stderr, "dbgctld: already running as pid %ld on %s\n",
		    (long)other, dmn.sock_path);
		exit(1);
	}
	if (main_pidfh == NULL) {
		fprintf(stderr, "dbgctld: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	/* libbsd leaves the locked fd inheritable; no child may hold it. */
	fcntl(pidfile_fileno(main_pidfh), F_SETFD, FD_CLOEXEC);
	dmn.lock_fds[0] = pidfile_fileno(main_pidfh);
}

/*
 * Lock the state directory for this daemon's life and name its socket in
 * it: daemons whose environments give them one directory (the same
 * $XDG_STATE_HOME, different runtime directories) would otherwise share
 * ids and logs. Only then are the ids already used scanned.
 */
static void
main_state_lock(void)
{
	char	path[PATH_MAX + 16], other[PATH_MAX];
	ssize_t	n;
	int	fd;

	snprintf(path, sizeof path, "%s/lock", dmn.state_dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1) {
		fprintf(stderr, "dbgctld: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		n = pread(fd, other, sizeof other - 1, 0);
		other[n > 0 ? n : 0] = '\0';
		other[strcspn(other, "\n")] = '\0';
		fprintf(stderr, "dbgctld: the state directory %s is in use by "
		    "the daemon on %s: give this one another socket or "
		    "XDG_STATE_HOME\n", dmn.state_dir,
		    *other != '\0' ? other : "another socket");
		exit(1);
	}
	/* Kept open, never closed: the lock lasts as long as the daemon. */
	dmn.lock_fds[1] = fd;
	if (ftruncate(fd, 0) != 0 || dprintf(fd, "%s\n", dmn.sock_path) < 0)
		fprintf(stderr, "dbgctld: %s: %s\n", path, strerror(errno));
	snprintf(path, sizeof path, "%s/sessions", dmn.state_dir);
	dmn.next_id = main_scan_ids(path);
}

/* A number from the environment variable name, min to max, else dflt. */
static long long
main_env(const char *name, long long min, long long max, long long dflt)
{
	const char	*v = getenv(name);
	const char	*errstr;
	long long	 n;

	if (v == NULL || *v == '\0')
		return dflt;
	n = strtonum(v, min, max, &errstr);
	if (errstr != NULL) {
		log_warn("%s=%s is %s; using %lld", name, v, errstr, dflt);
		return dflt;
	}
	return n;
}

/* Run the daemon. */
int
main(int argc, char **argv)
{
	struct main_opts o = { 0 };
	int		 ready = -1, takeover;

	/* Before anything closes them, or a fork changes our pid. */
	main_activate(&o);
	/* A daemon being replaced passes a channel after the sockets. */
	takeover = takeover_take(o.act.n);
	/* Whatever the starter leaked must not reach sessions. */
	closefrom(3 + (int)o.act.n + takeover);
	sdnotify_init();
	main_nofile();
	main_options(argc, argv, &o);
	replace_init(o.foreground, o.token_file);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	TAILQ_INIT(&dmn.sessions);
	RB_INIT(&dmn.session_ids);
	TAILQ_INIT(&dmn.sinks);
	daemon_sinks();
	main_paths(activate_unix(&o.act) != NULL ? activate_unix(&o.act) :
	    o.unix_path);
	/* Before detaching, so that a refused token file is seen at once. */
	main_token(&o);
	/* The daemon replaced goes now, with its locks: nothing failed here. */
	takeover_wait();
	main_lock();
	main_state_lock();
	/* One that replaces a daemon is already detached if that one was. */
	if (!o.foreground && !takeover)
		ready = main_detach();
	dmn.loop = uv_default_loop();
	dmn.keep_ended = main_env("DBGCTLD_KEEP_ENDED", 0, 100000000,
	    KEEP_ENDED_DEFAULT);
	dmn.keep_ended_s = main_env("DBGCTLD_KEEP_ENDED_SECONDS", 0,
	    315360000, KEEP_ENDED_SECONDS_DEFAULT);
	dmn.transcript_max = main_env("DBGCTLD_TRANSCRIPT_MAX", 0, 1LL << 50,
	    TRANSCRIPT_MAX_DEFAULT);
	hold_init(main_env("DBGCTLD_HOLD_TTL", 1, HOLD_TTL_MAX,
	    HOLD_TTL_DEFAULT), main_env("DBGCTLD_HOLDS_MAX", 0, 100000,
	    HOLDS_MAX_DEFAULT), main_env("DBGCTLD_HOLD_TOTAL", 0, 315360000,
	    HOLD_TOTAL_DEFAULT));
	dmn.adopt_grace_ms = main_env("DBGCTLD_ADOPT_GRACE", 0, 86400,
	    ADOPT_GRACE_DEFAULT) * 1000;
	dmn.bundle_max = main_env("DBGCTLD_BUNDLE_MAX", 0, 1LL << 50,
	    BUNDLE_MAX_DEFAULT);
	join_chan_init(main_env("DBGCTLD_JOINS_MAX", 1, 100000, JOINS_MAX_DEFAULT));
	peer_init(main_env("DBGCTLD_AUTH_TIMEOUT", 100, 3600000,
	    PEER_TIMEOUT_DEFAULT));
	main_listen_all(&o);
	pidfile_write(main_pidfh);
	daemon_watch_signals();
	if (!o.foreground) {
		main_redirect(main_env("DBGCTLD_LOG_MAX", 4096,
		    (long long)1 << 40, LOG_MAX_DEFAULT));
	}
	if (ready != -1) {
		if (write(ready, "", 1) != 1)
			log_warn("the starter left before the daemon was ready");
		close(ready);
	}
	log_info("dbgctld %s started, pid %ld, socket %s%s, %lu descriptors",
	    DBGCTL_VERSION, (long)getpid(), dmn.sock_path,
	    dmn.activated ? " (socket-activated)" : "", dmn.nofile);
	/* Once the log is the daemon's own: the loop has not run, no session yet. */
	spawn_init();
	cgroup_init();
	orphan_init();
	/* The sweep and what waits for the sessions follow it (daemon_ready). */
	adopt_start(daemon_ready);
	sdnotify_ready();
	uv_run(dmn.loop, UV_RUN_DEFAULT);
	cgroup_fini();
	pidfile_remove(main_pidfh);
	log_info("exited");
	return 0;
}
