/*
 * Adoption: the sessions a dead daemon left, waiting in their keepers,
 * taken over by this one (adopt.c), and the record each session leaves in
 * the state directory for that (session-record.c).
 */
#ifndef DBGCTL_ADOPT_H
#define DBGCTL_ADOPT_H

#include "daemon.h"

/* How long (s) a dead daemon's keepers wait for the next, unless told. */
#define ADOPT_GRACE_DEFAULT 30
/* The most descriptors one keeper holds, as the keeper takes them. */
#define ADOPT_HOLD_MAX 16
/* The longest name of one, with its NUL. */
#define ADOPT_NAME_MAX 32

/* What one keeper handed over when it was adopted. */
struct adopt_keeper {
	bool		 present;
	pid_t		 pid;
	int		 ctl;		/* the connection: its control socket now */
	char		 names[ADOPT_HOLD_MAX][ADOPT_NAME_MAX];
	int		 fds[ADOPT_HOLD_MAX];
	size_t		 nfds;
	char		*reports;	/* what it says of its program */
	size_t		 reportslen;
	/* While it hands over (adopt-keeper.c). */
	char		*path;
	pid_t		 peer;		/* the pid its socket says */
	bool		 busy;		/* its daemon held it when asked */
	struct timer	*retry;
	uv_poll_t	*poll;
	struct timer	*timer;
	char		*text;
	size_t		 have;
	void		(*done)(struct adopt_keeper *, const char *err);
	void		*arg;
};

/* One session being adopted: its record and its keepers, by process. */
struct adopt {
	TAILQ_ENTRY(adopt)	 entry;		/* adopt.c: ready to enter */
	unsigned long		 id;
	json_t			*record;
	struct adopt_keeper	 keepers[SESSION_MAXPROCS];
	size_t			 waiting;	/* keepers still handing over */
};

/* adopt.c */
void		 adopt_start(void (*done)(void));
int		 adopt_sock_path(unsigned long id, size_t n, char *, size_t);
int		 adopt_take_fd(size_t n, const char *name);
int		 adopt_take_fd_any(const char *name);
struct proc	*adopt_take_proc(size_t n, const char *exec_name, proc_cb,
		    void *arg);

/* adopt-keeper.c: one keeper's socket, its check and its hand-over. */
int		 adopt_keeper_begin(const char *path, struct adopt_keeper *,
		    void (*done)(struct adopt_keeper *, const char *),
		    void *arg, char *err, size_t errlen);
void		 adopt_keeper_close(struct adopt_keeper *);

/* session-record.c */
void		 session_record_write(struct session *);
void		 session_record_note(struct session *);
json_t		*session_record_read(unsigned long id);
void		 session_record_remove(unsigned long id);
void		 session_record_ended(struct sink *, struct session *,
		    const struct session_event *);

#endif
