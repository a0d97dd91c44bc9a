/*
 * Where a session's readers stand, kept in a file for the next daemon,
 * for the readers that move and the adoption.
 */
#ifndef DBGCTL_CURSOR_FILE_H
#define DBGCTL_CURSOR_FILE_H

#include "daemon.h"

/* cursor-file.c: where a session's readers stand, for the next daemon. */
void	 cursor_file_cursor(struct session *, const char *stream,
	    const char *name, uint64_t);
void	 cursor_file_taken(struct session *);
void	 cursor_file_passing(struct session *);
void	 cursor_file_adopt(struct session *);
void	 cursor_file_remove(unsigned long id);
void	 cursor_file_ended(struct sink *, struct session *,
	    const struct session_event *);
void	 cursor_file_freed(struct sink *, struct session *,
	    const struct session_event *);

#endif
