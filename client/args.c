/*
 * A command line parsed against a command's template: options and
 * operands. What a mistyped word may have meant is args-suggest.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"
#include "args.h"

/* getopt's value for the template's long option i. */
#define ARGS_LONG(i)	(256 + (i))

/* Parse a decimal count or milliseconds value: digits only, no sign. */
int
args_strtonum(const char *s, long long *out)
{
	char		*end;
	long long	 n;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = n;
	return 0;
}

/* A template that does not fit is the program's mistake, not the user's. */
static void __attribute__((noreturn))
args_broken(const char *what, const char *name)
{
	fprintf(stderr, "dbgctl: internal error: %s: %s\n", what, name);
	abort();
}

/* Room for one more option in a's options, grown as a template needs it. */
static struct args_option *
args_room(struct args *a)
{
	if (a->noptions == a->capoptions) {
		a->capoptions = a->capoptions != 0 ? 2 * a->capoptions : 16;
		if ((a->options = reallocarray(a->options, a->capoptions,
		    sizeof *a->options)) == NULL)
			client_fatal("out of memory");
	}
	return &a->options[a->noptions];
}

/* Zeroed room for n members of size bytes and one more, or the client's end. */
void *
args_array(size_t n, size_t size)
{
	void	*p;

	if ((p = calloc(n + 1, size)) == NULL)
		client_fatal("out of memory");
	return p;
}

/*
 * Add the template's words ("x:", "max#", "eof") to a's options; with
 * skip, those a names already (a command's own option beats a global one
 * of the same name).
 */
static void
args_template(struct args *a, const char *template, int skip)
{
	struct args_option	*o;
	const char		*p = template;
	size_t			 len;

	while (*(p += strspn(p, " ")) != '\0') {
		len = strcspn(p, " ");
		if (len >= ARGS_NAME_MAX)
			args_broken("option name too long", template);
		o = args_room(a);
		memcpy(o->name, p, len);
		o->name[len] = '\0';
		o->value = 0;
		if (len > 1 && strchr(":#", p[len - 1]) != NULL) {
			o->value = p[len - 1];
			o->name[len - 1] = '\0';
		}
		p += len;
		if (!skip || args_known(a, o->name) == -1)
			a->noptions++;
	}
}

/* The index of option name in a's options, or -1 if there is none. */
int
args_known(const struct args *a, const char *name)
{
	int	i;

	for (i = 0; i < a->noptions; i++) {
		if (strcmp(a->options[i].name, name) == 0)
			return i;
	}
	return -1;
}

/* Split a template's options into a, for help: no command line parsed. */
void
args_split(struct args *a, const struct args_template *template)
{
	memset(a, 0, sizeof *a);
	args_template(a, template->options, 0);
	a->nown = a->noptions;
}

/* The index of option name in a's template; a name not there aborts. */
static int
args_find(const struct args *a, const char *name)
{
	int	i;

	if ((i = args_known(a, name)) == -1)
		args_broken("no such option in the template", name);
	return i;
}

/* Whether option i is a short one, written -x rather than --name. */
int
args_short(const struct args *a, int i)
{
	return a->options[i].name[1] == '\0';
}

/* Build getopt's tables from the template, -h and --help included. */
static void
args_getopt_tables(const struct args *a, char *shortopts, size_t len,
    struct option *longopts)
{
	const struct args_option	*o;
	char				 s[4];
	int				 i, n = 0;

