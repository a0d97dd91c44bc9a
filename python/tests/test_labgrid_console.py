"""The labgrid console driver: labgrid's ConsoleProtocol (read, write,
labgrid's own expect) on a dbgctl session's target stream, and the strategy
example of examples/labgrid booting the board through it."""

import os
import subprocess
import sys
import time

import pytest

from dbgctl.pytest_plugin import alive

from conftest import labgrid_env

labgrid = pytest.importorskip("labgrid")
pexpect = pytest.importorskip("pexpect")

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLE = os.path.join(TOP, "examples", "labgrid")


@pytest.fixture
def target(tcp_daemon, tmp_path):
    """A labgrid target with the dbgctl console driver."""
    env = labgrid.Environment(labgrid_env(
        tmp_path / "env.yaml", tcp_daemon, drivers=["DbgctlConsoleDriver"]))
    yield env.get_target("main")
    env.cleanup()


def test_console_expect_returns_labgrids_match(target, fixtures):
    console = target.get_driver("DbgctlConsoleDriver")
    s = console.launch([fixtures["echo"]], kind="exec")
    # The program's first line came before any expect: read from byte 0.
    index, before, match, after = console.expect(r"arg0=\[([^]]*)\]\n",
                                                 timeout=10)
    assert (index, match.group(1)) == (0, fixtures["echo"].encode())
    console.write(b"counter=1439")
    console.write(b"0 done\n")
    index, before, match, after = console.expect(
        [r"never", r"counter=(\d+) (?P<word>\w+)\n"], timeout=10)
    assert index == 1
    assert match.group(1, "word") == (b"14390", b"done")
    assert after == match.group(0)
    console.sendline("second line")
    index, before, match, after = console.expect(r"line", timeout=10)
    assert before == b"second "
    # The console read the transcript: Session.read still has every byte.
    got = b""
    while b"second line\n" not in got:
        chunk = s.read(timeout=10)
        assert chunk, "the stream ended after %r" % got
        got += chunk
    assert got.startswith(b"arg0=[")
    assert b"counter=14390 done\n" in got


def test_console_and_session_expect_see_the_same_bytes(target, fixtures):
    console = target.get_driver("DbgctlConsoleDriver")
    d = target.get_driver("DbgctlDriver")
    s = console.launch([fixtures["echo"]], kind="exec")
    s.write(b"token=17 token=18\n")
    m = d.expect(s, rb"token=(\d+)", timeout=10)
    assert m.group(1) == b"17"
    index, before, match, after = console.expect(r"token=(\d+)", timeout=10)
    assert match.group(1) == b"17"
    assert d.expect(s, rb"token=(\d+)", timeout=10).group(1) == b"18"
    index, before, match, after = console.expect(r"token=(\d+)", timeout=10)
    assert match.group(1) == b"18"


def test_console_read_times_out_then_returns_bytes(target, fixtures):
    console = target.get_driver("DbgctlConsoleDriver")
    console.launch([fixtures["echo"]], kind="exec")
    got = console.read(size=1, timeout=10)
    while not got.endswith(b"\n"):
        got += console.read(size=1, timeout=10)
    assert got.startswith(b"arg0=[")
    start = time.monotonic()
    with pytest.raises(pexpect.TIMEOUT):
        console.read(size=1, timeout=0.3)
    took = time.monotonic() - start
    assert 0.25 <= took < 10, took
    with pytest.raises(pexpect.TIMEOUT):
        console.read(size=1, timeout=0)
    console.write(b"late\n")
    got = console.read(size=1, timeout=10)
    while not got.endswith(b"late\n"):
        got += console.read(size=1, timeout=10)
    assert got == b"late\n"


def test_console_expect_timeout_keeps_what_came(target, fixtures):
    console = target.get_driver("DbgctlConsoleDriver")
    console.launch([fixtures["echo"]], kind="exec")
    console.expect(r"\]\n", timeout=10)
    console.write(b"partial answer")
    with pytest.raises(pexpect.TIMEOUT):
        console.expect(r"complete answer", timeout=0.5)
    # labgrid's expect raised with the bytes in its buffer; they are not
    # lost: the next expect finds them.
    index, before, match, after = console.expect(r"partial (\w+)",
                                                 timeout=10)
    assert match.group(1) == b"answer"


