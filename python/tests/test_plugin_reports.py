"""The pytest plugin's failure reports and its private daemon's life,
seen from a rig's suite run by pytest in a subprocess (see conftest.py)."""

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from dbgctl.client import Client, watch_sessions
from dbgctl.pytest_plugin import alive, plain, private_daemon

from conftest import labgrid_env

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The rig's conftest: every failing report's dbgctl sections, to a file.
RIG_CONFTEST = textwrap.dedent('''
    import json, os

    def pytest_runtest_logreport(report):
        if not report.failed:
            return
        sections = [s for s in report.sections if s[0].startswith("dbgctl")]
        with open(os.environ["SECTIONS_FILE"], "a") as f:
            f.write(json.dumps({"test": report.nodeid.split("::")[-1],
                                "when": report.when,
                                "sections": sections}) + "\\n")
''')

# The rig: a board shared by the whole run whose second test fails; a
# session launched with dbgctl_client.launch in the test; a fault under
# gdb; and what TERM sessions of the private daemon see.
RIG_TESTS = textwrap.dedent('''
    import json, os, time
    import pytest

    ECHO = os.environ["FIX_ECHO"]

    def _read_until(s, want):
        got = b""
        deadline = time.monotonic() + 30
        while want not in got:
            assert time.monotonic() < deadline, got
            got += s.read(timeout=max(0.1, deadline - time.monotonic()))
        return got

    @pytest.fixture(scope="session")
    def board(dbgctl_client):
        s = dbgctl_client.launch([ECHO, "board-banner"], kind="exec",
                                 transport=True, name="board", lease=True)
        yield s
        s.stop()

    def test_board_first(board):
        board.write(b"first-test-line\\n")
        _read_until(board, b"first-test-line\\n")

    def test_board_second(board):
        board.write(b"second-test-line \\x1b[31mred\\x1b[0m "
                    b"\\x1b]0;title\\x07 \\x1b(Bcharset\\r\\nlone\\rcr\\n")
        _read_until(board, b"cr\\n")
        assert False, "deliberate failure on the board"

    def test_board_third(board):
        assert False, "deliberate failure, the board untouched"

    def test_direct_launch(dbgctl_client):
        s = dbgctl_client.launch([ECHO], kind="exec", transport=True,
                                 lease=True)
        s.write(b"direct-launch-uart\\n")
        _read_until(s, b"direct-launch-uart\\n")
        assert False, "deliberate failure, direct launch"

    def test_fault(dbgctl_launch):
        s = dbgctl_launch([os.environ["FIX_FAULT"]], commands=["run"],
                          transport=True)
        s.wait_fault()
        _read_until(s, b"faulting\\n")
        assert False, "deliberate failure at a fault"

    def test_term(dbgctl_launch):
        said = []
        for env in (None, {"TERM": "vt100"}):
            s = dbgctl_launch(["/bin/sh", "-c", 'echo "term=[$TERM]"'],
                              kind="exec", transport=True, env=env)
            said.append(_read_until(s, b"]\\n").decode())
        with open(os.environ["TERM_FILE"], "w") as f:
            json.dump(said, f)
''')


def _run_rig(pytester, monkeypatch, fixtures, tests=RIG_TESTS, args=()):
    sections = pytester.path / "sections"
    term = pytester.path / "term"
    monkeypatch.setenv("PYTHONPATH", PYTHON_DIR)
    monkeypatch.setenv("FIX_ECHO", fixtures["echo"])
    monkeypatch.setenv("FIX_FAULT", fixtures["fault"])
    monkeypatch.setenv("SECTIONS_FILE", str(sections))
    monkeypatch.setenv("TERM_FILE", str(term))
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("DBGCTL_TAP", raising=False)
    monkeypatch.delenv("DBGCTL_SOCKET", raising=False)
    pytester.makeconftest(RIG_CONFTEST)
    pytester.makepyfile(test_rig=tests)
    dbgctld = os.environ.get("DBGCTLD_BIN") or "dbgctld"
    result = pytester.runpytest_subprocess(
        "-p", "dbgctl.pytest_plugin", "-p", "no:cacheprovider",
        "--dbgctl=" + dbgctld, *args, timeout=300)
    text = sections.read_text() if sections.exists() else ""
    reports = {}
    for line in text.splitlines():
        rep = json.loads(line)
        reports.setdefault(rep["test"], []).append(rep)
    said = json.loads(term.read_text()) if term.exists() else None
    return result, reports, said


def _only(reports, test):
    """The one failing report of ``test`` and its sections, as a dict."""
    assert test in reports, reports.keys()
    assert len(reports[test]) == 1, reports[test]
    return dict(reports[test][0]["sections"])


def _clean(text):
    assert "\x1b" not in text and "\r" not in text, repr(text)


