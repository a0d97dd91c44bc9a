"""Fixtures of the client tests, and a TAP reporter for meson.

The ``daemon`` fixture runs a private dbgctld (``DBGCTLD_BIN``, else the
build tree's) on a socket in a temporary directory for the whole run, and
always shuts it down.  The fixture targets come from ``FIX_ECHO``,
``FIX_SPINNER`` and ``FIX_FAULT``, as for the C suites.

With ``DBGCTL_TAP=1`` in the environment, pytest's own report goes to
stderr and stdout carries one TAP line per test, which meson counts.
"""

import os
import re
import shutil
import sys
import tempfile
import textwrap
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

import dbgctl  # noqa: E402
from dbgctl.pytest_plugin import private_daemon  # noqa: E402

pytest_plugins = ["pytester"]


def _binary(env, *tree):
    path = os.environ.get(env) or os.path.join(TOP, "build", *tree)
    if not os.access(path, os.X_OK):
        pytest.skip("%s is not built (set %s)" % (path, env))
    return path


#: What a daemon's log says of its cgroup subtree, before the path.
_CGROUP_LOGGED = "containment: cgroup, in "


def _cgroup_remove(root):
    """Kill what is left in the cgroup subtree at root and remove it,
    deepest first; waits for it to empty, at most 10 s."""
    if not os.path.isdir(root):
        return
    try:
        with open(os.path.join(root, "cgroup.kill"), "w") as f:
            f.write("1")
    except OSError:
        pass
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            with open(os.path.join(root, "cgroup.events")) as f:
                if "populated 0" in f.read():
                    break
        except OSError:
            break
        time.sleep(0.02)
    for path, _, _ in os.walk(root, topdown=False):
        try:
            os.rmdir(path)
        except OSError:
            pass


def _cgroup_sweep(top):
    """Remove the cgroup subtree of every daemon whose log under top
    (dbgctld.log, daemon.out) names one."""
    for path, _, files in os.walk(top):
        for name in files:
            if name not in ("dbgctld.log", "daemon.out"):
                continue
            try:
                with open(os.path.join(path, name), errors="replace") as f:
                    said = f.read()
            except OSError:
                continue
            for line in said.splitlines():
                at = line.find(_CGROUP_LOGGED)
                root = line[at + len(_CGROUP_LOGGED):].strip()
                # Only a subtree named for a daemon, never its parent.
                if at >= 0 and "/dbgctld-" in root:
                    _cgroup_remove(root)


@pytest.fixture(scope="session", autouse=True)
def cgroups_swept(tmp_path_factory):
    """After every other fixture of the run: the cgroup subtrees of the
    daemons the tests ran in their temporary directories removed.  One
    SIGKILLed with no daemon after it on its socket leaves its subtree,
    and a test machine would gather them run after run."""
    yield
    _cgroup_sweep(str(tmp_path_factory.getbasetemp()))


@pytest.fixture(scope="session")
def fixtures():
    """Paths of the fixture targets: ``echo``, ``spinner``, ``fault``."""
    return {
        "echo": _binary("FIX_ECHO", "tests", "fixtures", "fix-echo"),
        "spinner": _binary("FIX_SPINNER", "tests", "fixtures",
                           "fix-spinner"),
        "fault": _binary("FIX_FAULT", "tests", "fixtures", "fix-fault"),
    }


def _tcp_port(tmp):
    """The TCP port a daemon told to listen on port 0 took: its log says,
    before its Unix socket (which the fixture has connected to) listens.
    A port picked here and handed over could be taken in between."""
    with open(os.path.join(tmp, "dbgctld.log"), errors="replace") as f:
        said = f.read()
    m = re.search(r"listening on tcp:127\.0\.0\.1:(\d+)", said)
    assert m, "the daemon did not say its TCP port: %s" % said[-2000:]
    return int(m.group(1))


def _run_daemon(tcp=False):
    """Run dbgctld in a temporary directory; yield (socket, tcp, token)."""
    bin_ = _binary("DBGCTLD_BIN", "daemon", "dbgctld")
    tmp = tempfile.mkdtemp(prefix="dbgctl-py-")
    argv = []
    connect = token = None
    if tcp:
        token = os.path.join(tmp, "token")
        fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, b"py-test-token-of-this-suite\n")
        os.close(fd)
        argv += ["--listen", "tcp:127.0.0.1:0", "--token-file", token]
    try:
        with private_daemon(bin_, tmp, argv) as c:
            if tcp:
                connect = "tcp:127.0.0.1:%d" % _tcp_port(tmp)
            yield c.address, connect, token
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def daemon():
    """A private dbgctld for the run; yields its socket path."""
    for sock, _, _ in _run_daemon():
        yield sock


