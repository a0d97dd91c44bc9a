/*
 * Starting a keeper without copying the daemon: neither its memory (a
 * vfork-like clone) nor its descriptor table. A daemon serving thousands
 * of sessions holds tens of thousands of descriptors; posix_spawn's child
 * gets a copy of every one and closes each again at exec, which made a
 * launch cost grow by a millisecond a thousand sessions. Here the child
 * shares the table, and close_range's CLOSE_RANGE_UNSHARE gives it a
 * private one holding only the few descriptors below the keeper's slots.
 *
 * Where the kernel has clone3's CLONE_INTO_CGROUP (5.7), the keeper is
 * also born in its session's cgroup. Moving a process into a cgroup takes
 * the kernel's cgroup_threadgroup_rwsem for writing, which waits for an
 * RCU grace period unless another move came just before: 19 ms on an idle
 * 2-core machine, on the critical path of every launch after a pause.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/sched.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* Whether this build can start a keeper in its cgroup (x86-64 only). */
#if defined(__x86_64__) && defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
#define SPAWN_INTO 1
#else
#define SPAWN_INTO 0
#endif

/* The slots and the stack every keeper spawn uses. */
static struct spawn {
	bool	 ok;
	bool	 into;			/* clone3 can start one in its cgroup */
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
	spawn_state.into = false;
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
		spawn_state.into = SPAWN_INTO != 0;
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

#if SPAWN_INTO
/*
 * clone3 with the child on its own stack, calling fn(arg) there and
 * exiting with what it returns: the parent's result, the child's pid or
 * -errno. A vfork-like child cannot return through a C function it shares
 * with its parent, so the branch is here; fn and arg ride in registers the
 * system call keeps.
 */
static long
spawn_clone3(struct clone_args *ca, int (*fn)(void *), void *arg)
{
	register int	 (*r12)(void *) __asm__("r12") = fn;
	register void	*r13 __asm__("r13") = arg;
	long		 ret;

	__asm__ volatile (
	    "syscall\n\t"
	    "test %%rax, %%rax\n\t"
	    "jnz 1f\n\t"
	    "xor %%ebp, %%ebp\n\t"
	    "mov %%r13, %%rdi\n\t"
	    "call *%%r12\n\t"
	    "mov %%eax, %%edi\n\t"
	    "mov %[exit], %%eax\n\t"
	    "syscall\n\t"
	    "hlt\n"
	    "1:"
	    : "=a" (ret)
	    : "0" ((long)SYS_clone3), "D" (ca), "S" (sizeof *ca), "r" (r12),
	      "r" (r13), [exit] "i" (SYS_exit)
	    : "rcx", "r11", "memory");
	return ret;
}

/*
 * Start the child in the cgroup cgfd names: its pid, or -1 with errno.
 * The flags are spawn_keeper's clone's.
 */
static pid_t
spawn_into(struct spawn_child *c, int cgfd)
{
	struct clone_args	ca;
	long			ret;

	memset(&ca, 0, sizeof ca);
	ca.flags = CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.stack = (uintptr_t)spawn_state.stack;
	ca.stack_size = SPAWN_STACK;
	ca.cgroup = (unsigned)cgfd;
	ret = spawn_clone3(&ca, spawn_child_main, c);
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return (pid_t)ret;
}
#else
/* No clone3 in reach of this build: never called, as into is false. */
static pid_t
spawn_into(struct spawn_child *c, int cgfd)
{
	(void)c;
	(void)cgfd;
	errno = ENOSYS;
	return -1;
}
#endif

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
 * clone3 could not start a keeper in its cgroup. One the kernel or a
 * seccomp filter refuses (before 5.7, or in a container) is not asked
 * again; any other failure is the keeper's own join's to report.
 */
static void
spawn_into_refused(int error)
{
	if (error != ENOSYS && error != E2BIG && error != EINVAL &&
	    error != EPERM)
		return;
	log_warn("spawn: clone3 into a cgroup: %s; keepers join theirs "
	    "themselves", strerror(error));
	spawn_state.into = false;
}

/*
 * Start path with argv and env, src[i] at target[i] for each of n (at most
 * SPAWN_SLOTS), signals at their defaults, in the cgroup cgfd names unless
 * it is -1: its pid, or -1 with errno; 0 where this way is not to be had:
 * with errno ENOTSUP if it is only the cgroup's (the keeper then joins it
 * itself), ENOSYS otherwise (posix_spawn then).
 */
pid_t
spawn_keeper(const char *path, char **argv, char **env, const int *src,
    const int *target, int n, int cgfd)
{
	struct spawn_child	c = { path, argv, env, n, target, 0, false };
	sigset_t		all, old;
	pid_t			pid;
	int			i, saved;

	if (!spawn_state.ok || n > SPAWN_SLOTS) {
		errno = cgfd != -1 ? ENOTSUP : ENOSYS;
		return 0;
	}
	if (cgfd != -1 && !spawn_state.into) {
		errno = ENOTSUP;
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
	if (cgfd != -1)
		pid = spawn_into(&c, cgfd);
	else
		pid = clone(spawn_child_main, (char *)spawn_state.stack +
		    SPAWN_STACK, CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD,
		    &c);
	saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	spawn_clear_slots();
	if (pid == -1 && cgfd != -1) {
		spawn_into_refused(saved);
		errno = ENOTSUP;
		return 0;
	}
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
