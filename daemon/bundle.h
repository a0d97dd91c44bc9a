/*
 * The bundle files' own: a bundle being written, shared by bundle.c (its
 * life), bundle-gather.c (what gdb says) and bundle-manifest.c.
 */
#ifndef DBGCTL_BUNDLE_H
#define DBGCTL_BUNDLE_H

/* A session's bundles: those being written, and its automatic one. */
struct bundles {
	LIST_HEAD(, bundle)	 live;
	bool			 auto_taken;	/* the first trigger took it */
	json_t			*auto_done;	/* {path, reason, time} */
};

/* Where a bundle is. */
enum bundle_phase {
	BUNDLE_GATHER,		/* gdb's answers awaited */
	BUNDLE_FILES,		/* texts, logs and core written */
	BUNDLE_MANIFEST,	/* the manifest written */
	BUNDLE_TAR,		/* the archive made */
};

struct bundle {
	LIST_ENTRY(bundle)	 entry;
	unsigned long		 serial;	/* its gdb job says whose it is */
	struct session		*s;		/* held */
	char			*path;
	char			*tmp;		/* the directory being written */
	char			*tgz;		/* tar: the archive being written */
	char			*record;	/* its record in the state dir */
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
	struct timer		*bound;
	struct sink		*sink;		/* the session's end */
	struct bundle_tar	*tarp;
	bundle_cb		 cb;
	void			*arg;
	bool			 automatic;	/* bundle_auto's */
	bundle_then		 then;		/* automatic: what comes after */
	void			*then_arg;
};

/* bundle.c */
void	 bundle_missing(struct bundle *, const char *what, const char *why);
void	 bundle_queue(struct bundle *);

/* bundle-gather.c */
void	 bundle_gather(struct bundle *);

/* bundle-manifest.c */
json_t	*bundle_manifest(struct bundle *);
json_t	*bundle_result(struct bundle *);
bool	 bundle_manifest_has(struct bundle *, const char *name);

#endif
