"""Run a program for as long as the process holding a pipe's other end.

``python3 lifeline.py FD PROGRAM [ARG...]`` runs PROGRAM and waits.  FD is
the read end of a pipe whose write end only the starting process holds:
when that process dies, however (SIGKILL too), the pipe reads end of file
and PROGRAM gets SIGTERM, then SIGKILL after ``GRACE`` seconds.  PROGRAM
gets SIGTERM too if this process dies (``PR_SET_PDEATHSIG``), or on its
SIGTERM, SIGINT or SIGHUP.  It exits as PROGRAM does (128 + N for a signal).

The pytest plugin runs its private dbgctld under it, so that a killed
pytest leaves no daemon, and so no session, behind.  A pipe, not the
daemon's own ``PR_SET_PDEATHSIG``, because the death signal follows the
thread that forked, not the process, and forking from pytest (whose
clients run reader threads) must not run Python code in the child; here
there is one thread when the program is started.  Standard library only,
run by its path: it imports nothing of the package.
"""

import ctypes
import os
import signal
import subprocess
import sys
import threading

#: Seconds from SIGTERM to SIGKILL once the holder has gone.
GRACE = 30.0

PR_SET_PDEATHSIG = 1


def lifeline_deathsig(libc, parent):
    """In the child before exec: SIGTERM when this process dies, and now
    if it already has (the fork raced its death)."""
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def lifeline_reap(child):
    """Exit as the child does, once it has ended."""
    code = child.wait()
    os._exit(128 - code if code < 0 else code)


def lifeline_forward(child):
    """Pass a signal to this process on to the child as SIGTERM."""
    def handler(signum, frame):
        child.send_signal(signal.SIGTERM)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, handler)


def lifeline_hold(fd):
    """Return once the pipe's write end is closed everywhere."""
    while True:
        try:
            if not os.read(fd, 4096):
                return
        except OSError:
            return


def main(argv):
    """Run the program until it ends or the pipe's holder goes."""
    if len(argv) < 3 or not argv[1].isdigit():
        sys.stderr.write("usage: lifeline.py FD PROGRAM [ARG...]\n")
        return 2
    fd = int(argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    me = os.getpid()
    try:
        child = subprocess.Popen(argv[2:], stdin=subprocess.DEVNULL,
                                 preexec_fn=lambda: lifeline_deathsig(libc,
                                                                      me))
    except OSError as e:
        sys.stderr.write("lifeline: %s: %s\n" % (argv[2], e.strerror))
        return 127
    lifeline_forward(child)
    threading.Thread(target=lifeline_reap, args=(child,),
                     daemon=True).start()
    lifeline_hold(fd)
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(GRACE)
    except subprocess.TimeoutExpired:
        child.kill()
    # The reaper exits with the child's status; wait for it to.
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
