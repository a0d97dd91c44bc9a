/* Containment by cgroup v2, one cgroup per keeper's tree. */
#ifndef DBGCTL_CGROUP_H
#define DBGCTL_CGROUP_H

#include <stdbool.h>

#include <jansson.h>

/* cgroup.c: containment by cgroup v2, one cgroup per keeper's tree. */
struct cgroup;
typedef void (*cgroup_cb)(void *arg);	/* the cgroup became empty */

void		 cgroup_init(void);
void		 cgroup_fini(void);
json_t		*cgroup_json(void);
struct cgroup	*cgroup_open(const char *name, cgroup_cb, void *arg);
struct cgroup	*cgroup_adopt(const char *name, cgroup_cb, void *arg);
void		 cgroup_sweep_left(void);
const char	*cgroup_name(const struct cgroup *);
const char	*cgroup_path(const struct cgroup *);
int		 cgroup_fd(const struct cgroup *);
bool		 cgroup_populated(const struct cgroup *);
void		 cgroup_kill(struct cgroup *);
void		 cgroup_close(struct cgroup *);

#endif
