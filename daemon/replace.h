/*
 * Replacing the daemon by a new one without closing its sockets: the old
 * daemon's side (replace.c) and the new one's (takeover.c), for main.c,
 * the replace method and orphan.c.
 */
#ifndef DBGCTL_REPLACE_H
#define DBGCTL_REPLACE_H

#include "daemon.h"

struct request;

/*
 * The variable that tells a new daemon it replaces its parent: the old
 * daemon's pid. The channel between them is the fd after the listening
 * sockets (3 + LISTEN_FDS).
 */
#define REPLACE_ENV		"DBGCTLD_REPLACE"
/* What the new daemon says on the channel once it may take over. */
#define REPLACE_READY		'R'
/* What the child says when the new binary could not be run (then errno). */
#define REPLACE_EXEC_FAILED	'E'
/* How long the old daemon waits for the new one to be ready (ms). */
#define REPLACE_READY_MS	10000
/* How long the new daemon waits for the old one to exit (ms). */
#define REPLACE_GONE_MS		10000

/* replace.c: the old daemon's side. */
void		 replace_init(bool foreground, const char *token_file);
enum method_return replace_start(struct request *, const char *binary);
bool		 replace_child(pid_t);

/* takeover.c: the new daemon's side. */
int		 takeover_take(size_t listeners);
void		 takeover_wait(void);

#endif
