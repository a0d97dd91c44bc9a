"""pytest fixtures for test rigs that drive dbgctld.

Loaded by its ``pytest11`` entry point ``dbgctl`` when the package is
installed, or with ``-p dbgctl.pytest_plugin``.

``dbgctl_client``
    A :class:`dbgctl.Client` for the whole run.  It connects to the daemon
    of a rig host that ``--dbgctl-host`` or ``DBGCTL_HOST`` names
    (``ssh://[user@]host[:port][/socket]``, through ssh as dbgctl(1) does,
    or ``tcp:HOST:PORT`` with ``DBGCTL_TOKEN_FILE``), else to the one that
    ``--dbgctl-socket`` or ``DBGCTL_SOCKET`` names; otherwise it runs a
    private dbgctld in a directory under pytest's basetemp (the binary from
    ``PATH``, or ``--dbgctl PATH``, a binary or the directory holding it)
    and shuts it down at the end of the run.  The private daemon goes when
    the pytest process that started it dies, SIGKILL included (it runs
    under ``dbgctl/lifeline.py``), and its sessions get ``TERM=dumb``
    unless their launch's ``env`` sets ``TERM``.

``dbgctl_launch``
    A factory taking :meth:`dbgctl.Client.launch`'s arguments.  Its
    sessions are leased to the run's connection, so they end if pytest
    dies; they are stopped when the test ends, and the teardown fails the
    test if any process of them is still alive then.

``dbgctl_firmware``
    A factory that runs a firmware to its end as the test's verdict:
    ``dbgctl_firmware(elf, machine="lm3s6965evb", timeout=60.0, **launch)``
    launches it as ``dbgctl_launch`` does, ``kind="qemu"`` with
    ``semihosting=True``, waits for the firmware's ``SYS_EXIT`` and
    returns the ended Session; a status other than 0 fails the test with
    it (``firmware ... exited with code 3 by semihosting``) and the
    semihosting console's last lines, and so does a session that ended
    otherwise.  A failure's report shows the firmware's exit and the
    ``semihost`` stream's tail too, for any session that has them.

Failure reports
    When a test fails, its report gets a section for every session it
    touched, whoever launched it: the fixtures, a session-scoped board
    fixture, a labgrid driver, ``dbgctl_client.launch`` in the test.  A
    session is touched when any :class:`dbgctl.Client` of the process
    launches it or drives it during the test's setup, call or teardown
    (launch, write, read, expect, exec, run control, breakpoints set or
    deleted, a memory write, signal, stop: see
    :func:`dbgctl.client.drives`; reading it with ``status``, ``logs``,
    :meth:`dbgctl.Client.session`, ``registers``, ``eval``, a memory
    read or a breakpoint list does not count), or when a
    Session of it is one of the test function's own arguments (or an
    attribute of one); a fixture the test uses that only holds or reads
    it does not make it the test's.  The section holds
    the session's state, its fault as a summary (signal or location, the
    decoded CFSR and HFSR bits, the faulting function and line), and the
    last ``LOG_LINES`` lines of its target stream (for a session with a
    transport), of its semihosting console (for one with semihosting)
    and of its console, as plain text: escape sequences
    removed, CR LF, LF CR and lone CRs made one LF each, other control
    characters dropped.  For a session that was there before the test
    began, the tails start no earlier than the offsets its streams had at
    the test's setup, so a board shared by many tests shows what this test
    made of it.  The full fault record (registers and all) is a second
    section, ``dbgctl session N fault record``.  The tails are also the
    test's ``user_properties`` ``dbgctl_target_N``,
    ``dbgctl_semihost_N`` and ``dbgctl_console_N``, which the JUnit XML holds.  Code that drives
    sessions through its own Client needs nothing more; it is seen by
    :func:`dbgctl.client.watch_sessions`.  A failed call's traceback
    leaves out the package's frames (``__tracebackhide__``), ending at
    the caller's line.

Deadlines
    ``--dbgctl-deadline=SECONDS``, or the marker
    ``@pytest.mark.dbgctl_deadline(SECONDS)`` on a test (which wins),
    gives every running session the test drives a deadline (see
    ``deadline`` in dbgctl-protocol(7)) SECONDS after the test's setup
    began, when the test first drives it, unless the session's own
    deadline (a launch's ``deadline``, say) comes first; once the test's
    teardown is done, each session it gave one gets back the deadline it
    had before (or none), so that a board shared with later tests lives
    on with its own safety net.  A deadline the test moved or cleared
    itself is left as it is.  At the deadline the daemon records its verdict
    and stops the session, or holds it when it was launched with
    ``on_deadline="hold"``.

When a test fails (see :mod:`dbgctl.plugin_failure`)
    ``--dbgctl-hold-on-failure[=SECONDS]`` halts and holds every running
    session the failing test touched, for SECONDS or the daemon's hold
    time, and its section says how to look at it (``dbgctl attach``,
    ``logs``, ``mi``); ``dbgctl_launch`` leaves such a session for its
    hold, and a private daemon with held sessions stays after the run
    until the last hold has ended; so does a labgrid ``DbgctlDriver``'s
    held session when the driver is deactivated.  The report's commands
    carry the address the run used.  ``--dbgctl-artifacts DIR`` has the
    daemon write each such session's bundle under DIR, gives every
    session a Client of the process launches ``artifacts=DIR`` unless its
    launch names its own (the daemon then bundles it at a verdict, a
    fault, or a killed pytest's lease's end), and bundles the running
    test's sessions, named after the test, when the run is interrupted.
    The verdict, every bundle written for the session while the test ran
    (the plugin's and the daemon's own, waited for if the daemon is still
    writing it: one a session, at its first verdict or fault, for a
    session a Client of the process launched) and the hold of each
    session go
    into the test's ``user_properties``, which the JUnit XML holds:
    ``dbgctl_verdict_N``, ``dbgctl_bundle_N``, ``dbgctl_held_N``.
    ``--dbgctl-record`` records every qemu board a Client of the process
    launches on a machine that can record (QEMU's record/replay;
    plugin_failure.RECORD_MACHINES; a board of another machine launches
    unrecorded): a failing test's section then says how to replay its
    bundle (``dbgctl replay PATH``) and ``dbgctl_recording_N`` holds the
    recording's path.  Any bundle of a recording board, the daemon's
    automatic one at a first fault or verdict too, ends its QEMU: a test
    that faults its board on purpose and then inspects or resets it fails
    under the option.
"""

