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

import os
import sys
import time

import pytest

from . import plugin_failure
from .client import Client, watch_launches, watch_sessions
from .errors import Error
from .plugin_daemon import _daemon_binary, private_daemon
from .plugin_report import LOG_LINES, TAIL_BYTES, _report, plain
from .plugin_seen import _Seen, _live_client

# What the modules above took from this one is still importable from it.
from .client import Session  # noqa: F401
from .plugin_daemon import (LIFELINE, SOCKET_PATH_MAX,  # noqa: F401
                            START_TIMEOUT, _connect, _end, _reap,
                            _socket_dir, _start)
from .plugin_report import (_CONTROL, _ESCAPE, _LINE_END,  # noqa: F401
                            _section, _sections, _tail, fault_summary)
from .plugin_seen import (DEADLINE_SLACK, STREAMS, _mark,  # noqa: F401
                          _mark_through, _logs_params, _own_args,
                          _sessions_in, _Track)


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
