/*
 * The checks the replay suites share (replay-check.c): test_replay.c and
 * test_replay_life.c.
 */
#ifndef DBGCTL_TEST_REPLAY_CHECK_H
#define DBGCTL_TEST_REPLAY_CHECK_H

#include "harness.h"

#include <jansson.h>

/* How long a reverse run may take: QEMU replays from the snapshot twice. */
#define RP_REVERSE_BOUND (120000 * H_SLOW)
/* The recorded run's banner. */
#define RP_BANNER "dbgctl board an385 ready\r\n"

/* The size of dir/name, asserted to be a non-empty file. */
long long	 rp_file_size(const char *dir, const char *name);
/* Launch the board recording (params added, taken); wait for its banner. */
void		 rp_launch(struct h_sess *, json_t *more);
/* Nothing of a session is left running, within the bound. */
void		 rp_assert_none_left(const char *after);

#endif