import base64
import contextlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import weakref

import pytest

from . import plugin_failure
from .client import Client, Session, watch_launches, watch_sessions
from .errors import Error

#: Lines of each stream a failure report shows per session.
LOG_LINES = 40

#: The most bytes of each stream a failure report shows per session.
TAIL_BYTES = 64 * 1024

#: Seconds a private daemon has to start listening.
START_TIMEOUT = 10.0

#: The longest socket path put under basetemp (sun_path holds 108 bytes).
SOCKET_PATH_MAX = 100

#: Seconds two readings of one deadline's ``at`` may differ by (the daemon
#: gives it from its clock at each request).
DEADLINE_SLACK = 1.0

#: The watcher a private daemon runs under (see its docstring).
LIFELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "lifeline.py")


def pytest_addoption(parser):
    """Declare the plugin's command-line options."""
    group = parser.getgroup("dbgctl", "dbgctl debugger sessions")
    group.addoption("--dbgctl-socket", metavar="PATH", default=None,
                    help="use the dbgctld on this socket instead of a "
                         "private one (default: $DBGCTL_SOCKET)")
    group.addoption("--dbgctl-host", metavar="ADDRESS", default=None,
                    help="use the dbgctld of a rig host: ssh://[USER@]HOST"
                         "[:PORT][/SOCKET] through ssh, or tcp:HOST:PORT "
                         "(default: $DBGCTL_HOST)")
    group.addoption("--dbgctl", metavar="PATH", default=None,
                    dest="dbgctl_bin",
                    help="the dbgctld binary for a private daemon, or the "
                         "directory holding it (default: from PATH)")
    group.addoption("--dbgctl-deadline", metavar="SECONDS", default=None,
                    type=float, dest="dbgctl_deadline",
                    help="give every session a test drives a deadline "
                         "SECONDS after the test's setup began (a verdict "
                         "then; see the dbgctl_deadline marker)")
    plugin_failure.add_options(group)