def test_reports_of_every_session_touched(pytester, monkeypatch, fixtures):
    result, reports, said = _run_rig(pytester, monkeypatch, fixtures)
    result.assert_outcomes(passed=2, failed=4)
    result.stdout.fnmatch_lines(["*- dbgctl session * (board) -*"])

    # The shared board: only what the second test made of it, as text.
    board = _only(reports, "test_board_second")
    assert len(board) == 1, board.keys()
    (title, text), = board.items()
    assert title.endswith(" (board)")
    assert "target (last 40 lines since this test began):\n" \
        "second-test-line red  charset\nlone\ncr\n" in text, text
    assert "first-test-line" not in text and "board-banner" not in text
    assert "console (last 40 lines since this test began):" in text
    _clean(text)

    # The board again, untouched but for being a fixture of the test.
    board = _only(reports, "test_board_third")
    assert list(board) == [title]
    assert "target (last 40 lines since this test began):\n(nothing)\n" \
        in board[title], board

    # A session the test launched with dbgctl_client.launch itself.
    direct = _only(reports, "test_direct_launch")
    (text,) = direct.values()
    assert "state: running" in text
    assert "target (last 40 lines):\narg0=[" in text, text
    assert "]\ndirect-launch-uart\nconsole (last 40 lines):" in text, text
    _clean(text)

    # A fault: summed up in the session's section, the record beside it.
    fault = _only(reports, "test_fault")
    titles = list(fault)
    assert len(titles) == 2 and titles[1] == titles[0] + " fault record"
    text = fault[titles[0]]
    assert "fault: SIGSEGV (signal-received) in crash_here at " in text
    assert "fault.c:8\n" in text, text
    assert "faulting\n" in text and "\"registers\"" not in text
    assert "\"rip\"" not in text, text
    _clean(text)
    record = json.loads(fault[titles[1]])
    assert record["signal"] == "SIGSEGV" and "rip" in record["registers"]

    # The private daemon's sessions: TERM=dumb unless the launch sets it.
    assert said == ["term=[dumb]\n", "term=[vt100]\n"]


# A labgrid rig under labgrid's pytest plugin (its ``target`` fixture, from
# --lg-env): a board on the DbgctlConsoleDriver of a host's dbgctld over
# TCP with a token, whose test fails after a line went round its UART.
LABGRID_TESTS = textwrap.dedent('''
    import os

    def test_labgrid_board(target):
        console = target.get_driver("DbgctlConsoleDriver")
        console.launch([os.environ["FIX_ECHO"], "labgrid-banner"],
                       kind="exec", name="lgboard")
        console.sendline("labgrid-uart-line")
        console.expect(r"labgrid-uart-line\\n", timeout=30)
        assert False, "deliberate failure on a labgrid board"

    def test_labgrid_board_off(target):
        console = target.get_driver("DbgctlConsoleDriver")
        console.launch([os.environ["FIX_ECHO"], "off-banner"],
                       kind="exec", name="lgoff")
        console.sendline("before-off-line")
        console.expect(r"before-off-line\\n", timeout=30)
        target.deactivate(target.get_driver("DbgctlDriver"))
        assert False, "deliberate failure with the driver off"
''')

def test_report_of_a_labgrid_session(pytester, monkeypatch, fixtures,
                                     tcp_daemon):
    pytest.importorskip("labgrid")
    env = labgrid_env(pytester.path / "env.yaml", tcp_daemon,
                      drivers=["DbgctlConsoleDriver"])
    result, reports, _ = _run_rig(pytester, monkeypatch, fixtures,
                                  LABGRID_TESTS, ["--lg-env", env])
    result.assert_outcomes(failed=2)

    # A session launched through the console driver, the UART line in it.
    board = _only(reports, "test_labgrid_board")
    assert len(board) == 1, board.keys()
    (title, text), = board.items()
    assert title.endswith(" (lgboard)"), title
    assert "state: running\n" in text, text
    assert "target (last 40 lines):\narg0=[" in text, text
    assert "arg1=[labgrid-banner]\nlabgrid-uart-line\n" \
        "console (last 40 lines):" in text, text
    _clean(text)

    # The driver deactivated before the failure: its connection closed,
    # the sections are read through one of the report's own, with the
    # token.  Deactivating stopped the first test's session too, so the
    # test touched it, but none of its output came in this test.
    off = _only(reports, "test_labgrid_board_off")
    assert len(off) == 2, off.keys()
    first = off[title]
    assert "since this test began" in first, first
    assert "labgrid-banner" not in first, first
    assert "labgrid-uart-line" not in first, first
    (text,) = [t for k, t in off.items() if k.endswith(" (lgoff)")]
    assert "target (last 40 lines):\narg0=[" in text, text
    assert "arg1=[off-banner]\nbefore-off-line\n" \
        "console (last 40 lines):" in text, text
    _clean(text)


