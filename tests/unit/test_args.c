/*
 * client/args.c: a template grows to as many options as it names, so a
 * command that gains an option is parsed, never refused as too big.
 */
#include <criterion/criterion.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"

/* args.c's way out when memory runs out; the client's own is in client.c. */
void
client_fatal(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	abort();
}

/* A template of n long options, "opt0: opt1: ...", each taking a value. */
static char *
args_test_template(int n)
{
	char	*t = calloc(n, 16), *p = t;
	int	 i;

	cr_assert_not_null(t);
	for (i = 0; i < n; i++)
		p += sprintf(p, "%sopt%d:", i == 0 ? "" : " ", i);
	return t;
}

/* A hundred options, more than any command has: each one parses. */
Test(args, a_template_of_a_hundred_options_parses)
{
	struct args_template	 tpl = { args_test_template(100), 1, 1 };
	char			 cause[256], *argv[] = { "launch", "--opt0",
				    "a", "--opt99=z", "-s", "sock", "--json",
				    "PROGRAM", NULL };
	struct args		 a;

	cr_assert_eq(args_parse(&a, &tpl, "s: json", 8, argv, cause,
	    sizeof cause), ARGS_OK, "%s", cause);
	cr_assert_eq(a.nown, 100);
	cr_assert_str_eq(args_get(&a, "opt0"), "a");
	cr_assert_str_eq(args_get(&a, "opt99"), "z");
	cr_assert_str_eq(args_get(&a, "s"), "sock");
	cr_assert_eq(args_has(&a, "json"), 1);
	cr_assert_str_eq(args_operand(&a, 0), "PROGRAM");
	args_free(&a);
	free((char *)tpl.options);
}

/* An unknown option among a hundred is named with the nearest one. */
Test(args, an_unknown_option_among_a_hundred_is_named_with_the_nearest)
{
	struct args_template	 tpl = { args_test_template(100), 0, 0 };
	char			 cause[256], *argv[] = { "launch", "--opt999",
				    NULL };
	struct args		 a;

	cr_assert_eq(args_parse(&a, &tpl, NULL, 2, argv, cause, sizeof cause),
	    ARGS_BAD);
	cr_assert(strstr(cause, "unknown option: --opt999") != NULL &&
	    strstr(cause, "--opt99") != NULL, "%s", cause);
	args_free(&a);
	free((char *)tpl.options);
}

/* Help's split of the same template names all of them as the command's. */
Test(args, help_splits_a_hundred_options)
{
	struct args_template	 tpl = { args_test_template(100), 0, 0 };
	struct args		 a;

	args_split(&a, &tpl);
	cr_assert_eq(a.nown, 100);
	cr_assert_str_eq(a.options[a.nown - 1].name, "opt99");
	cr_assert_eq(a.options[a.nown - 1].value, ':');
	args_free(&a);
	free((char *)tpl.options);
}