def _daemon_binary(opt):
    """The dbgctld a private daemon runs, from ``--dbgctl`` or PATH."""
    if opt and os.path.isdir(opt):
        opt = os.path.join(opt, "dbgctld")
    path = opt or shutil.which("dbgctld")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("dbgctl: no dbgctld binary (%s); give --dbgctl PATH"
                    % (opt or "not in PATH"), pytrace=False)
    return path


def _socket_dir(tmp):
    """Where the socket goes: ``tmp``, unless the path would be too long
    for a Unix socket, as under a deep basetemp; then a short directory
    of its own (the caller removes it)."""
    if len(os.path.join(tmp, "sock").encode()) <= SOCKET_PATH_MAX:
        return tmp, None
    short = tempfile.mkdtemp(prefix="dbgctl-")
    return short, short


def _start(binary, tmp, argv):
    """Start dbgctld in ``tmp`` under the lifeline; return (process, socket
    path, log path, the lifeline's write end, a socket directory to
    remove)."""
    where, extra = _socket_dir(tmp)
    sock = os.path.join(where, "sock")
    run = os.path.join(where, "run")
    os.makedirs(run, mode=0o700)
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state"),
               XDG_RUNTIME_DIR=run, DBGCTL_SOCKET=sock)
    # Without TERM the daemon gives its sessions TERM=dumb, so programs
    # do not colour what the report shows; a launch's env still sets it.
    env.pop("TERM", None)
    log = os.path.join(tmp, "dbgctld.log")
    r, w = os.pipe()
    try:
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable or "python3", LIFELINE, str(r), binary,
                 "--foreground", "--listen", "unix:" + sock] + list(argv),
                env=env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, pass_fds=(r,),
                start_new_session=True)
    except BaseException:
        os.close(w)
        raise
    finally:
        os.close(r)
    return proc, sock, log, w, extra


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


def _reap(proc, lifeline):
    """Wait for the daemon's lifeline to exit, killing it (and so the
    daemon) if it will not go, then let go of its pipe."""
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    os.close(lifeline)


def _end(client, proc, lifeline):
    """Shut a daemon down and reap it; kill it if it will not go."""
    try:
        client.shutdown()
    except (Error, OSError):
        pass
    client.close()
    _reap(proc, lifeline)


@contextlib.contextmanager
def private_daemon(binary, tmp, argv=(), keep=None):
    """Run dbgctld with its socket and state in the directory ``tmp``.

    ``argv`` is added to its command line (more ``--listen`` addresses, a
    ``--token-file``).  Yields a :class:`dbgctl.Client` on its Unix socket
    (``client.address``); on leaving, the daemon is shut down, or killed if
    it will not go.  It also goes if this process dies, and its sessions
    get ``TERM=dumb`` unless their launch's ``env`` sets it.  For rigs
    that want a daemon of their own beside the fixtures'.

    ``keep(client, socket, lifeline)``, if given, is asked on leaving
    whether the daemon stays: true when it took the lifeline (a write
    end it passes on) to end the daemon later itself.
    """
    proc, sock, log, lifeline, extra = _start(binary, tmp, argv)
    kept = False
    try:
        try:
            client = _connect(proc, sock, log)
        except BaseException:
            proc.kill()
            _reap(proc, lifeline)
            raise
        try:
            yield client
        finally:
            kept = keep is not None and keep(client, sock, lifeline)
            if kept:
                client.close()
                os.close(lifeline)
            else:
                _end(client, proc, lifeline)
    finally:
        if extra is not None and not kept:
            shutil.rmtree(extra, ignore_errors=True)


