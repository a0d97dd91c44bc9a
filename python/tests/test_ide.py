"""An IDE joins a live session (issue 22): Eclipse CDT's cdt-gdb-adapter,
the debug adapter of VS Code's CDT GDB extension, driven by
@vscode/debugadapter-testsupport's DebugClient (tests/ide/join.js) with
dbgctl-gdb as its "gdb", attaches to a running gdb session while this rig
drives the same session, and leaves it as it found it.

For a native program (tests/fixtures/beat.c) and for the QEMU board
(examples/board): every step of initialize, attach, setBreakpoints (a
line), setFunctionBreakpoints, configurationDone, the first stop,
stackTrace, scopes, variables, evaluate, continue, the second stop and
disconnect succeeds; the stops are where the breakpoints are, with the
values the program has there; while the IDE holds the target the rig's
exec and verbs answer and see the IDE's breakpoints; after the IDE leaves
the program has the same pid and runs on (its output goes on), its
breakpoints are gone, the console answers a CLI command, halt and resume
work, and a second join leaves gdb's /dev/pts fds as the first left them.

The npm packages are installed by tests/ide/install from the pinned lock
into the build directory ($DBGCTL_IDE_DIR). Without node or npm the tests
are skipped, unless DBGCTL_CI=1 (CI), where that is a failure.
"""

import json
import os
import queue
import re
import shutil
import subprocess
import threading
import time

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
IDE = os.path.join(TOP, "tests", "ide")
# Bound for one DAP response or event inside join.js (ms), and for the
# rig's wait on one line of join.js's (s).
STEP_MS = 30000
LINE_S = 90