@pytest.fixture(scope="module")
def tcp_daemon():
    """A private dbgctld also on loopback TCP with a token.

    Yields ``(connect, token_file)``.
    """
    for _, connect, token in _run_daemon(tcp=True):
        yield connect, token


@pytest.fixture(scope="module")
def ssh_daemon():
    """A private dbgctld and a real sshd of its own (see sshd.py), with
    ``DBGCTL_SSH`` set to reach it for the module.  Yields ``(url,
    socket)``: the daemon's ``ssh://127.0.0.1:PORT/SOCKET`` address."""
    import sshd
    dbgctl_bin = _binary("DBGCTL_BIN", "client", "dbgctl")
    tmp = tempfile.mkdtemp(prefix="dbgctl-ssh-")
    saved = os.environ.get("DBGCTL_SSH")
    try:
        with sshd.running(tmp, dbgctl_bin) as server:
            os.environ.update(server.env)
            for sock, _, _ in _run_daemon():
                yield server.url(sock), sock
    finally:
        if saved is None:
            os.environ.pop("DBGCTL_SSH", None)
        else:
            os.environ["DBGCTL_SSH"] = saved
        shutil.rmtree(tmp, ignore_errors=True)


def labgrid_env(path, tcp_daemon, drivers=(), imports=(), images=""):
    """Write a labgrid environment whose target ``main`` has the daemon
    (``(connect, token_file)``: TCP, or ``(ssh_url, None)``) as its
    DbgctlServer, a DbgctlDriver and ``drivers`` (names, or
    YAML lines of the drivers map); ``imports`` are beside dbgctl.labgrid
    and ``images`` is YAML at the top.  Returns the file's path."""
    connect, token = tcp_daemon
    lines = ["imports:", "  - dbgctl.labgrid"]
    lines += ["  - %s" % i for i in imports]
    if images:
        lines.append(textwrap.dedent(images).rstrip("\n"))
    lines += ["targets:", "  main:", "    resources:",
              "      DbgctlServer:"]
    if connect.startswith("ssh://"):
        lines.append('        address: "%s"' % connect)
    else:
        host, port = connect[4:].rsplit(":", 1)
        lines += ['        host: "%s"' % host,
                  "        port: %s" % port,
                  '        token_file: "%s"' % token]
    lines += ["    drivers:", "      DbgctlDriver: {}"]
    lines += ["      %s" % (d if ":" in d else d + ": {}") for d in drivers]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def board_elf():
    """The board's firmware (FIX_BOARD), or a skip when it was not built or
    QEMU or gdb-multiarch is missing."""
    fw = os.environ.get("FIX_BOARD")
    if not fw or not os.path.exists(fw):
        pytest.skip("FIX_BOARD is not set: the firmware was not built")
    for tool in ("qemu-system-arm", "gdb-multiarch"):
        if not shutil.which(tool):
            pytest.skip("%s is not on PATH" % tool)
    return fw


@pytest.fixture
def client(daemon):
    """A client of the private daemon, closed after the test."""
    c = dbgctl.Client(socket=daemon, autostart=False)
    yield c
    c.close()


# The TAP reporter.

class _Tap:
    def __init__(self, out):
        self.out = out
        self.n = 0
        self.failed = {}
        self.skipped = {}

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.failed[report.nodeid] = report.when
        elif report.skipped:
            self.skipped[report.nodeid] = report.longrepr

    def pytest_runtest_logfinish(self, nodeid, location):
        self.n += 1
        if nodeid in self.failed:
            line = "not ok %d - %s" % (self.n, nodeid)
            if self.failed[nodeid] != "call":
                line += " # in %s" % self.failed[nodeid]
        elif nodeid in self.skipped:
            why = self.skipped[nodeid]
            why = why[2] if isinstance(why, tuple) else str(why)
            line = "ok %d - %s # SKIP %s" % (self.n, nodeid, why)
        else:
            line = "ok %d - %s" % (self.n, nodeid)
        self.out.write(line.replace("\n", " ") + "\n")
        self.out.flush()

    def pytest_sessionfinish(self, session):
        self.out.write("1..%d\n" % self.n)
        self.out.flush()


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if os.environ.get("DBGCTL_TAP") != "1":
        return
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    tr = config.pluginmanager.getplugin("terminalreporter")
    if tr is not None:
        from _pytest.terminal import TerminalWriter
        tw = TerminalWriter(sys.stderr)
        tw.hasmarkup = False
        tr._tw = tw
    config.pluginmanager.register(_Tap(out), "dbgctl-tap")