@pytest.fixture(scope="session")
def dbgctl_client(pytestconfig, tmp_path_factory):
    """A dbgctl.Client for the whole run (see the module's docstring)."""
    host = pytestconfig.getoption("dbgctl_host") or \
        os.environ.get("DBGCTL_HOST")
    sock = pytestconfig.getoption("dbgctl_socket") or \
        os.environ.get("DBGCTL_SOCKET")
    if host:
        try:
            client = Client(connect=host)
        except (Error, ValueError) as e:
            pytest.fail("dbgctl: %s" % e, pytrace=False)
        yield client
        client.close()
        return
    if sock:
        client = Client(socket=sock)
        yield client
        client.close()
        return
    binary = _daemon_binary(pytestconfig.getoption("dbgctl_bin"))
    tmp = str(tmp_path_factory.mktemp("dbgctl"))
    keep = plugin_failure.keep_for_holds \
        if pytestconfig.getoption("dbgctl_hold", None) is not None else None
    with private_daemon(binary, tmp, keep=keep) as client:
        yield client


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


class _Launcher:
    """The dbgctl_launch factory: launches leased sessions, keeps them."""

    def __init__(self, client, held=()):
        self.client = client
        self.sessions = []
        self.held = held

    def __call__(self, argv, **kw):
        """Launch as Client.launch does, leased (and, as every launch of
        the run, with its ``--dbgctl-artifacts``); return the Session."""
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
                # A failing test's session held for it stays for its hold.
                if (self.client, s.id) in self.held:
                    continue
                record = s.status()
                pids += _pids(record)
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
    launcher = _Launcher(dbgctl_client, request.config._dbgctl_held)
    yield launcher
    left = launcher.stop_all()
    if left:
        pytest.fail("dbgctl: " + "; ".join(left), pytrace=False)


def _firmware_tail(session):
    """The semihosting console's last lines, as plain text, for a
    failure's message."""
    try:
        data = session.logs(lines=LOG_LINES, max=TAIL_BYTES,
                            stream="semihost")["data"]
    except Error:
        return ""
    text = plain(data)
    return "; its semihosting console ends:\n" + text if text else ""


@pytest.fixture
def dbgctl_firmware(dbgctl_launch):
    """Run a firmware to its semihosting exit; a status other than 0
    fails the test (see the module's docstring)."""

    def run(elf, machine="lm3s6965evb", timeout=60.0, **kw):
        """Launch ``elf`` under QEMU with semihosting, wait for its end,
        return the Session; fail the test unless it exited with 0."""
        kw.setdefault("kind", "qemu")
        kw.setdefault("semihosting", True)
        s = dbgctl_launch([elf], machine=machine, **kw)
        try:
            code = s.semihost.wait_exit(timeout)
        except Error as e:
            pytest.fail("dbgctl: firmware %s: %s%s" % (elf, e,
                                                      _firmware_tail(s)),
                        pytrace=False)
        if code != 0:
            pytest.fail("dbgctl: firmware %s exited with code %s by "
                        "semihosting%s" % (elf, code, _firmware_tail(s)),
                        pytrace=False)
        return s

    return run


# Which sessions a test touched, and where their streams stood.

#: The streams a report shows, in its order.
STREAMS = ("target", "semihost", "console")


class _Track:
    """One session seen in this process: a client to read it through, and
    its streams' sizes at the current test's setup."""

    def __init__(self, client, session):
        self.client = weakref.ref(client)
        # How to connect again if that client is closed by then.
        self.again = getattr(client, "_again", None)
        self.session = session
        self.start = {}
        self.absent = set()
        self.ended = False
        # Launched by a client of this process with ``artifacts``: the
        # daemon writes its automatic bundle at a verdict or a fault.
        self.artifacts = False


