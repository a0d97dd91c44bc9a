/* replay.c: record and replay of a qemu board (QEMU's record/replay). */
#ifndef DBGCTL_REPLAY_H
#define DBGCTL_REPLAY_H

#include <stdbool.h>

#include <jansson.h>

#include "replay-files.h"

struct argv;
struct bundle;
struct sink;
struct session_event;
struct launch;
struct rpc_error;
struct session;

/* A recording's default bounds: its log's bytes, the run's seconds. */
#define REPLAY_MAX_BYTES (16ULL * 1024 * 1024)
#define REPLAY_MAX_SECONDS 3600
/* The bytes a recording's image or firmware may have, copied at its start. */
#define REPLAY_MAX_FILE (64ULL * 1024 * 1024)

/* replay_file_copy's flags: the source may be a link; it is a qcow2 image. */
#define REPLAY_FILE_FOLLOW	0x1
#define REPLAY_FILE_QCOW2	0x2

/* A copy for a session is made (why NULL), or not (err its errno). */
typedef void (*replay_copied_cb)(struct session *, int err, const char *why);

/* A bundle's recording is whole: it goes on. */
typedef void (*replay_flushed_cb)(void *arg);

int	 replay_check(const struct launch *, struct rpc_error *);
int	 replay_open(struct session *, replay_copied_cb, char *err,
	    size_t errlen);
void	 replay_args(struct session *, struct argv *);
bool	 replay_flush(struct session *, replay_flushed_cb, void *arg);
void	 replay_bundle(struct bundle *);
void	 replay_freed(struct sink *, struct session *,
	    const struct session_event *);

/* replay-file.c */
int	 replay_file_image_new(const char *path, char *err, size_t errlen);
int	 replay_file_copy(const char *src, const char *dst, int flags,
	    char *err, size_t errlen);
void	 replay_file_copy_async(struct session *, const char *src,
	    const char *dst, int flags, replay_copied_cb);

#endif
