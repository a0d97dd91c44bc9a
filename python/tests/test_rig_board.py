"""A rig's QEMU board suite under the pytest plugin and under labgrid, run
as a pytest of its own: what the person reading CI gets (the JUnit XML),
which sessions a failing test is blamed for, per-test deadlines, and a
board held on failure that outlives labgrid's teardown."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

import dbgctl

from conftest import labgrid_env

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A shared board launched by a session-scoped fixture with the run's own
# client (not dbgctl_launch); a fixture of every test that takes it and
# only reads it (its state, registers, memory, breakpoints, an
# expression);
# a test that fails without driving it; one whose UART expect times out;
# one with a deadline marker on a second board of its own; one with a
# marker later than the board's own deadline; one that sets the board's
# deadline itself.
PLUGIN_RIG = textwrap.dedent('''
    import json, os, time
    import pytest

    FW = os.environ["FIX_BOARD"]
    BANNER = b"dbgctl board ready\\r\\n"

    def _note(key, value):
        with open(os.environ["NOTES_FILE"], "a") as f:
            f.write(json.dumps({key: value}) + "\\n")

    @pytest.fixture(scope="session")
    def board(dbgctl_client):
        # Its own safety net: a deadline of 1200 s, later than the run's
        # 600 s but earlier than test_board_later's 3000 s.
        s = dbgctl_client.launch([FW], kind="qemu", machine="lm3s6965evb",
                                 name="board", lease=True, deadline=1200000)
        _note("board", s.id)
        yield s
        s.stop()

    @pytest.fixture(autouse=True)
    def peek(board, dbgctl_client):
        # Reads the shared board, as a health check would: not driving it.
        assert board.status()["state"] == "running"
        assert dbgctl_client.session("board").status()["state"] == "running"
        assert "pc" in board.registers("pc")
        assert len(board.read_memory(0x20000000, 4)) == 4
        assert all(b["internal"] for b in board.break_list())
        assert board.eval("1 + 1") == "2"

    def test_boot(board):
        board.expect_exact(BANNER, timeout=30)
        _note("deadline_in_test", board.status().get("deadline"))

    def test_other_fails():
        assert False, "deliberate failure, the board not driven"

    def test_deadline(dbgctl_client):
        s = dbgctl_client.launch([FW], kind="qemu", machine="lm3s6965evb",
                                 name="late", lease=True)
        _note("late", s.id)
        _note("late_deadline", s.status().get("deadline"))
        began = time.monotonic()
        try:
            s.expect_exact(BANNER, timeout=30)
            s.expect_exact(b"never-comes", timeout=60)
        finally:
            _note("late_waited", time.monotonic() - began)

    test_deadline = pytest.mark.dbgctl_deadline(15)(test_deadline)

    def test_uart_expect_times_out(board):
        board.write(b"ping-42\\n")
        echo = board.expect_exact(b"ping-42\\n", timeout=30)
        # From the echo's start: what came is in the timeout's message.
        board.expect_exact(b"pong", timeout=1, from_=echo.start())

    @pytest.mark.dbgctl_deadline(3000)
    def test_board_later(board):
        board.halt()
        board.resume()
        _note("deadline_later", board.status().get("deadline"))

    def test_board_after(board):
        _note("deadline_after", board.status().get("deadline"))

    def test_board_own_deadline(board):
        board.deadline(900)

    def test_board_last(board):
        _note("deadline_last", board.status().get("deadline"))
''')


def _cases(root):
    """The JUnit XML's test cases by name: (properties as a list of
    pairs, the failure element or None)."""
    out = {}
    for case in root.iter("testcase"):
        props = [(p.get("name"), p.get("value"))
                 for p in case.iter("property")]
        out[case.get("name")] = (props, case.find("failure"))
    return out


class _Run:
    """PLUGIN_RIG's run: its output, its JUnit XML's cases, what its
    tests noted, its artifacts directory."""

    def __init__(self, proc, cases, notes, art):
        self.proc = proc
        self.text = proc.stdout.decode(errors="replace")
        self.cases = cases
        self.notes = notes
        self.art = art


@pytest.fixture(scope="module")
def plugin_run(tmp_path_factory):
    """Run PLUGIN_RIG once, in a pytest of its own with a private daemon,
    ``--dbgctl-artifacts`` and ``--dbgctl-deadline``, for the checks
    below."""
    fw = os.environ.get("FIX_BOARD")
    if not fw or not os.path.exists(fw):
        pytest.skip("FIX_BOARD is not set: the firmware was not built")
    for tool in ("qemu-system-arm", "gdb-multiarch"):
        if not shutil.which(tool):
            pytest.skip("%s is not on PATH" % tool)
    tmp = tmp_path_factory.mktemp("plugin-rig")
    rig = tmp / "rig"
    rig.mkdir()
    (rig / "test_rig.py").write_text(PLUGIN_RIG)
    art, notes, junit = tmp / "art", tmp / "notes", tmp / "junit.xml"
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, FIX_BOARD=fw,
               NOTES_FILE=str(notes))
    env.pop("DBGCTL_TAP", None)
    env.pop("DBGCTL_SOCKET", None)
    dbgctld = os.environ.get("DBGCTLD_BIN") or "dbgctld"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "dbgctl.pytest_plugin",
         "-p", "no:cacheprovider", "--dbgctl=" + dbgctld,
         "--dbgctl-artifacts=" + str(art), "--dbgctl-deadline=600",
         "--tb=short", "--junitxml=" + str(junit),
         "--basetemp=" + str(tmp / "bt"), str(rig)],
        env=env, cwd=str(rig), stdin=subprocess.DEVNULL,
        capture_output=True, timeout=300)
    assert junit.exists(), proc
    noted = {}
    for line in notes.read_text().splitlines():
        noted.update(json.loads(line))
    return _Run(proc, _cases(ET.parse(str(junit)).getroot()), noted, art)


def test_the_board_rig_runs(plugin_run):
    cases = plugin_run.cases
    failed = sorted(k for k, v in cases.items() if v[1] is not None)
    assert failed == ["test_deadline", "test_other_fails",
                      "test_uart_expect_times_out"], plugin_run.text
    assert len(cases) == 8, plugin_run.text


def test_reading_a_shared_board_is_not_driving_it(plugin_run):
    # A fixture read the shared board (status, registers, memory, the
    # breakpoint list, an expression) in every test: the test that failed
    # without driving it has no section, bundle or tail of it, nor a
    # hold.
    props, failure = plugin_run.cases["test_other_fails"]
    assert failure is not None, plugin_run.text
    assert [p for p in props if p[0].startswith("dbgctl")] == [], props
    assert not [d for d in os.listdir(plugin_run.art)
                if "test_other_fails" in d]
    assert "dbgctl session" not in plugin_run.text.split(
        "test_other_fails ___")[1].split("___ test_")[0], plugin_run.text


def test_an_expect_timeout_in_junit_says_what_came(plugin_run):
    props, failure = plugin_run.cases["test_uart_expect_times_out"]
    message = failure.get("message")
    assert "no match" in message and "got b'" in message, message
    assert "ping-42" in message, message


def test_a_failed_call_shows_the_callers_line(plugin_run):
    text = plugin_run.text
    assert "test_rig.py:" in text, text
    assert 'board.expect_exact(b"pong", timeout=1' in text, text
    assert "client.py" not in text and "def result" not in text, text


def test_junit_has_the_uart_tail_and_the_bundle(plugin_run):
    board = plugin_run.notes["board"]
    props, _ = plugin_run.cases["test_uart_expect_times_out"]
    names = dict(props)
    uart = names.get("dbgctl_target_%d" % board)
    assert uart and "ping-42" in uart, props
    # Only what came since the test began.
    assert "dbgctl board ready" not in uart, uart
    assert "dbgctl_console_%d" % board in names, props
    path = names["dbgctl_bundle_%d" % board]
    assert path.startswith(str(plugin_run.art) + os.sep) and \
        os.path.exists(os.path.join(path, "manifest.json")), path


def test_a_deadline_marker_and_the_daemons_bundle(plugin_run):
    notes, late = plugin_run.notes, plugin_run.notes["late"]
    # The marker's deadline (15 s) ended the waits long before their own
    # timeouts.
    assert notes["late_deadline"], notes
    assert notes["late_waited"] < 40, notes
    props, failure = plugin_run.cases["test_deadline"]
    assert failure is not None
    names = [p for p in props if p[0].endswith("_%d" % late)]
    assert ("dbgctl_verdict_%d" % late, "deadline") in names, props
    # The daemon's own bundle of a session launched by the run's client
    # (the run's artifacts reached it) is a property of the test.
    bundles = [v for k, v in names if k == "dbgctl_bundle_%d" % late]
    auto = os.path.join(str(plugin_run.art), "%d-deadline" % late)
    assert auto in bundles, props
    for b in bundles:
        assert os.path.exists(os.path.join(b, "manifest.json")), b


def test_the_runs_deadline_is_given_and_taken_back(plugin_run):
    notes = plugin_run.notes
    # The run's deadline (600 s), earlier than the board's own (1200 s),
    # is given to the shared board while a test drives it.
    assert notes["deadline_in_test"]["in_ms"] <= 600000, notes
    # When the test ends, the board's own is back, so that it outlives
    # the test with its safety net.
    assert 600000 < notes["deadline_after"]["in_ms"] <= 1200000, notes


def test_a_tests_later_deadline_leaves_the_sessions_earlier_one(
        plugin_run):
    # A marker's 3000 s would come after the board's own deadline: the
    # board keeps its own.
    assert 600000 < notes_in_ms(plugin_run, "deadline_later") <= 1200000, \
        plugin_run.notes


def test_a_deadline_the_test_set_itself_is_left_as_it_set_it(plugin_run):
    # test_board_own_deadline moved the board's deadline to 900 s: the
    # plugin does not put the board's own back over it.
    assert 600000 < notes_in_ms(plugin_run, "deadline_last") <= 900000, \
        plugin_run.notes


def notes_in_ms(run, key):
    """The in_ms of a deadline a rig's test noted, or None."""
    return (run.notes.get(key) or {}).get("in_ms")