def _missing(why):
    """Skip for what is missing here, but fail in CI, where it must not."""
    if os.environ.get("DBGCTL_CI") == "1":
        pytest.fail("DBGCTL_CI=1: %s" % why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def adapter():
    """The adapter's debugAdapter.js, its packages installed from the
    lock (tests/ide/install, a no-op when they are there already)."""
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            _missing("no %s on PATH: the IDE test needs node and npm "
                     "(scripts/setup installs Debian's nodejs and npm)"
                     % tool)
    where = os.environ.get("DBGCTL_IDE_DIR") or \
        os.path.join(TOP, "build", "ide")
    run = subprocess.run([os.path.join(IDE, "install"), where],
                         capture_output=True, timeout=600)
    assert run.returncode == 0, "tests/ide/install %s failed: %s%s" % (
        where, run.stdout.decode(errors="replace"),
        run.stderr.decode(errors="replace"))
    js = os.path.join(where, "node_modules", "cdt-gdb-adapter", "dist",
                      "debugAdapter.js")
    assert os.path.exists(js), "%s is not installed" % js
    return js


@pytest.fixture(scope="module")
def dbgctl_gdb():
    """The client's gdb alias, the adapter's "gdb"."""
    path = os.environ.get("DBGCTL_GDB_BIN") or \
        os.path.join(TOP, "build", "client", "dbgctl-gdb")
    assert os.access(path, os.X_OK), "%s is not built" % path
    return path


def _marked(path, marker):
    """The line number of the first line of path holding marker."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if marker in line:
                return n
    raise AssertionError("no %r in %s" % (marker, path))


def _pts_fds(pid):
    """The fds of process pid that are open on a /dev/pts terminal."""
    fds = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("/dev/pts/"):
            fds.append(target)
    return sorted(fds)


def _alive(pid):
    """Whether pid is a live process (not gone, not a zombie)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _lines(stream, q):
    """Put each line of stream on q, then None at its end."""
    for line in iter(stream.readline, b""):
        q.put(line)
    q.put(None)


def _join(adapter, gdb, sock, s, plan, pauses, log=None):
    """Run join.js against session s; at each {"pause": NAME} it writes,
    call pauses[NAME]() while the IDE holds the target, then let it go
    on. With log, the adapter's gdb is tests/ide/tee-gdb in front of gdb,
    which writes the MI exchange there. Returns (summary, the pauses seen,
    join.js's stderr and the MI exchange, for failure messages)."""
    env = {"DBGCTL_SESSION": str(s.id), "DBGCTL_SOCKET": sock}
    if log is not None:
        env.update(TEE_GDB=gdb, TEE_GDB_LOG=str(log))
        gdb = os.path.join(IDE, "tee-gdb")
    plan = dict(plan, adapter=adapter, gdb=gdb, timeout=STEP_MS, env=env)
    proc = subprocess.Popen(["node", os.path.join(IDE, "join.js"),
                             json.dumps(plan)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out, err = queue.Queue(), queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, out),
                     daemon=True).start()
    threading.Thread(target=_lines, args=(proc.stderr, err),
                     daemon=True).start()
    seen, summary = [], None
    try:
        while summary is None:
            try:
                line = out.get(timeout=LINE_S)
            except queue.Empty:
                raise AssertionError("join.js said nothing for %d s after "
                                     "%s" % (LINE_S, seen))
            if line is None:
                break
            msg = json.loads(line)
            if "pause" in msg:
                seen.append(msg["pause"])
                try:
                    pauses.get(msg["pause"], lambda: None)()
                finally:
                    proc.stdin.write(b"go\n")
                    proc.stdin.flush()
            elif "summary" in msg:
                summary = msg["summary"]
        proc.wait(timeout=LINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    errors = []
    while True:
        try:
            line = err.get(timeout=5)
        except queue.Empty:
            break
        if line is None:
            break
        errors.append(line.decode(errors="replace"))
    said = "".join(errors)[-3000:]
    if log is not None and os.path.exists(str(log)):
        with open(str(log), errors="replace") as f:
            said += "\nthe adapter's MI (-> to gdb, <- back):\n" + \
                "".join(line[:400] + ("\n" if len(line) > 400 else "")
                        for line in f.readlines()[:80])
    assert summary is not None, "join.js gave no summary (exit %s): %s" % (
        proc.returncode, said)
    return summary, seen, said


def _failed_steps(summary):
    """The steps that did not succeed, with their messages."""
    return [(st["step"], st.get("message")) for st in summary["steps"]
            if not st["success"]]


def _assert_all_succeeded(summary, said):
    """Every DAP step of the join succeeded, disconnect included, and
    both breakpoints were verified; said is _join's account of it."""
    for which in ("lineBreakpoint", "functionBreakpoint"):
        assert (summary.get(which) or {}).get("verified"), \
            "the %s was not verified: %s; %s" % (which, summary.get(which),
                                                said)
    names = [st["step"] for st in summary["steps"]]
    for want in ("initialize", "attach", "setBreakpoints",
                 "setFunctionBreakpoints", "configurationDone",
                 "stackTrace1", "scopes1", "continue", "stackTrace2",
                 "disconnect"):
        assert want in names, "no %s step: %s; failure %s; %s" \
            % (want, names, summary["failure"], said)
    assert summary["ok"] and not _failed_steps(summary), \
        "failed: %s (%s); %s" % (_failed_steps(summary), summary["failure"],
                                 said)
    assert any(n.startswith("variables1") for n in names), names
    assert any(n.startswith("evaluate2") for n in names), names


def _breakpoints_in(s, source):
    """The session's breakpoints in the file named source (a basename)."""
    return [b for b in s.break_list()
            if os.path.basename(b.get("file") or "") == source]


def _until(what, check, bound=20.0):
    """Poll check() until it is true, at most bound seconds; assert so."""
    end = time.monotonic() + bound
    while not check():
        assert time.monotonic() < end, "not within %g s: %s" % (bound, what)
        time.sleep(0.05)


def _leave_checks(s, pid_key, pid, gdb_pid, pts_before, output):
    """What the rig sees once the IDE has left: the same program, running,
    its output going on, no breakpoint of the IDE's, a console that
    answers, halt and resume that work, no pty fd more in gdb than the one
    channel the daemon keeps for the next client."""
    st = s.status()
    assert st[pid_key] == pid, st
    assert _alive(pid), "the program (pid %d) is gone" % pid
    s.wait_target("running", timeout=20)
    output()
    out = s.exec("print 6 * 7")
    assert "= 42" in out.get("output", ""), out
    stop = s.halt(timeout=20)
    assert s.status()["target"]["state"] == "stopped", stop
    s.resume(timeout=20)
    s.wait_target("running", timeout=20)
    output()
    after = _pts_fds(gdb_pid)
    assert len(after) <= len(pts_before) + 1, \
        "gdb's pty fds grew from %s to %s" % (pts_before, after)
    return after


@pytest.fixture
def beat():
    """The beat fixture's binary and source."""
    path = os.environ.get("FIX_BEAT") or \
        os.path.join(TOP, "build", "tests", "fixtures", "fix-beat")
    if not os.access(path, os.X_OK):
        pytest.skip("%s is not built (set FIX_BEAT)" % path)
    return path, os.path.join(TOP, "tests", "fixtures", "beat.c")


def test_ide_joins_native_session(daemon, client, adapter, dbgctl_gdb,
                                  beat, tmp_path):
    binary, source = beat
    fn_line = _marked(source, "twice = n * 2")
    line = _marked(source, "/* BEAT_LINE */")
    s = client.launch([binary], kind="gdb", commands=["run"],
                      transport=True, lease=True)
    try:
        first = int(s.expect(rb"beat (\d+) twice", timeout=30).group(1))
        st = s.status()
        pid, gdb_pid = st["inferior_pid"], st["pid"]
        pts_before = _pts_fds(gdb_pid)
        held = {}

        def at_stop1():
            # The IDE holds the target in beat_count: the rig's exec and
            # verbs answer, and see the IDE's breakpoints.
            assert s.status()["target"]["state"] == "stopped"
            held["n"] = int(s.eval("n"))
            out = s.exec("print beats")
            assert re.search(r"= %d\b" % (held["n"] - 1),
                             out.get("output", "")), out
            assert "rip" in s.registers("rip")
            lines = sorted(int(b.get("line", 0))
                           for b in _breakpoints_in(s, "beat.c"))
            assert lines == [fn_line, line], s.break_list()

        def at_stop2():
            assert int(s.eval("twice")) == 2 * held["n"]
            assert int(s.exec("-data-evaluate-expression beats")
                       ["results"]["value"]) == held["n"]

        plan = {"attach": {"processId": pid, "program": binary},
                "function": "beat_count", "source": source, "line": line,
                "evaluate": ["n", "twice", "beats"]}
        summary, seen, err = _join(adapter, dbgctl_gdb, daemon, s, plan,
                                   {"stop1": at_stop1, "stop2": at_stop2},
                                   log=tmp_path / "mi.log")
        _assert_all_succeeded(summary, err)
        assert seen == ["stop1", "stop2"], seen
        assert summary["lineBreakpoint"]["line"] == line, summary
        one, two = summary["stop1"], summary["stop2"]
        n = int(one["variables"]["n"])
        assert n == held["n"] and n > first, (n, held, first)
        assert one["reason"] == "function breakpoint", one
        assert (one["frames"][0]["name"], one["frames"][0]["line"]) == \
            ("beat_count", fn_line), one
        assert one["frames"][1]["name"] == "main", one
        assert int(one["evaluate"]["beats"]) == n - 1, one
        assert two["reason"] == "breakpoint", two
        assert (two["frames"][0]["name"], two["frames"][0]["line"]) == \
            ("beat_count", line), two
        assert int(two["variables"]["n"]) == n, two
        assert int(two["variables"]["twice"]) == 2 * n, two
        assert int(two["evaluate"]["beats"]) == n, two
        assert [x["reason"] for x in summary["stops"]] == \
            ["function breakpoint", "breakpoint"], summary["stops"]

        # The beat held at the breakpoint prints after it, once resumed:
        # a fresh cursor may take the stream's end before that line is in.
        last = [n - 1]

        def goes_on():
            # A beat newer than any seen, from a Session whose cursor
            # starts at the stream's end: the same program counts on.
            fresh = client.session(s.id)
            later = int(fresh.expect(rb"beat (\d+) twice", timeout=30)
                        .group(1))
            assert later > last[0], (later, last[0])
            last[0] = later

        _until("the IDE's breakpoints deleted when it left",
               lambda: _breakpoints_in(s, "beat.c") == [])
        pts = _leave_checks(s, "inferior_pid", pid, gdb_pid, pts_before,
                            goes_on)

        # A second IDE session, with dbgctl-gdb itself as the adapter's
        # gdb, reuses the channel: gdb's ptys stay flat.
        summary, seen, err = _join(adapter, dbgctl_gdb, daemon, s, plan, {})
        _assert_all_succeeded(summary, err)
        assert int(summary["stop1"]["variables"]["n"]) > n, summary["stop1"]
        assert s.status()["inferior_pid"] == pid
        s.wait_target("running", timeout=20)
        goes_on()
        assert _pts_fds(gdb_pid) == pts, "gdb's pty fds went from %s to " \
            "%s on a second join" % (pts, _pts_fds(gdb_pid))
    finally:
        s.stop()


@pytest.fixture
def board(board_elf):
    """The board's firmware and source, or a skip when it cannot run."""
    return board_elf, os.path.join(TOP, "examples", "board", "board.c")


def test_ide_joins_board_session(daemon, client, adapter, dbgctl_gdb,
                                 board, tmp_path):
    fw, source = board
    line = _marked(source, "counter++;")
    s = client.launch([fw], kind="qemu", machine="lm3s6965evb", lease=True)
    try:
        s.expect(rb"ready\r\n", timeout=30)
        st = s.status()
        qemu_pid, gdb_pid = st["server_pid"], st["pid"]
        pts_before = _pts_fds(gdb_pid)
        held = {}

        def at_stop1():
            # Stopped in the main loop, at the IDE's line breakpoint: the
            # rig reads counter and sends a byte, which the firmware
            # echoes through uart_putc, the IDE's function breakpoint.
            assert s.status()["target"]["state"] == "stopped"
            held["counter"] = int(s.eval("counter"))
            assert "pc" in s.registers("pc")
            assert [int(b.get("line", 0)) for b in
                    _breakpoints_in(s, "board.c")
                    if b.get("func") == "main"] == [line], s.break_list()
            s.write(b"i")

        plan = {"attach": {"program": fw}, "function": "uart_putc",
                "source": source, "line": line, "evaluate": ["counter"]}
        summary, seen, err = _join(adapter, dbgctl_gdb, daemon, s, plan,
                                   {"stop1": at_stop1},
                                   log=tmp_path / "mi.log")
        _assert_all_succeeded(summary, err)
        one, two = summary["stop1"], summary["stop2"]
        assert one["reason"] == "breakpoint", one
        assert (one["frames"][0]["name"], one["frames"][0]["line"]) == \
            ("main", line), one
        assert int(one["evaluate"]["counter"]) == held["counter"], one
        assert two["reason"] == "function breakpoint", two
        assert two["frames"][0]["name"] == "uart_putc", two
        assert int(two["evaluate"]["counter"]) == held["counter"] + 1, two

        def goes_on():
            # The board echoes again: it runs.
            s.write(b"k")
            s.expect_exact(b"k", timeout=30)

        s.expect_exact(b"i", timeout=30)
        _until("the IDE's breakpoints deleted when it left",
               lambda: [b for b in _breakpoints_in(s, "board.c")
                        if b.get("func") in ("main", "uart_putc")] == [])
        _leave_checks(s, "server_pid", qemu_pid, gdb_pid, pts_before,
                      goes_on)
    finally:
        s.stop()
