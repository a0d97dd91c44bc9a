/*
 * Starting a keeper without copying the daemon: neither its memory (a
 * vfork-like clone) nor its descriptor table. A daemon serving thousands
 * of sessions holds tens of thousands of descriptors; posix_spawn's child
 * gets a copy of every one and closes each again at exec, which made a
 * launch cost grow by a millisecond a thousand sessions. Here the child
 * shares the table, and close_range's CLOSE_RANGE_UNSHARE gives it a
 * private one holding only the few descriptors below the keeper's slots.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* The slots and the stack every keeper spawn uses. */
static struct spawn {
	bool	 ok;
	int	 slot[SPAWN_SLOTS];	/* hold /dev/null between spawns */
	int	 null;
	void	*stack;
} spawn_state;

/* The child's stack: it runs on it until exec, while the daemon waits. */
#define SPAWN_STACK (64 * 1024)

/* What the child needs, in memory it shares with the daemon until exec. */
struct spawn_child {
	const char	*path;
	char	       **argv;
	char	       **env;
	int		 n;		/* descriptors in the slots */
	const int	*target;	/* where each goes in the keeper */
	int		 error;		/* errno of a failure, 0 if it exec'd */
	bool		 unshared;	/* close_range worked: a later failure is exec's */
};

/*
 * Reserve the slots: descriptors at SPAWN_FD_MIN or above that hold
 * /dev/null, and a keeper's pty, socket and transport ends while it is
 * started; below
 * them the daemon has only a few of its own, which are all the child
 * copies. Without them (or the stack) keepers start by posix_spawn.
 */
void
spawn_init(void)
{
	const char	*preload = getenv("LD_PRELOAD");
	int		 i, null;

	spawn_state.ok = false;
	/* valgrind ends a program that clones with these flags: not there. */
	if (preload != NULL && strstr(preload, "vgpreload") != NULL)
		return;
	if ((null = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		return;
	for (i = 0; i < SPAWN_SLOTS; i++)
		if ((spawn_state.slot[i] = fcntl(null, F_DUPFD_CLOEXEC,
		    SPAWN_FD_MIN)) == -1) {
			while (i-- > 0)
				close(spawn_state.slot[i]);
			close(null);
			return;
		}
	spawn_state.null = null;
	spawn_state.stack = mmap(NULL, SPAWN_STACK, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (spawn_state.stack != MAP_FAILED) {
		spawn_state.ok = true;
		return;
	}
	for (i = 0; i < SPAWN_SLOTS; i++)
		close(spawn_state.slot[i]);
	close(null);
}

/*
 * The child, until exec: a table of its own with only the descriptors
 * below the last slot, the slots moved to where the keeper wants them,
 * every signal back to its default and none blocked. It shares the
 * daemon's memory, so it calls nothing but system calls.
 */
static int
spawn_child_main(void *arg)
{
	struct spawn_child	*c = arg;
	struct sigaction	 sa;
	sigset_t		 none;
	int			 i, sig;

	if (close_range((unsigned)spawn_state.slot[SPAWN_SLOTS - 1] + 1, ~0U,
	    CLOSE_RANGE_UNSHARE) != 0)
		goto fail;
	c->unshared = true;
	for (i = 0; i < c->n; i++)
		if (dup2(spawn_state.slot[i], c->target[i]) == -1)
			goto fail;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	/* The daemon ignores SIGPIPE and SIGHUP; the keeper must not. */
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve(c->path, c->argv, c->env);
fail:
	c->error = errno;
	_exit(127);
}

/* Put /dev/null back in the slots, so that they hold nothing open. */
static void
spawn_clear_slots(void)
{
	int i;

	for (i = 0; i < SPAWN_SLOTS; i++)
		if (dup3(spawn_state.null, spawn_state.slot[i],
		    O_CLOEXEC) == -1)
			log_fatal("spawn: cannot clear slot %d: %s",
			    spawn_state.slot[i], strerror(errno));
}

/*
 * Start path with argv and env, src[i] at target[i] for each of n (at most
 * SPAWN_SLOTS), signals at their defaults: its pid, or -1 with errno; 0
 * with errno ENOSYS where this way is not to be had (posix_spawn then).
 */
pid_t
spawn_keeper(const char *path, char **argv, char **env, const int *src,
    const int *target, int n)
{
	struct spawn_child	c = { path, argv, env, n, target, 0, false };
	sigset_t		all, old;
	pid_t			pid;
	int			i, saved;

	if (!spawn_state.ok || n > SPAWN_SLOTS) {
		errno = ENOSYS;
		return 0;
	}
	for (i = 0; i < n; i++)
		if (dup3(src[i], spawn_state.slot[i], O_CLOEXEC) == -1) {
			saved = errno;
			spawn_clear_slots();
			errno = saved;
			return -1;
		}
	/* No handler of the daemon's may run in the child, on its memory. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(spawn_child_main, (char *)spawn_state.stack + SPAWN_STACK,
	    CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, &c);
	saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	spawn_clear_slots();
	if (pid == -1 && (saved == EINVAL || saved == ENOSYS)) {
		/* A clone these flags are refused to (valgrind's, say). */
		log_warn("spawn: clone: %s; keepers start by posix_spawn",
		    strerror(saved));
		spawn_state.ok = false;
		errno = ENOSYS;
		return 0;
	}
	if (pid == -1) {
		errno = saved;
		return -1;
	}
	if (c.error == 0)
		return pid;
	/*
	 * It could not exec. A vfork child has let the daemon go on only
	 * once it called _exit, so this wait does not block the loop.
	 */
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
	if (!c.unshared) {
		/*
		 * close_range's unshare is missing (before 5.9) or refused (a
		 * seccomp filter answers EPERM): posix_spawn from now on.
		 */
		log_warn("spawn: close_range: %s; keepers start by posix_spawn",
		    strerror(c.error));
		spawn_state.ok = false;
		errno = ENOSYS;
		return 0;
	}
	errno = c.error;
	return -1;
}