	strlcpy(shortopts, "+:h", len);
	for (i = 0; i < a->noptions; i++) {
		o = &a->options[i];
		if (args_short(a, i)) {
			snprintf(s, sizeof s, "%c%s", o->name[0],
			    o->value != 0 ? ":" : "");
			strlcat(shortopts, s, len);
			continue;
		}
		/* The long global ones are lifted out first (args_lift). */
		if (i >= a->nown)
			continue;
		longopts[n].name = o->name;
		longopts[n].has_arg = o->value != 0 ? required_argument :
		    no_argument;
		longopts[n].flag = NULL;
		longopts[n++].val = ARGS_LONG(i);
	}
	longopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* The template option getopt returned ch for; -1 if none. */
static int
args_option_of(const struct args *a, int ch)
{
	int	i;

	if (ch >= ARGS_LONG(0))
		return ch - ARGS_LONG(0) < a->noptions ? ch - ARGS_LONG(0) : -1;
	for (i = 0; i < a->noptions; i++) {
		if (args_short(a, i) && a->options[i].name[0] == ch)
			return i;
	}
	return -1;
}

/* Name the option getopt just refused, as the user wrote it, into buf. */
static void
args_refused(const struct args *a, char **argv, char *buf, size_t len)
{
	const char	*arg;
	int		 i;

	if (optopt > 0 && optopt < ARGS_LONG(0)) {
		snprintf(buf, len, "-%c", optopt);
		return;
	}
	if ((i = args_option_of(a, optopt)) != -1) {
		snprintf(buf, len, "--%s", a->options[i].name);
		return;
	}
	arg = optind > 0 ? argv[optind - 1] : NULL;
	if (arg == NULL || strncmp(arg, "--", 2) != 0) {
		strlcpy(buf, "?", len);
		return;
	}
	snprintf(buf, len, "%.*s", (int)strcspn(arg, "="), arg);
}

/* Why getopt refused an option, in the words of a usage error. */
static void
args_cause(const struct args *a, int ch, char **argv, char *cause,
    size_t len)
{
	char	name[128];

	args_refused(a, argv, name, sizeof name);
	if (ch == ':')
		snprintf(cause, len, "option requires an argument: %s", name);
	else if (optopt >= ARGS_LONG(0))
		snprintf(cause, len, "option takes no argument: %s", name);
	else
		snprintf(cause, len, "unknown option: %s", name);
}

/* Keep option i with its value; a count that is not one is refused. */
static int
args_keep(struct args *a, int i, const char *value, char *cause,
    size_t len)
{
	long long	n;

	if (a->options[i].value == '#' && args_strtonum(value, &n) != 0) {
		snprintf(cause, len, "bad %s%s: %s", args_short(a, i) ? "-" :
		    "--", a->options[i].name, value);
		return -1;
	}
	a->given[a->ngiven].option = i;
	a->given[a->ngiven++].value = value;
	return 0;
}

/*
 * Whether the word at arg ("--name" or "--name=v", "name" being a
 * command's own long option by its whole name) takes the next word as its
 * value.
 */
static int
args_long_takes_next(const struct args *a, const char *arg)
{
	size_t	len = strcspn(arg, "=");
	int	i;

	if (arg[len] == '=')
		return 0;
	for (i = 0; i < a->nown; i++) {
		if (!args_short(a, i) && strlen(a->options[i].name) == len &&
		    strncmp(a->options[i].name, arg, len) == 0)
			return a->options[i].value != 0;
	}
	return 0;
}

/* Whether the short option cluster arg ("-fn5", "-n") takes the next word. */
int
args_short_takes_next(const struct args *a, const char *arg)
{
	int	i;

	for (arg++; *arg != '\0'; arg++) {
		for (i = 0; i < a->noptions; i++) {
			if (args_short(a, i) && a->options[i].name[0] == *arg)
				break;
		}
		if (i == a->noptions)
			return 0;	/* unknown: getopt says so */
		if (a->options[i].value != 0)
			return arg[1] == '\0';
	}
	return 0;
}

/*
 * The long global options among the command's, by their whole names, are
 * taken out of argv before getopt sees it. Returns argv's new count.
 */
static int
args_lift(struct args *a, int argc, char **argv)
{
	const char	*arg;
	size_t		 len;
	int		 i = 1, k, next;

	while (i < argc && (arg = argv[i])[0] == '-' && arg[1] != '\0' &&
	    strcmp(arg, "--") != 0) {
		if (arg[1] != '-') {
			i += 1 + args_short_takes_next(a, arg);
			continue;
		}
		len = strcspn(arg + 2, "=");
		for (k = a->nown; k < a->noptions; k++) {
			if (!args_short(a, k) && strlen(a->options[k].name) ==
			    len && strncmp(a->options[k].name, arg + 2,
			    len) == 0)
				break;
		}
		if (k == a->noptions) {
			i += 1 + args_long_takes_next(a, arg + 2);
			continue;
		}
		/* Its value: after '=', else the next word; none for --json. */
		next = a->options[k].value != 0 && arg[2 + len] != '=';
		if (next && i + 1 >= argc)
			return argc;	/* getopt: it wants a value */
		if (a->options[k].value == 0 && arg[2 + len] == '=')
			return argc;	/* getopt: unknown */
		a->given[a->ngiven].option = k;
		a->given[a->ngiven++].value = a->options[k].value == 0 ? NULL :
		    next ? argv[i + 1] : arg + 3 + len;
		memmove(argv + i, argv + i + 1 + next, (argc - i - 1 - next) *
		    sizeof *argv);
		argc -= 1 + next;
		argv[argc] = NULL;
	}
	return argc;
}


/* Say that "--word" is no option of a, with those it may have meant. */
static void
args_unknown_long(const struct args *a, const char *word, char *cause,
    size_t len)
{
	const char	**names = args_array(a->noptions + 1, sizeof *names);
	char		  near[256];
	size_t		  n = 0;
	int		  i;

	for (i = 0; i < a->noptions; i++)
		if (!args_short(a, i))
			names[n++] = a->options[i].name;
	names[n++] = "help";
	args_suggest_long(word, names, n, near, sizeof near);
	free(names);
	snprintf(cause, len, "unknown option: --%s%s%s%s", word,
	    *near != '\0' ? "; did you mean " : "", near,
	    *near != '\0' ? "?" : "");
}

/*
 * Refuse a long option that is not written out whole: getopt_long would
 * take a prefix ("--al" for --all), and options are a script's contract
 * by their names (dbgctl(1)).
 */
static int
args_whole(struct args *a, int argc, char **argv, char *cause, size_t len)
{
	const char	*arg;
	char		 word[ARGS_WORD_MAX + 1];
	size_t		 wlen;
	int		 i = 1, k;

	while (i < argc && (arg = argv[i])[0] == '-' && arg[1] != '\0' &&
	    strcmp(arg, "--") != 0) {
		if (arg[1] != '-') {
			i += 1 + args_short_takes_next(a, arg);
			continue;
		}
		wlen = strcspn(arg + 2, "=");
		if (wlen == 4 && strncmp(arg + 2, "help", 4) == 0)
			return 0;	/* getopt: help, or "takes no argument" */
		for (k = 0; k < a->noptions; k++) {
			if (!args_short(a, k) && strlen(a->options[k].name) ==
			    wlen && strncmp(a->options[k].name, arg + 2,
			    wlen) == 0)
				break;
		}
		if (k == a->noptions) {
			snprintf(word, sizeof word, "%.*s", (int)wlen, arg + 2);
			args_unknown_long(a, word, cause, len);
			return -1;
		}
		if (k >= a->nown) {
			/* A global one args_lift left: its value is wrong. */
			snprintf(cause, len, "option %s: --%s",
			    a->options[k].value != 0 ? "requires an argument" :
			    "takes no argument", a->options[k].name);
			return -1;
		}
		i += 1 + args_long_takes_next(a, arg + 2);
	}
	return 0;
}

/* Take the options, up to the first operand or "--", into a. */
static enum args_status
args_options(struct args *a, int argc, char **argv, char *cause,
    size_t len)
{
	struct option		*longopts = args_array(a->noptions + 2,
				    sizeof *longopts);
	size_t			 slen = 3 * (size_t)a->noptions + 4;
	char			*shortopts = args_array(slen, 1);
	enum args_status	 rv = ARGS_OK;
	int			 ch, i;

	args_getopt_tables(a, shortopts, slen, longopts);
	optind = 0;
	opterr = 0;
	while (rv == ARGS_OK && (ch = getopt_long(argc, argv, shortopts,
	    longopts, NULL)) != -1) {
		if (ch == 'h')
			rv = ARGS_HELP;
		else if ((i = args_option_of(a, ch)) == -1) {
			args_cause(a, ch, argv, cause, len);
			rv = ARGS_BAD;
		} else if (args_keep(a, i, a->options[i].value != 0 ? optarg :
		    NULL, cause, len) != 0)
			rv = ARGS_BAD;
	}
	/* getopt keeps pointers into the tables only while it parses. */
	free(longopts);
	free(shortopts);
	return rv;
}

/*
 * Parse argv (argv[0] the command's name) against template: the options it
 * names, those of globals (words as a template's) that it does not, and
 * between lower and upper operands (upper -1: no limit). On ARGS_BAD,
 * cause says why; ARGS_FEW means too few operands.
 */
enum args_status
args_parse(struct args *a, const struct args_template *template,
    const char *globals, int argc, char **argv, char *cause, size_t len)
{
	enum args_status	rv;

	memset(a, 0, sizeof *a);
	args_template(a, template->options, 0);
	a->nown = a->noptions;
	args_template(a, globals != NULL ? globals : "", 1);
	if ((a->given = calloc(argc, sizeof *a->given)) == NULL)
		client_fatal("out of memory");
	argc = args_lift(a, argc, argv);
	if (args_whole(a, argc, argv, cause, len) != 0)
		return ARGS_BAD;
	if ((rv = args_options(a, argc, argv, cause, len)) != ARGS_OK)
		return rv;
	a->operands = argv + optind;
	a->noperands = argc - optind;
	if (a->noperands < template->lower)
		return ARGS_FEW;
	if (template->upper != -1 && a->noperands > template->upper) {
		/* An option after an operand is taken for one more. */
		snprintf(cause, len, "too many arguments%s%s", *a->operands[
		    template->upper] == '-' ? ": options go before the "
		    "operands, not " : "", *a->operands[template->upper] ==
		    '-' ? a->operands[template->upper] : "");
		return ARGS_BAD;
	}
	return ARGS_OK;
}

/* Free what args_parse or args_split allocated. */
void
args_free(struct args *a)
{
	free(a->given);
	a->given = NULL;
	a->ngiven = 0;
	free(a->options);
	a->options = NULL;
	a->noptions = a->nown = a->capoptions = 0;
}

/* How many times option name was given. */
int
args_has(const struct args *a, const char *name)
{
	int	i, n = 0, opt = args_find(a, name);

	for (i = 0; i < a->ngiven; i++)
		n += a->given[i].option == opt;
	return n;
}

/* Where among the options given the last name is; -1 if it was not given. */
int
args_last(const struct args *a, const char *name)
{
	int	i, opt = args_find(a, name);

	for (i = a->ngiven - 1; i >= 0; i--) {
		if (a->given[i].option == opt)
			return i;
	}
	return -1;
}

/* The value of the last name given; NULL if it was not. */
const char *
args_get(const struct args *a, const char *name)
{
	int	i = args_last(a, name);

	return i == -1 ? NULL : a->given[i].value;
}

/* The last value of count option name (checked when parsed), or unset. */
long long
args_number(const struct args *a, const char *name, long long unset)
{
	const char	*value = args_get(a, name);
	long long	 n;

	if (value == NULL || args_strtonum(value, &n) != 0)
		return unset;
	return n;
}

/*
 * The values of option name in the order given: the first at or after *pos,
 * which moves past it. Start with *pos 0; NULL once there are no more.
 */
const char *
args_next(const struct args *a, const char *name, int *pos)
{
	int	opt = args_find(a, name);

	for (; *pos < a->ngiven; (*pos)++) {
		if (a->given[*pos].option == opt)
			return a->given[(*pos)++].value;
	}
	return NULL;
}

/* How many operands there are. */
int
args_count(const struct args *a)
{
	return a->noperands;
}

/* Operand i, or NULL past the last. */
const char *
args_operand(const struct args *a, int i)
{
	return i >= 0 && i < a->noperands ? a->operands[i] : NULL;
}
