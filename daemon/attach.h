/*
 * Clients attached to a session's console, for the methods that attach
 * and resize and the session's news.
 */
#ifndef DBGCTL_ATTACH_H
#define DBGCTL_ATTACH_H

#include "daemon.h"

/* attach.c: clients attached to a session's console. */

void	 attach_start(struct conn *, struct session *, unsigned long lines);
void	 attach_server(struct conn *);
int	 attach_resize(struct session *, unsigned rows, unsigned cols,
	    bool redraw);
int	 attach_viewer_resize(struct session *, uint64_t viewer,
	    unsigned rows, unsigned cols, bool redraw);
void	 attach_stopped(struct sink *, struct session *,
	    const struct session_event *);
json_t	*attach_suspended_json(const struct session *);
void	 attach_stop(struct sink *, struct session *,
	    const struct session_event *);

#endif
