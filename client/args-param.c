/*
 * A daemon's message in the words the user typed: a param it names
 * ("ttl" must be ...) becomes the option that sets it (--ttl).
 */
#include <stdio.h>
#include <string.h>

#include "dbgctl.h"
#include "args.h"

/* The words after a quoted param where the daemon names it as one. */
static const char *const args_param_verbs[] = {
	" must ", " belongs ", " is required", " is \"", NULL
};

/*
 * In a daemon's message, "key" where it is named as a param ("ttl" must
 * be ...) becomes the option name that sets it (--ttl): what was typed.
 */
void
args_param_to_option(char *msg, size_t size, const char *key,
    const char *name)
{
	char			 quoted[ARGS_NAME_MAX + 8], rest[1024];
	char			*at = msg;
	const char *const	*verb;
	size_t			 qlen;

	snprintf(quoted, sizeof quoted, "\"%s\"", key);
	qlen = strlen(quoted);
	while ((at = strstr(at, quoted)) != NULL) {
		for (verb = args_param_verbs; *verb != NULL; verb++)
			if (strncmp(at + qlen, *verb, strlen(*verb)) == 0)
				break;
		if (*verb == NULL) {
			at += qlen;
			continue;
		}
		strlcpy(rest, at + qlen, sizeof rest);
		snprintf(at, size - (size_t)(at - msg), "%s%s%s", name[1] ==
		    '\0' ? "-" : "--", name, rest);
	}
}

/* The same for every long option of a's own: --stop-timeout sets "stop_timeout". */
void
args_param_names(const struct args *a, char *msg, size_t size)
{
	char	key[ARGS_NAME_MAX], *p;
	int	i;

	for (i = 0; i < a->nown; i++) {
		if (args_short(a, i))
			continue;
		strlcpy(key, a->options[i].name, sizeof key);
		for (p = key; (p = strchr(p, '-')) != NULL; p++)
			*p = '_';
		args_param_to_option(msg, size, key, a->options[i].name);
	}
}