class _Seen:
    """The sessions this process's clients touched: every one since the
    run began, and those of the running test."""

    def __init__(self):
        self.lock = threading.Lock()
        self.tracks = {}
        self.touched = set()
        self.quiet = threading.local()
        # The running test: its node id, and when its deadline (if it has
        # one) runs out, by time.monotonic().
        self.current = None
        self.deadline_at = None
        # The sessions the running test drove while it had a deadline:
        # key -> None, or, for one given the test's deadline, (a weak
        # reference to the client that did, the session, the deadline's
        # "at" as given, when the session's own deadline runs out by
        # time.monotonic() or None).
        self.timed = {}

    def hear(self, client, session):
        """The watch_sessions hook: note a session the test drives now,
        unless the plugin is the one asking, and give it the test's
        deadline."""
        if getattr(self.quiet, "on", False):
            return
        self.note(client, session)
        self.give_deadline(client, session)

    def give_deadline(self, client, session):
        """Give a session the running test drives the test's deadline,
        once a test: the time left of it (see ``deadline`` in
        dbgctl-protocol(7)), unless the session's own deadline (a
        launch's, say) comes first; one that is not running keeps none."""
        key = (repr(client.address), session)
        with self.lock:
            if self.deadline_at is None or key in self.timed:
                return
            self.timed[key] = None
            left = self.deadline_at - time.monotonic()
        with self.reading():
            try:
                had = client.call("status", {"session": session}).get(
                    "deadline")
                asked = time.monotonic()
                if had is not None and had.get("in_ms", 0) <= left * 1000:
                    return
                res = client.call("deadline", {
                    "session": session, "ms": max(1, int(left * 1000))})
            except Error:
                return
        given = res.get("deadline") or {}
        # What to put back at the end: the session's own deadline, by
        # this clock (a rig host's may differ), or none.
        old = None if had is None else asked + had["in_ms"] / 1000.0
        with self.lock:
            if key in self.timed:
                self.timed[key] = (weakref.ref(client), session,
                                   given.get("at"), old)

    def end_deadlines(self):
        """At a test's end: put back the deadline each session had before
        the test gave it its own (none, if it had none), so that a board
        shared with later tests lives on with its own safety net; one the
        test moved or cleared itself is left as the test left it."""
        with self.lock:
            timed = [t for t in self.timed.values() if t is not None]
            self.timed, self.deadline_at = {}, None
        with self.reading():
            for ref, session, given, old in timed:
                client = ref()
                if client is None or getattr(client, "_closed", False):
                    continue
                try:
                    now = client.call("status", {"session": session}).get(
                        "deadline")
                    if now is None or given is None or \
                            abs(now.get("at", 0) - given) > DEADLINE_SLACK:
                        continue
                    ms = 0 if old is None else \
                        max(1, int((old - time.monotonic()) * 1000))
                    client.call("deadline", {"session": session, "ms": ms})
                except Error:
                    pass

    def note(self, client, session):
        """Note a session the running test touched."""
        key = (repr(client.address), session)
        with self.lock:
            track = self.tracks.get(key)
            if track is None:
                self.tracks[key] = track = _Track(client, session)
            elif _live_client(track) is None:
                # Keep a client that stays open (not a wait's own
                # connection, closed when it has its answer).
                track.client = weakref.ref(client)
                track.again = getattr(client, "_again", track.again)
            if getattr(client, "_artifacts", {}).get(session):
                track.artifacts = True
            self.touched.add(key)

    @contextlib.contextmanager
    def reading(self):
        """Leave the plugin's own requests out of what tests touched."""
        was = getattr(self.quiet, "on", False)
        self.quiet.on = True
        try:
            yield
        finally:
            self.quiet.on = was

    def begin(self, item, seconds=None):
        """At a test's setup: forget what the last test touched, start
        its deadline of ``seconds`` if it has one, and note where each
        session's streams stand now."""
        with self.lock:
            self.touched = set()
            self.current = item.nodeid
            self.deadline_at = None if seconds is None else \
                time.monotonic() + seconds
            tracks = list(self.tracks.values())
        with self.reading():
            for track in tracks:
                _mark(track)

    def test_tracks(self, item):
        """The tracks of the sessions ``item`` touched, one per session."""
        funcargs = getattr(item, "funcargs", {})
        for name in _own_args(item):
            for s in _sessions_in(funcargs.get(name)):
                if s.id is not None:
                    self.note(s.client, s.id)
        with self.lock:
            return [t for k, t in self.tracks.items() if k in self.touched]


