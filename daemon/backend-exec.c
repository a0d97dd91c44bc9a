/* exec: any program, supervised without a debugger. */
#include "daemon.h"
#include "argv.h"

/* The program itself. */
static char **
backend_exec_argv(struct session *s, char *err, size_t errlen)
{
	struct argv av = { 0 };

	(void)err;
	(void)errlen;
	argv_push_json(&av, s->l.argv, 0);
	return av.v;
}

const struct backend backend_exec = {
	.name = "exec",
	.flags = BACKEND_STDIO | BACKEND_PROGRAM | BACKEND_ADOPT,
	.argv = backend_exec_argv,
};
