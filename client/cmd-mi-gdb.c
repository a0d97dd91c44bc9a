/*
 * dbgctl-gdb: dbgctl run by that name is the "gdb" of a front end's
 * configuration. It takes gdb's arguments as a front end writes them,
 * keeps the few that mean something for a joined channel, ignores gdb's
 * harmless start-up flags, and refuses what would need a gdb of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"

/* What the alias's command line asks for. */
struct cmd_mi_gdb {
	const char		*socket_arg;	/* --socket */
	const char		*session;	/* --dbgctl-session, or N */
	int			 version;	/* --version, -v */
	int			 mi2;		/* --interpreter=mi2 */
};

/* gdb's flags that change nothing for a joined channel, taken and ignored. */
static const char *const cmd_mi_gdb_ignored[] = {
	"q", "quiet", "silent", "nx", "n", "nh", "nw", NULL
};

/* Print the alias's usage to fp. */
static void
cmd_mi_gdb_usage(FILE *fp)
{
	fprintf(fp, "usage: dbgctl-gdb [--interpreter=mi2|mi3] [-q] [-nx] "
	    "[-nh] [--socket=PATH]\n"
	    "                  [--connect=ssh://HOST | tcp:HOST:PORT "
	    "--token-file=FILE] "
	    "[--dbgctl-session=SESSION | SESSION]\n"
	    "       dbgctl-gdb --version [--dbgctl-session=SESSION | "
	    "SESSION]\n"
	    "dbgctl mi under the name a front end runs as gdb: joins SESSION "
	    "(default:\n$DBGCTL_SESSION) over MI on stdin and stdout; see "
	    "dbgctl(1).\n");
}