def _own_args(item):
    """The names of the test function's own arguments: not the fixtures
    they depend on, nor autouse ones (a fixture that only reads a shared
    board does not make it the test's)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is not None:
        return list(info.argnames)
    try:
        return list(inspect.signature(item.obj).parameters)
    except (AttributeError, TypeError, ValueError):
        return []


def _sessions_in(value):
    """The Sessions a fixture value is or holds as an attribute."""
    if isinstance(value, Session):
        return [value]
    try:
        attrs = vars(value).values()
    except TypeError:
        return []
    found = []
    for a in attrs:
        if isinstance(a, Session):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found += [s for s in a if isinstance(s, Session)]
    return found


def _live_client(track):
    """The track's client, if it is still open."""
    client = track.client()
    if client is None or getattr(client, "_closed", False) or \
            getattr(client, "_lost", None) is not None:
        return None
    return client


def _mark(track):
    """Note the sizes of a running session's streams for this test; an
    ended session's stay as they were noted once it had ended."""
    if track.ended:
        return
    track.start = {}
    client = _live_client(track)
    if client is not None:
        _mark_through(client, track)
        return
    if track.again is None:
        return
    try:
        with Client(**track.again) as fresh:
            _mark_through(fresh, track)
    except (Error, OSError):
        # Its daemon is gone: nothing of it can be read again.
        track.ended = True


def _mark_through(client, track):
    """Note the sizes of a session's streams, asked through ``client``."""
    for stream in STREAMS:
        if stream in track.absent:
            continue
        try:
            res = client.call("logs", _logs_params(track.session, stream,
                                                   lines=0))
        except Error as e:
            if e.kind == "not_supported":
                track.absent.add(stream)
            continue
        track.start[stream] = res.get("size", 0)
        track.ended = track.ended or bool(res.get("ended"))


def _logs_params(session, stream, **params):
    """The params of a logs request of ``stream`` (console by default)."""
    p = {"session": session}
    if stream != "console":
        p["stream"] = stream
    p.update(params)
    return p


# The report.

# Escape sequences: CSI (ESC [ or the C1 byte), OSC to BEL or ST; DCS,
# SOS, PM and APC to ST; and the rest, ESC with intermediates and a final
# byte (charset selects ESC ( B, keypad modes, ESC 7 ...); one cut off at
# the end of the bytes shown.
_ESCAPE = re.compile(r"""
      (?:\x1b\[|\x9b) [0-?]* [ -/]* [@-~]
    | (?:\x1b\]|\x9d) [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)?
    | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f]) [^\x1b\x9c]* (?:\x1b\\|\x9c)?
    | \x1b [ -/]* [0-~]
    | \x1b (?:\[[0-?]*[ -/]*)? $
""", re.X)

# Line ends as a terminal's output has them: CR LF, LF CR, a lone CR.
_LINE_END = re.compile(r"\r*\n\r*|\r+")

# Control characters left once escapes are gone, but for tab and LF.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(data):
    """A stream's bytes as plain text for a report: decoded as UTF-8
    (bad bytes replaced), escape sequences removed, every CR LF, LF CR or
    lone CR an LF, and other control characters but tab dropped."""
    text = data.decode("utf-8", errors="replace")
    text = _ESCAPE.sub("", text)
    text = _LINE_END.sub("\n", text)
    return _CONTROL.sub("", text)