def test_console_sees_the_end_of_the_stream(target, fixtures):
    console = target.get_driver("DbgctlConsoleDriver")
    s = console.launch([fixtures["echo"]], kind="exec")
    s.write(b"last words\n", eof=True)
    index, before, match, after = console.expect(
        [r"more", pexpect.EOF], timeout=10)
    assert index == 1
    assert before.endswith(b"last words\n")
    with pytest.raises(pexpect.EOF):
        console.read(timeout=1)


def test_console_attaches_to_a_named_session_at_its_end(
        tcp_daemon, tmp_path, fixtures):
    import dbgctl
    connect, token = tcp_daemon
    with dbgctl.Client(connect=connect, token_file=token) as c:
        s = c.launch([fixtures["echo"]], kind="exec", transport=True,
                     name="lg-named", lease=True)
        s.write(b"before attach\n")
        s.read_until(b"before attach\n")
        env = labgrid.Environment(labgrid_env(
            tmp_path / "env.yaml", tcp_daemon,
            drivers=["DbgctlConsoleDriver: {session_name: lg-named}"]))
        try:
            console = env.get_target("main").get_driver(
                "DbgctlConsoleDriver")
            assert console.session.id == s.id
            console.write(b"after attach\n")
            index, before, match, after = console.expect(r"(\w+) attach\n",
                                                         timeout=10)
            assert (match.group(1), before) == (b"after", b"")
        finally:
            env.cleanup()
        assert s.status()["state"] == "running"


def test_console_without_a_session_says_so(target):
    console = target.get_driver("DbgctlConsoleDriver")
    with pytest.raises(Exception, match="no session: launch or attach"):
        console.write(b"x")


def _board_yaml(tcp_daemon, tmp_path, fw):
    """An environment with the board's image and the example strategy."""
    return labgrid_env(
        tmp_path / "env.yaml", tcp_daemon,
        imports=[os.path.join(EXAMPLE, "strategy.py")],
        images='images:\n  board: "%s"\n' % fw,
        drivers=["DbgctlConsoleDriver", "BoardStrategy"])


def test_strategy_boots_the_board(tcp_daemon, tmp_path, board_elf):
    env = labgrid.Environment(_board_yaml(tcp_daemon, tmp_path, board_elf))
    try:
        t = env.get_target("main")
        strategy = t.get_driver("Strategy")
        console = t.get_driver("DbgctlConsoleDriver", activate=False)
        strategy.transition("booted")
        assert strategy.status.name == "booted"
        assert console.offset >= len(b"dbgctl board ready\r\n")
        server = strategy.session.status()["server"]
        with open("/proc/%d/comm" % server["pid"]) as f:
            assert f.read().strip() == "qemu-system-arm"
        strategy.transition("shell")
        assert strategy.status.name == "shell"
        console.sendline("uart 7")
        index, before, match, after = console.expect(r"uart (\d)\n",
                                                     timeout=10)
        assert match.group(1) == b"7"
        session = strategy.session
        pids = [session.status()["keeper_pid"], server["pid"]]
        strategy.transition("off")
        assert session.status()["state"] in ("exited", "failed")
        assert [p for p in pids if alive(p)] == []
    finally:
        env.cleanup()


def test_strategy_example_under_labgrids_pytest(tcp_daemon, tmp_path,
                                                board_elf):
    env_file = _board_yaml(tcp_daemon, tmp_path, board_elf)
    env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "python"))
    env.pop("DBGCTL_TAP", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--lg-env", env_file, os.path.join(EXAMPLE, "test_strategy.py")],
        env=env, cwd=str(tmp_path), capture_output=True, timeout=300)
    out = run.stdout.decode(errors="replace")
    assert run.returncode == 0, out + run.stderr.decode(errors="replace")
    assert "2 passed" in out, out


def test_board_env_example_loads():
    env = labgrid.Environment(os.path.join(EXAMPLE, "board-env.yaml"))
    try:
        t = env.get_target("main")
        strategy = t.get_driver("Strategy", activate=False)
        assert type(strategy).__name__ == "BoardStrategy"
        assert strategy.status.name == "unknown"
        image = os.path.normpath(env.config.get_image_path("board"))
        assert image == os.path.join(TOP, "build", "examples", "board",
                                     "board.elf")
        console = t.get_driver("DbgctlConsoleDriver", activate=False)
        assert (console.stream, console.session_name) == ("target", None)
    finally:
        env.cleanup()