# The rig whose pytest dies of SIGKILL in its test, having noted the
# processes of its private daemon and of a session that is not leased.
KILLED_TESTS = textwrap.dedent('''
    import json, os, signal

    def test_killed(dbgctl_client):
        s = dbgctl_client.launch(["/bin/sh", "-c", "exec sleep 300"],
                                 kind="exec")
        rec = s.status()
        daemon = dbgctl_client.hello()["pid"]
        with open("/proc/%d/stat" % daemon) as f:
            lifeline = int(f.read().rsplit(")", 1)[1].split()[1])
        with open(os.environ["PIDS_FILE"], "w") as f:
            json.dump({"daemon": daemon, "lifeline": lifeline,
                       "session": [rec["pid"], rec["keeper_pid"]],
                       "log": rec["log"]}, f)
        os.kill(os.getpid(), signal.SIGKILL)
''')


def _wait_gone(pids, timeout):
    """Wait, up to ``timeout`` seconds, for every process to exit (a
    pidfd reads ready once its process has)."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            select.select([fd], [], [], max(0, deadline - time.monotonic()))
        finally:
            os.close(fd)


def test_private_daemon_dies_with_a_killed_pytest(tmp_path, fixtures):
    rig = tmp_path / "rig"
    rig.mkdir()
    (rig / "test_killed.py").write_text(KILLED_TESTS)
    pids_file = tmp_path / "pids"
    basetemp = tmp_path / "bt"
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, PIDS_FILE=str(pids_file))
    env.pop("DBGCTL_SOCKET", None)
    env.pop("DBGCTL_TAP", None)
    dbgctld = os.environ.get("DBGCTLD_BIN") or "dbgctld"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "dbgctl.pytest_plugin",
         "-p", "no:cacheprovider", "--dbgctl=" + dbgctld,
         "--basetemp=" + str(basetemp), str(rig)],
        env=env, cwd=str(rig), stdin=subprocess.DEVNULL,
        capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc
    noted = json.loads(pids_file.read_text())
    pids = [noted["daemon"], noted["lifeline"]] + noted["session"]
    _wait_gone(pids, 60)
    assert [p for p in pids if alive(p)] == [], noted
    assert noted["log"].startswith(str(basetemp) + os.sep), noted


def test_report_text_is_plain():
    raw = (b"\x1b[1;31mbold red\x1b[m \xc2\x9b2Kcleared\r\n"
           b"\x1b]0;a title\x1b\\titled "
           b"\x1b]8;;http://x\x07link\x1b]8;;\x07\n\r"
           b"\x1b(0\x1b)Bcharsets\x1b= \x1bPq#0;2;0;0;0\x1b\\dcs\x07\x08\r\n"
           b"50%\r100%\n\r\ntab\there \xffbad\x1b[")
    assert plain(raw) == ("bold red cleared\ntitled link\ncharsets dcs\n"
                          "50%\n100%\n\ntab\there \ufffdbad")


def test_private_daemon_goes_when_its_lifeline_is_killed(tmp_path):
    dbgctld = os.environ.get("DBGCTLD_BIN") or "dbgctld"
    with private_daemon(dbgctld, str(tmp_path)) as c:
        daemon = c.hello()["pid"]
        with open("/proc/%d/stat" % daemon) as f:
            lifeline = int(f.read().rsplit(")", 1)[1].split()[1])
        assert lifeline != os.getpid()
        os.kill(lifeline, signal.SIGKILL)
        _wait_gone([daemon], 60)
        assert not alive(daemon)


def test_watch_sessions_hears_every_client(client):
    heard = []
    unwatch = watch_sessions(lambda c, s: heard.append((c, s)))
    try:
        s = client.launch(["/bin/sh", "-c", "exec sleep 300"], kind="exec",
                          wait=False, lease=True)
        s.wait_ready()
        assert heard == [(client, s.id)]
        with Client(socket=client.address, autostart=False) as other:
            # Reading a session is not driving it: not heard.
            other.call("logs", {"session": s.id, "stream": "console"})
            other.call("status", {"session": s.id})
            other.session(s.id)
            assert heard == [(client, s.id)]
            other.call("signal", {"session": s.id, "signal": "CONT"})
            assert heard[-1] == (other, s.id)
        s.stop()
    finally:
        unwatch()
    n = len(heard)
    s.status()
    assert len(heard) == n


def test_watch_sessions_hears_the_debuggers_verbs_that_drive(client,
                                                             fixtures):
    s = client.launch([fixtures["spinner"]], commands=["run"], lease=True)
    try:
        s.wait_target("running", timeout=30)
        heard = []
        unwatch = watch_sessions(lambda c, sid: heard.append(sid))
        try:
            # Reading through the debugger is not driving.
            assert "pc" in s.registers("pc")
            data = s.read_memory("$sp", 8)
            assert len(data) == 8
            s.break_list()
            assert s.eval("1 + 1") == "2"
            assert heard == []
            # Setting or deleting a breakpoint, writing memory is.
            number = s.break_insert("main")["number"]
            assert heard == [s.id]
            s.break_delete(number)
            assert heard == [s.id] * 2
            s.write_memory("$sp", data)
            assert heard == [s.id] * 3
        finally:
            unwatch()
    finally:
        s.stop()
