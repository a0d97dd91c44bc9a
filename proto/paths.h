/* Where the socket, pidfile and state live (DESIGN.md §3). */
#ifndef DBGCTL_PATHS_H
#define DBGCTL_PATHS_H

#include <stddef.h>

/* Resolve the socket path: override, $DBGCTL_SOCKET, $XDG_RUNTIME_DIR, /tmp. */
int	paths_socket(const char *override, char *buf, size_t len);
/* Resolve the state directory of the daemon on socket sock. */
int	paths_state_dir(const char *sock, char *buf, size_t len);
/* Create dir (and parents) 0700 if missing; refuse a foreign or loose one. */
int	paths_secure_dir(const char *dir, char *err, size_t errlen);
/* Create dir and its parents with mode, like mkdir -p. */
int	paths_mkdirs(const char *dir, int mode);
/* Copy the directory part of path into buf. */
int	paths_dirname(const char *path, char *buf, size_t len);
/* Find a sibling executable of this program, else fall back to dir/name. */
int	paths_sibling(const char *name, const char *fallback_dir, char *buf,
	    size_t len);
/* Whether a live socket is bound at path (/proc/net/unix): 1, 0, -1 unknown. */
int	paths_socket_bound(const char *path);

#endif
