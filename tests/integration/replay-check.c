/*
 * The checks the replay suites share: a recording launched, its files,
 * and nothing of it left running.
 */
#include "replay-check.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The size of dir/name, asserted to be a non-empty file. */
long long
rp_file_size(const char *dir, const char *name)
{
	char		path[PATH_MAX];
	struct stat	st;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	cr_assert_eq(stat(path, &st), 0, "the bundle has no %s", name);
	cr_assert(S_ISREG(st.st_mode) && st.st_size > 0, "%s is empty", path);
	return (long long)st.st_size;
}

/*
 * Launch the board recording, with params added to the launch's, and
 * wait for its banner. The firmware is named relative to the launch's
 * cwd, as a user in its build directory names it.
 */
void
rp_launch(struct h_sess *t, json_t *more)
{
	struct h_bytes	 got = { calloc(1, 1), 0 };
	char		 dir[PATH_MAX], base[PATH_MAX];
	json_t		*params;

	snprintf(dir, sizeof dir, "%s", h_board_firmware("FIX_BOARD_AN385"));
	snprintf(base, sizeof base, "%s", basename(dir));
	params = json_pack("{s:s, s:s, s:[s], s:s, s:b, s:b}", "kind", "qemu",
	    "machine", "mps2-an385", "argv", base, "cwd", dirname(dir),
	    "record", 1, "transport", 1);
	if (more != NULL)
		json_object_update(params, more);
	json_decref(more);
	h_sess_launch(t, params);
	cr_assert_eq(h_cli_recv_until(t->ids, RP_BANNER, &got, H_WAIT_BOUND),
	    0, "no banner: \"%s\"", h_shown(got.p, got.len, 300));
	free(got.p);
}

/* Whether any process of the test's daemon's sessions (QEMU, gdb, a keeper) lives. */
static bool
rp_none_left(void *arg)
{
	static const char *const comms[] = { "qemu-system-arm",
	    "gdb-multiarch", "dbgctl-keeper", NULL };
	pid_t	 p[H_MAXPIDS];
	char	 comm[64];
	int	 i, j, n;

	(void)arg;
	n = h_marker_pids(H->marker, p, H_MAXPIDS);
	for (i = 0; i < n; i++) {
		h_pid_comm(p[i], comm, sizeof(comm));
		for (j = 0; comms[j] != NULL; j++)
			if (strcmp(comm, comms[j]) == 0)
				return false;
	}
	return true;
}

/* Nothing of a session is left running, within the bound. */
void
rp_assert_none_left(const char *after)
{
	cr_assert(h_wait_for(rp_none_left, NULL, H_WAIT_BOUND), "after %s, "
	    "a QEMU, gdb or keeper of the test's daemon is still running",
	    after);
}
