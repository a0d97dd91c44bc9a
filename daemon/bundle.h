/*
 * The bundle files' own: a bundle being written, shared by bundle.c (its
 * life), bundle-gather.c (what gdb says) and bundle-manifest.c, and the
 * resources it uses: its files, its archive, its record.
 */
#ifndef DBGCTL_BUNDLE_H
#define DBGCTL_BUNDLE_H

#include "daemon.h"

struct core_map;
struct gdb_job;

/* A later trigger's continuation, waiting for the automatic bundle. */
struct bundle_waiter {
	bundle_then	 then;
	void		*arg;
};

/* A session's bundles: those being written, and its automatic one. */
struct bundles {
	LIST_HEAD(, bundle)	 live;
	bool			 auto_taken;	/* the first trigger took it */
	json_t			*auto_done;	/* {path, reason, time} */
	struct bundle_waiter	*waiters;	/* later triggers, in order */
	size_t			 nwaiters;
	struct bundle_core	*cores;		/* files gcore may still write */
	size_t			 ncores;
};

/* Where a bundle is. */
enum bundle_phase {
	BUNDLE_GATHER,		/* gdb's answers awaited */
	BUNDLE_FILES,		/* texts, logs and core written */
	BUNDLE_MANIFEST,	/* the manifest written */
	BUNDLE_TAR,		/* the archive made */
};

/* One bundle being written, from its record to its rename. */
struct bundle {
	LIST_ENTRY(bundle)	 entry;
	unsigned long		 serial;	/* its gdb job says whose it is */
	struct session		*s;		/* held */
	char			*path;
	char			*tmp;		/* the directory being written */
	char			*tgz;		/* tar: the archive being written */
	char			*record;	/* its record in the state dir */
	struct bundle_dir	*dir;		/* where it is made, held */
	bool			 tar;
	bool			 core_wanted;
	const char		*reason;	/* "asked", or an automatic one */
	enum bundle_phase	 phase;
	double			 started_at;
	uint64_t		 t0;		/* uv_now() it began */
	struct bundle_files	*files;
	json_t			*missing;	/* [{what, why}] */
	json_t			*gdb_version;
	bool			 core;		/* gcore wrote "core" */
	bool			 core_made;	/* "core" is there for gcore */
	struct core_map		*board_map;	/* a board core's plan (bundle-core.c) */
	unsigned char		*board_core;	/* its bytes, written last */
	size_t			 board_core_len;
	json_t			*board_info;	/* the manifest's board_core */
	struct timer		*bound;
	struct sink		*sink;		/* the session's end */
	struct bundle_tar	*tarp;
	bundle_cb		 cb;
	void			*arg;
	bool			 automatic;	/* bundle_auto's */
	bundle_then		 then;		/* automatic: what comes after */
	void			*then_arg;
};

/* A core gcore may still write: its file is held until gdb answers or the session goes. */
struct bundle_core {
	unsigned long	 serial;	/* the bundle's */
	int		 fd;
};

/* bundle-dir.c: where a bundle is made, held by descriptors. */
struct bundle_dir;
int		 bundle_dir_safe(const char *dir, const struct stat *,
		    char *err, size_t errlen);
struct bundle_dir *bundle_dir_open(const char *path, struct bundle_error *);
int		 bundle_dir_make(struct bundle_dir *, const char *tmp,
		    struct bundle_error *);
int		 bundle_dir_fd(const struct bundle_dir *);
int		 bundle_dir_create(const struct bundle_dir *, const char *name,
		    int flags);
int		 bundle_dir_archive(struct bundle_dir *, const char *tgz,
		    char *err, size_t errlen);
int		 bundle_dir_place(struct bundle_dir *, const char *path,
		    struct bundle_error *);
void		 bundle_dir_remove(struct bundle_dir *);
void		 bundle_dir_free(struct bundle_dir *);

/* bundle-files.c: a bundle's files, written on the threadpool under a bound. */
struct bundle_files;
typedef void (*bundle_files_cb)(void *arg);

struct bundle_files *bundle_files_new(const char *dir, int dirfd, uint64_t max,
		    bundle_files_cb, void *arg);
int		 bundle_files_error(const struct bundle_files *,
		    const char **why);
void		 bundle_files_text(struct bundle_files *, const char *name,
		    const char *data, size_t len, bool counted);
void		 bundle_files_whole(struct bundle_files *, const char *name,
		    const char *data, size_t len);
void		 bundle_files_copy(struct bundle_files *, const char *name,
		    const char *src);
void		 bundle_files_weigh(struct bundle_files *, const char *name);
void		 bundle_files_run(struct bundle_files *);
json_t		*bundle_files_list(const struct bundle_files *,
		    const char *which);
uint64_t	 bundle_files_used(const struct bundle_files *);
void		 bundle_files_free(struct bundle_files *);

/* bundle-tar.c: a finished bundle archived by tar(1), through the spawn path. */
struct bundle_tar;
/* The archive is made (why NULL), or not. */
typedef void (*bundle_tar_cb)(void *arg, const char *why);
struct bundle_tar *bundle_tar_start(int dirfd, int tgzfd, const char *path,
		    bundle_tar_cb, void *arg, char *err, size_t errlen);
void		 bundle_tar_free(struct bundle_tar *);

/* bundle-record.c: bundles' paths, their records in progress, recovery. */
int		 bundle_path_check(const char *path, struct bundle_error *);
char		*bundle_record_tmp(const char *path);
char		*bundle_record_open(unsigned long serial, const char *path,
		    const char *tmp, const char *tgz, char *err, size_t errlen);
void		 bundle_record_close(const char *rec);
int		 bundle_record_remove_tree(const char *dir);

/* bundle.c */
void	 bundle_missing(struct bundle *, const char *what, const char *why);
void	 bundle_queue(struct bundle *);

/* bundle-gather.c */
void	 bundle_gather(struct bundle *);
void	 bundle_gather_free(struct bundles *);

/* bundle-core.c: a board's core, read by gdb in the gathering's job. */
bool	 bundle_core_ask(struct bundle *, struct gdb_job *);
void	 bundle_core_take(struct bundle *, struct gdb_job *);
char	*bundle_core_command(struct bundle *);
void	 bundle_core_free(struct bundle *);

/* bundle-manifest.c */
json_t	*bundle_manifest(struct bundle *);
json_t	*bundle_result(struct bundle *);
bool	 bundle_manifest_has(struct bundle *, const char *name);

#endif