def _tail(client, session, stream, start):
    """The last lines of a stream, none before ``start``; None when the
    session has no such stream."""
    try:
        res = client.call("logs", _logs_params(session, stream,
                                               lines=LOG_LINES,
                                               max=TAIL_BYTES))
        if res.get("next_offset", 0) < res.get("size", 0):
            # The lines are longer than a report holds: take their end.
            off = max(res["size"] - TAIL_BYTES, start or 0)
            res = client.call("logs", _logs_params(session, stream,
                                                   offset=off,
                                                   max=TAIL_BYTES))
    except Error as e:
        if e.kind == "not_supported":
            return None
        raise
    data = base64.b64decode(res.get("data") or "")
    off = res.get("offset", 0)
    if start is not None and off < start:
        data = data[start - off:]
    return data


def fault_summary(fault):
    """One line or two on a fault record: what it faulted on, the
    decoded Cortex-M fault bits, and the faulting function and line."""
    what = fault.get("signal") or fault.get("location") or "a fault"
    if fault.get("reason"):
        what += " (%s)" % fault["reason"]
    cm = fault.get("cortex_m") or {}
    frames = fault.get("frames") or []
    frame = cm.get("faulting") or (frames[0] if frames else None)
    if frame:
        what += " in %s" % (frame.get("func") or frame.get("addr") or "?")
        if frame.get("file"):
            what += " at %s:%s" % (frame["file"], frame.get("line", "?"))
    lines = [what]
    if cm:
        bits = " ".join(cm.get("decoded") or []) or "no bits set"
        more = "CFSR %s HFSR %s: %s" % (cm.get("cfsr"), cm.get("hfsr"), bits)
        if "MMARVALID" in bits:
            more += ", MMFAR %s" % cm.get("mmfar")
        if "BFARVALID" in bits:
            more += ", BFAR %s" % cm.get("bfar")
        lines.append(more)
    if cm.get("stacked_unavailable"):
        lines.append("no stacked frame: %s" % cm["stacked_unavailable"])
    return "\n  ".join(lines)


def _section(client, track, item):
    """The report's sections for one session: (title, text) pairs; the
    failure's actions (hold, bundle) are taken on the way."""
    record = client.call("status", {"session": track.session})
    title = "dbgctl session %s" % record.get("id", track.session)
    if record.get("name"):
        title += " (%s)" % record["name"]
    text = "state: %s\n" % record.get("state")
    target = record.get("target") or {}
    if target.get("by") == "semihosting":
        text += "firmware: exited with code %s, by semihosting\n" % \
            target.get("code")
    fault = record.get("fault")
    if fault:
        text += "fault: %s\n  (the whole record: %s fault record)\n" % (
            fault_summary(fault), title)
    sid = record.get("id", track.session)
    for stream in STREAMS:
        start = track.start.get(stream)
        data = _tail(client, track.session, stream, start)
        if data is None:
            continue
        since = " since this test began" if start is not None else ""
        text += "%s (last %d lines%s):\n" % (stream, LOG_LINES, since)
        body = plain(data)
        text += (body if body.endswith("\n") else body + "\n") \
            if body else "(nothing)\n"
        # The tail where a JUnit XML's reader sees it, too.
        item.user_properties.append(("dbgctl_%s_%s" % (stream, sid), body))
    text += plugin_failure.on_failure(item.config, item, client, record,
                                      item.config._dbgctl_held,
                                      track.artifacts)
    sections = [(title, text)]
    if fault:
        sections.append((title + " fault record",
                         json.dumps(fault, indent=2, sort_keys=True)))
    return record.get("id", track.session), sections


def _sections(track, item):
    """The sections of one track, through its client or, if that one is
    closed by now, a connection of the report's own."""
    client = _live_client(track)
    if client is not None:
        return _section(client, track, item)
    if track.again is None:
        raise Error("its client is gone")
    with Client(**track.again) as fresh:
        return _section(fresh, track, item)


