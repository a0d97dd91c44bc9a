"""pytest fixtures for test rigs that drive dbgctld.

Loaded by its ``pytest11`` entry point ``dbgctl`` when the package is
installed, or with ``-p dbgctl.pytest_plugin``.

``dbgctl_client``
    A :class:`dbgctl.Client` for the whole run.  It connects to the daemon
    that ``--dbgctl-socket`` or ``DBGCTL_SOCKET`` names; otherwise it runs a
    private dbgctld in a temporary directory (the binary from ``PATH``, or
    ``--dbgctl PATH``, a binary or the directory holding it) and shuts it
    down at the end of the run.

``dbgctl_launch``
    A factory taking :meth:`dbgctl.Client.launch`'s arguments.  Its
    sessions are leased to the run's connection, so they end if pytest
    dies; they are stopped when the test ends, and the teardown fails the
    test if any process of them is still alive then.  When a test fails,
    its report gets a section per session with the tail of the console log
    and the fault record.
"""

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from .client import Client
from .errors import Error

#: Lines of console log a failure report shows per session.
LOG_LINES = 40

#: Seconds a private daemon has to start listening.
START_TIMEOUT = 10.0


def pytest_addoption(parser):
    """Declare the plugin's command-line options."""
    group = parser.getgroup("dbgctl", "dbgctl debugger sessions")
    group.addoption("--dbgctl-socket", metavar="PATH", default=None,
                    help="use the dbgctld on this socket instead of a "
                         "private one (default: $DBGCTL_SOCKET)")
    group.addoption("--dbgctl", metavar="PATH", default=None,
                    dest="dbgctl_bin",
                    help="the dbgctld binary for a private daemon, or the "
                         "directory holding it (default: from PATH)")


def _daemon_binary(opt):
    """The dbgctld a private daemon runs, from ``--dbgctl`` or PATH."""
    if opt and os.path.isdir(opt):
        opt = os.path.join(opt, "dbgctld")
    path = opt or shutil.which("dbgctld")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("dbgctl: no dbgctld binary (%s); give --dbgctl PATH"
                    % (opt or "not in PATH"), pytrace=False)
    return path


def _start(binary, tmp, argv):
    """Start dbgctld in ``tmp``; return (process, socket path, log path)."""
    sock = os.path.join(tmp, "sock")
    run = os.path.join(tmp, "run")
    os.makedirs(run, mode=0o700)
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state"),
               XDG_RUNTIME_DIR=run, DBGCTL_SOCKET=sock)
    log = os.path.join(tmp, "dbgctld.log")
    with open(log, "wb") as out:
        proc = subprocess.Popen([binary, "--foreground", "--listen",
                                 "unix:" + sock] + list(argv), env=env,
                                stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT,
                                start_new_session=True)
    return proc, sock, log


def _connect(proc, sock, log):
    """Connect to a starting daemon, bounded by START_TIMEOUT."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            return Client(socket=sock, autostart=False)
        except Error:
            if proc.poll() is not None or time.monotonic() > deadline:
                with open(log, errors="replace") as f:
                    said = f.read()[-2000:].strip()
                raise RuntimeError("dbgctl: the private dbgctld did not "
                                   "come up: %s" % (said or "no output"))
            time.sleep(0.02)


def _end(client, proc):
    """Shut a daemon down and reap it; kill it if it will not go."""
    try:
        client.shutdown()
    except (Error, OSError):
        pass
    client.close()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def private_daemon(binary, tmp, argv=()):
    """Run dbgctld with its socket and state in the directory ``tmp``.

    ``argv`` is added to its command line (more ``--listen`` addresses, a
    ``--token-file``).  Yields a :class:`dbgctl.Client` on its Unix socket
    (``client.address``); on leaving, the daemon is shut down, or killed if
    it will not go.  For rigs that want a daemon of their own beside the
    fixtures'.
    """
    proc, sock, log = _start(binary, tmp, argv)
    try:
        client = _connect(proc, sock, log)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    try:
        yield client
    finally:
        _end(client, proc)


@pytest.fixture(scope="session")
def dbgctl_client(pytestconfig):
    """A dbgctl.Client for the whole run (see the module's docstring)."""
    sock = pytestconfig.getoption("dbgctl_socket") or \
        os.environ.get("DBGCTL_SOCKET")
    if sock:
        client = Client(socket=sock)
        yield client
        client.close()
        return
    binary = _daemon_binary(pytestconfig.getoption("dbgctl_bin"))
    tmp = tempfile.mkdtemp(prefix="dbgctl-pytest-")
    try:
        with private_daemon(binary, tmp) as client:
            yield client
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _pids(record):
    """Every process id a session object names."""
    pids = [record.get(k) for k in ("pid", "keeper_pid", "inferior_pid")]
    pids.append((record.get("server") or {}).get("pid"))
    return [p for p in pids if isinstance(p, int) and p > 0]


def alive(pid):
    """Whether ``pid`` is a process that has not exited (zombies count
    as gone: their parent has not reaped them yet)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:][:1] not in ("Z", "X")


def _report_section(session):
    """The failure report's text for one session: log tail and fault."""
    try:
        record = session.status()
        tail = session.logs(lines=LOG_LINES)["data"]
    except (Error, OSError) as e:
        return "(the session cannot be read: %s)" % e
    text = "state: %s\n" % record.get("state")
    fault = record.get("fault")
    if fault:
        text += "fault: %s\n" % json.dumps(fault, indent=2, sort_keys=True)
    text += "console (last %d lines):\n" % LOG_LINES
    return text + tail.decode(errors="replace").replace("\r\n", "\n")


class _Launcher:
    """The dbgctl_launch factory: launches leased sessions, keeps them."""

    def __init__(self, client):
        self.client = client
        self.sessions = []

    def __call__(self, argv, **kw):
        """Launch as Client.launch does, leased; return the Session."""
        kw.setdefault("lease", True)
        s = self.client.launch(argv, **kw)
        self.sessions.append(s)
        return s

    def stop_all(self):
        """Stop every session; return what is still alive afterwards."""
        left = []
        for s in self.sessions:
            pids = _pids(s.record)
            try:
                pids += _pids(s.status())
                s.stop()
            except Error as e:
                left.append("session %s: stop failed: %s" % (s.id, e))
            running = sorted({p for p in pids if alive(p)})
            if running:
                left.append("session %s: still alive after stop: %s"
                            % (s.id, " ".join(map(str, running))))
        return left


@pytest.fixture
def dbgctl_launch(request, dbgctl_client):
    """Launch sessions for one test; they are stopped when it ends."""
    launcher = _Launcher(dbgctl_client)
    request.node._dbgctl_launcher = launcher
    yield launcher
    left = launcher.stop_all()
    if left:
        pytest.fail("dbgctl: " + "; ".join(left), pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach each session's log tail and fault to a failing test."""
    outcome = yield
    rep = outcome.get_result()
    launcher = getattr(item, "_dbgctl_launcher", None)
    if launcher is None or not rep.failed:
        return
    for s in launcher.sessions:
        title = "dbgctl session %s" % s.id
        if s.name:
            title += " (%s)" % s.name
        rep.sections.append((title, _report_section(s)))