/* A usage error of the alias: the message and the usage; the status. */
static int
cmd_mi_gdb_bad(const char *fmt, const char *arg)
{
	fputs("dbgctl: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	cmd_mi_gdb_usage(stderr);
	return EXIT_USAGE;
}

/* Whether name is one of gdb's flags the alias ignores. */
static int
cmd_mi_gdb_is_ignored(const char *name)
{
	const char *const *p;

	for (p = cmd_mi_gdb_ignored; *p != NULL; p++) {
		if (strcmp(*p, name) == 0)
			return 1;
	}
	return 0;
}

/* The MI version --interpreter names: 0 mi3, 1 mi2, -1 none the alias speaks. */
static int
cmd_mi_gdb_interpreter(const char *v)
{
	if (strcmp(v, "mi3") == 0 || strcmp(v, "mi") == 0)
		return 0;
	if (strcmp(v, "mi2") == 0)
		return 1;
	return -1;
}

/*
 * Take one option's value: after '=' in the word, else the next word
 * (*i moves past it). NULL if there is none.
 */
static const char *
cmd_mi_gdb_value(int argc, char **argv, int *i, const char *eq)
{
	if (eq != NULL)
		return eq + 1;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

/* Take an option of the alias's own, or of gdb's it keeps: 0, 1 not one, or the usage status. */
static int
cmd_mi_gdb_option(struct cmd_mi_gdb *g, int argc, char **argv, int *i)
{
	const char	*arg = argv[*i], *name, *eq, *v;
	char		 key[32];
	int		 dashes = arg[1] == '-' ? 2 : 1, mi;

	name = arg + dashes;
	eq = strchr(name, '=');
	snprintf(key, sizeof key, "%.*s", (int)(eq != NULL ? eq - name :
	    (int)strlen(name)), name);
	if (strcmp(key, "interpreter") == 0 || strcmp(key, "i") == 0) {
		if ((v = cmd_mi_gdb_value(argc, argv, i, eq)) == NULL)
			return cmd_mi_gdb_bad("%s needs an interpreter", arg);
		if ((mi = cmd_mi_gdb_interpreter(v)) == -1)
			return cmd_mi_gdb_bad("--interpreter=%s: a joined "
			    "channel speaks gdb/MI only: mi2, mi3 or mi (mi3)",
			    v);
		g->mi2 = mi;
		return 0;
	}
	if (strcmp(key, "version") == 0 || strcmp(key, "v") == 0) {
		g->version = 1;
		return eq == NULL ? 0 : cmd_mi_gdb_bad("%s takes no value",
		    arg);
	}
	if (cmd_mi_gdb_is_ignored(key))
		return eq == NULL ? 0 : cmd_mi_gdb_bad("%s takes no value",
		    arg);
	/* The client's own, in the long form: gdb owns the short ones. */
	if (dashes != 2 || (strcmp(key, "socket") != 0 && strcmp(key,
	    "connect") != 0 && strcmp(key, "token-file") != 0 && strcmp(key,
	    "dbgctl-session") != 0))
		return 1;
	if ((v = cmd_mi_gdb_value(argc, argv, i, eq)) == NULL)
		return cmd_mi_gdb_bad("option requires an argument: %s", arg);
	if (strcmp(key, "socket") == 0)
		g->socket_arg = v;
	else if (strcmp(key, "connect") == 0)
		/* As dbgctl's --connect: tcp:HOST:PORT, or ssh://HOST. */
		setenv("DBGCTL_HOST", v, 1);
	else if (strcmp(key, "token-file") == 0)
		setenv("DBGCTL_TOKEN_FILE", v, 1);
	else
		g->session = v;
	return 0;
}

/* Parse gdb's command line into g: 0, -1 after help, or the usage status. */
static int
cmd_mi_gdb_parse(struct cmd_mi_gdb *g, int argc, char **argv)
{
	const char	*arg;
	long long	 n;
	int		 i, rv;

	for (i = 1; i < argc; i++) {
		arg = argv[i];
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0 ||
		    strcmp(arg, "-help") == 0) {
			cmd_mi_gdb_usage(stdout);
			return -1;
		}
		if (arg[0] == '-' && arg[1] != '\0') {
			if ((rv = cmd_mi_gdb_option(g, argc, argv, &i)) == 1)
				return cmd_mi_gdb_bad("%s: dbgctl-gdb joins a "
				    "running session over MI, and a joined "
				    "channel cannot take it (no program, core, "
				    "pid, script, command or batch run of its "
				    "own); send commands over MI", arg);
			if (rv != 0)
				return rv;
			continue;
		}
		if (g->session == NULL && args_strtonum(arg, &n) == 0) {
			g->session = arg;
			continue;
		}
		return cmd_mi_gdb_bad("%s: dbgctl-gdb joins a running session "
		    "over MI, and a joined channel cannot take a program, core "
		    "or pid; name the session as a number or with "
		    "--dbgctl-session", arg);
	}
	return 0;
}

/*
 * dbgctl run as dbgctl-gdb: parse gdb's command line, then run it as the
 * mi command line it stands for; the exit status.
 */
int
cmd_mi_gdb_main(int argc, char **argv)
{
	struct cmd_mi_gdb	 g;
	char			*v[5];
	int			 n = 0, rv;

	memset(&g, 0, sizeof g);
	if ((rv = cmd_mi_gdb_parse(&g, argc, argv)) != 0)
		return rv == -1 ? EXIT_OK : rv;
	if (g.session == NULL && !g.version && (getenv("DBGCTL_SESSION") ==
	    NULL || *getenv("DBGCTL_SESSION") == '\0'))
		return cmd_mi_gdb_bad("%s", "missing SESSION: give --dbgctl-session, "
		    "a number, or set DBGCTL_SESSION");
	v[n++] = "mi";
	if (g.mi2)
		v[n++] = "--mi2";
	if (g.version)
		v[n++] = "--version";
	if (g.session != NULL)
		v[n++] = (char *)g.session;
	v[n] = NULL;
	return cmd_run(&cmd_mi_entry, n, v, g.socket_arg, 0);
}