def _report(seen, item):
    """Every section for the sessions ``item`` touched."""
    out, done = [], set()
    with seen.reading():
        for track in seen.test_tracks(item):
            try:
                sid, sections = _sections(track, item)
            except (Error, OSError) as e:
                out.append(("dbgctl session %s" % track.session,
                            "(the session cannot be read: %s)" % e))
                continue
            key = (repr(getattr(track.client(), "address", None)), sid)
            if key in done:
                continue
            done.add(key)
            out += sections
    return out


def pytest_configure(config):
    """Start hearing of the sessions this process's clients drive, and
    of their launches."""
    config.addinivalue_line(
        "markers", "dbgctl_deadline(seconds): the test's deadline: every "
        "session it drives gets a verdict (see dbgctl-protocol(7)) once "
        "seconds have passed since its setup began; overrides "
        "--dbgctl-deadline")
    config._dbgctl_seen = seen = _Seen()
    config._dbgctl_held = []
    unwatch = watch_sessions(seen.hear)
    unlaunch = watch_launches(lambda client, params: _launching(
        config, params))

    def stop():
        """Stop hearing of both."""
        unwatch()
        unlaunch()
    config._dbgctl_unwatch = stop


def _launching(config, params):
    """The watch_launches hook: every session launched by a client of
    this process gets the run's ``--dbgctl-artifacts``, unless its launch
    names its own (``artifacts=None``: none), and with ``--dbgctl-record``
    every qemu one on a machine that can record records, unless it says
    ``record=False``; another launches as it would without the option."""
    if config.getoption("dbgctl_record", False) and \
            plugin_failure.records(params) and "replay" not in params:
        params.setdefault("record", True)
    if "artifacts" in params:
        return
    art = plugin_failure.artifacts_dir(config)
    if art is not None:
        params["artifacts"] = art


def pytest_unconfigure(config):
    """Stop hearing of sessions."""
    unwatch = getattr(config, "_dbgctl_unwatch", None)
    if unwatch is not None:
        unwatch()
        config._dbgctl_unwatch = None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before the test's fixtures: note where every session stands."""
    seen = getattr(item.config, "_dbgctl_seen", None)
    if seen is None:
        return
    item._dbgctl_began = time.time()
    seen.begin(item, _deadline(item))


def _deadline(item):
    """The seconds a test has, from its ``dbgctl_deadline`` marker, else
    ``--dbgctl-deadline``; None for none."""
    mark = item.get_closest_marker("dbgctl_deadline")
    if mark is not None:
        seconds = mark.args[0] if mark.args else mark.kwargs.get("seconds")
    else:
        seconds = item.config.getoption("dbgctl_deadline", None)
    if seconds is None or seconds <= 0:
        return None
    return float(seconds)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    """Once the test's fixtures are torn down, clear the deadlines it
    gave sessions that live on."""
    yield
    seen = getattr(item.config, "_dbgctl_seen", None)
    if seen is not None:
        seen.end_deadlines()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the sections of every session the test touched to its
    first failing report."""
    outcome = yield
    rep = outcome.get_result()
    seen = getattr(item.config, "_dbgctl_seen", None)
    if seen is None or not rep.failed or \
            getattr(item, "_dbgctl_reported", False):
        return
    item._dbgctl_reported = True
    rep.sections.extend(_report(seen, item))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    """A run interrupted (SIGINT) while a test ran: before its fixtures
    are torn down, write the bundles of that test's running sessions."""
    seen = getattr(session.config, "_dbgctl_seen", None)
    if seen is None or exitstatus != pytest.ExitCode.INTERRUPTED or \
            plugin_failure.artifacts_dir(session.config) is None:
        return
    with seen.reading():
        with seen.lock:
            tracks = [t for k, t in seen.tracks.items() if k in seen.touched]
        for track in tracks:
            client = _live_client(track)
            if client is None:
                continue
            path = plugin_failure.bundle_interrupted(
                session.config, client, track.session,
                seen.current or "interrupted")
            if path is not None:
                sys.stderr.write("dbgctl: session %s: bundle %s\n"
                                 % (track.session, path))
