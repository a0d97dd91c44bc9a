/*
 * What a person sees of sessions that faulted: list's TARGET column with
 * the fault.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(ended, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 180 * H_SLOW);

/* A session and a member of its status, to wait for. */
struct ended_has {
	long		 id;
	const char	*path;
};

/* Poll predicate: status of the session holds the member at path. */
static bool
ended_status_has(void *arg)
{
	struct ended_has	*h = arg;
	json_t			*st = h_cli_status(h->id);
	bool			 has = h_jpath(st, h->path) != NULL;

	json_decref(st);
	return has;
}

/* Wait until status of id holds path (asserted within the bound). */
static void
ended_wait_member(long id, const char *path)
{
	struct ended_has h = { id, path };

	cr_assert(h_wait_for(ended_status_has, &h, H_WAIT_BOUND), "status "
	    "of session %ld: no %s within %d ms", id, path, H_WAIT_BOUND);
}

/* The line of `dbgctl list` for session id (malloc'd), the header in head. */
static char *
ended_list_line(long id, char **head)
{
	struct h_res	 r;
	char		 want[32], *line, *next, *found = NULL;

	h_cli(&r, H_ARGS("list"));
	cr_assert_eq(r.code, 0, "dbgctl list: exit %d (%s)", r.code, r.err);
	snprintf(want, sizeof want, "%ld ", id);
	*head = NULL;
	for (line = r.out; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (*head == NULL)
			*head = strdup(line);
		else if (strncmp(line, want, strlen(want)) == 0)
			found = strdup(line);
	}
	h_run_free(&r);
	return found;
}

/*
 * A gdb session whose target dies of SIGSEGV: list's TARGET column says
 * "faulted SIGSEGV" while the target is stopped at the fault, and the
 * rows of list --json say "faulted"; a plain exec session has "-".
 */
Test(ended, list_shows_a_faulted_target)
{
	char	 ids[32], *head, *line;
	json_t	*l, *row;
	long	 id, plain;
	size_t	 i;
	bool	 seen = false;

	id = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_FAULT")));
	plain = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "300"));
	h_idstr(id, ids, sizeof ids);
	ended_wait_member(id, "fault");
	line = ended_list_line(id, &head);
	cr_assert(head != NULL && strstr(head, "TARGET") != NULL, "list's "
	    "header has no TARGET column: %s", head ? head : "(none)");
	cr_assert(line != NULL && strstr(line, "faulted SIGSEGV") != NULL,
	    "list's row of session %s (its target died of SIGSEGV) does not "
	    "say \"faulted SIGSEGV\":\n%s\n%s", ids, head, line ? line :
	    "(no row)");
	free(line);
	free(head);
	l = h_cli_json(H_ARGS("list"));
	json_array_foreach(h_jpath(l, "sessions"), i, row) {
		if (h_jint(row, "id", -1) == plain)
			cr_assert_null(h_jpath(row, "faulted"), "the exec "
			    "session's row says faulted");
		if (h_jint(row, "id", -1) != id)
			continue;
		seen = true;
		cr_assert(h_jstr(row, "faulted") != NULL &&
		    strcmp(h_jstr(row, "faulted"), "SIGSEGV") == 0, "list "
		    "--json: session %s's row has faulted %s, want SIGSEGV",
		    ids, h_jstr(row, "faulted") ? h_jstr(row, "faulted") :
		    "(none)");
	}
	cr_assert(seen, "list --json has no row of session %s", ids);
	json_decref(l);
	line = ended_list_line(plain, &head);
	cr_assert(line != NULL && strstr(line, " running  -  ") != NULL,
	    "the exec session's TARGET is not \"-\":\n%s\n%s", head, line ?
	    line : "(no row)");
	free(line);
	free(head);
}
