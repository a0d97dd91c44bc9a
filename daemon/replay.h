/* replay.c: record and replay of a qemu board (QEMU's record/replay). */
#ifndef DBGCTL_REPLAY_H
#define DBGCTL_REPLAY_H

#include <stdbool.h>

#include <jansson.h>

#include "replay-files.h"

struct argv;
struct bundle_files;
struct launch;
struct rpc_error;
struct session;

/* A recording's default bounds: its log's bytes, the run's seconds. */
#define REPLAY_MAX_BYTES (16ULL * 1024 * 1024)
#define REPLAY_MAX_SECONDS 3600

/* A bundle's recording is whole: it goes on. */
typedef void (*replay_flushed_cb)(void *arg);

int	 replay_check(const struct launch *, struct rpc_error *);
int	 replay_open(struct session *, char *err, size_t errlen);
void	 replay_args(struct session *, struct argv *);
bool	 replay_flush(struct session *, replay_flushed_cb, void *arg);
void	 replay_bundle(struct session *, struct bundle_files *);

#endif
