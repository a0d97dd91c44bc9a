/*
 * The test's side of a keeper under test: it spawns the real dbgctl-keeper
 * as a daemon does, reads its lines and fds, and adopts it as a next daemon
 * would.  Every wait is bounded; the fini kills what a failed test left.
 */
#ifndef KEEPER_HARNESS_H
#define KEEPER_HARNESS_H

#include <sys/types.h>

#include <stddef.h>

#define KH_WAIT_MS		10000	/* the bound on every wait */
#define KH_GRACE		"20000"	/* long enough never to end in a test */
#define KH_HOLDS	16	/* the fds a keeper holds at most */

/* Lines and fds read from one stream socket. */
struct kh_reader {
	int	fd;
	char	buf[4096];
	size_t	len;
	int	fds[16];
	size_t	nfds;
};

/* The keeper under test and the daemon's side of it. */
struct kh_keeper {
	char		dir[64];
	char		path[128];
	pid_t		pid;		/* the keeper */
	pid_t		main;		/* its program */
	int		master;		/* the pty's master */
	struct kh_reader ctl;		/* the control socket, or fd -1 */
	pid_t		daemon;		/* its parent, if not the test */
	int		daemon_fd;	/* its end when closed */
};

long long	kh_now_ms(void);
void		kh_nap(void);
int		kh_reader_fill(struct kh_reader *);
int		kh_reader_line(struct kh_reader *, char *, size_t);
void		kh_reader_expect(struct kh_reader *, const char *);
void		kh_reader_expect_eof(struct kh_reader *);
void		kh_send_line(int, const char *, int);
void		kh_send_fds(int, const char *, const int *, size_t);
void		kh_say(int, const char *);
void		kh_start_via(struct kh_keeper *, const char *, const char *,
		    int);
void		kh_start(struct kh_keeper *, const char *, const char *);
void		kh_drop(struct kh_keeper *);
int		kh_connect(const char *);
void		kh_adopt(struct kh_keeper *, struct kh_reader *);
void		kh_wait_exit(struct kh_keeper *);
int		kh_gone(pid_t);
void		kh_wait_gone(pid_t);
pid_t		kh_read_pid(struct kh_keeper *, const char *);
void		kh_expect_eof(int);
void		kh_expect_through(int, int);
void		kh_expect_no_socket(pid_t);
void		kh_fini(void);
void		kh_daemon_exit(struct kh_keeper *);

#endif