# A labgrid rig: a board launched through DbgctlDriver whose test fails.
LABGRID_RIG = textwrap.dedent('''
    import json, os

    def test_board_fails(target):
        d = target.get_driver("DbgctlDriver")
        s = d.launch([os.environ["FIX_BOARD"]], kind="qemu",
                     machine="lm3s6965evb", name="lgheld")
        s.expect_exact(b"dbgctl board ready\\r\\n", timeout=30)
        with open(os.environ["NOTES_FILE"], "w") as f:
            json.dump({"id": s.id}, f)
        assert False, "deliberate failure on a labgrid board"
''')


def test_a_labgrid_board_held_on_failure_outlives_the_driver(
        pytester, monkeypatch, board_elf, tcp_daemon, tmp_path):
    pytest.importorskip("labgrid")
    connect, token = tcp_daemon
    env = labgrid_env(pytester.path / "env.yaml", tcp_daemon)
    notes_file = pytester.path / "notes"
    monkeypatch.setenv("PYTHONPATH", PYTHON_DIR)
    monkeypatch.setenv("FIX_BOARD", board_elf)
    monkeypatch.setenv("NOTES_FILE", str(notes_file))
    monkeypatch.delenv("DBGCTL_TAP", raising=False)
    monkeypatch.delenv("DBGCTL_SOCKET", raising=False)
    pytester.makepyfile(test_rig=LABGRID_RIG)
    result = pytester.runpytest_subprocess(
        "-p", "dbgctl.pytest_plugin", "-p", "no:cacheprovider",
        "--lg-env", env, "--dbgctl-hold-on-failure=120", timeout=300)
    result.assert_outcomes(failed=1)
    sid = json.loads(notes_file.read_text())["id"]
    with dbgctl.Client(connect=connect, token_file=token) as c:
        s = c.session(sid)
        try:
            # labgrid deactivated the driver and closed its connection at
            # the run's end: the held board is still there, halted.
            rec = s.status()
            assert rec["state"] == "running", rec
            assert rec["hold"] and rec["hold"]["lease_ended"], rec["hold"]
            assert rec["target"]["state"] == "stopped", rec["target"]

            # The report's commands name the address the run used, and
            # work pasted as printed.
            where = "--connect %s --token-file %s" % (connect, token)
            result.stdout.fnmatch_lines([
                "held for * s, its target halted; look with:",
                "  dbgctl %s attach %d" % (where, sid),
                "  dbgctl %s logs %d" % (where, sid),
                "  dbgctl %s mi %d    (an IDE: DBGCTL_HOST=%s "
                "DBGCTL_TOKEN_FILE=%s DBGCTL_SESSION=%d dbgctl-gdb as its "
                "gdb)" % (where, sid, connect, token, sid)])
            line = [x for x in result.stdout.lines
                    if x.startswith("  dbgctl ") and
                    x.endswith(" logs %d" % sid)][0]
            argv = shlex.split(line)
            argv[0] = os.environ.get("DBGCTL_BIN") or "dbgctl"
            run_env = dict(os.environ, DBGCTL_SOCKET=str(tmp_path / "none"))
            run_env.pop("DBGCTL_HOST", None)
            run_env.pop("DBGCTL_TOKEN_FILE", None)
            out = subprocess.run(argv, env=run_env, capture_output=True,
                                 stdin=subprocess.DEVNULL, timeout=60)
            assert out.returncode == 0 and out.stdout, out
            # The same address reads the board's UART too.
            argv[-1:-1] = ["--stream", "target"]
            out = subprocess.run(argv, env=run_env, capture_output=True,
                                 stdin=subprocess.DEVNULL, timeout=60)
            assert out.returncode == 0, out
            assert b"dbgctl board ready" in out.stdout, out
        finally:
            # Released, a held session whose lease has ended is stopped.
            c.call("hold", {"session": sid, "ttl": 0})
            end = s.wait(timeout=60)
        assert end["state"] == "exited", end
