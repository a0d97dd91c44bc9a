"""The examples run: examples/rig.py and examples/test_board.py against QEMU
when it is installed, and examples/labgrid-env.yaml loads in labgrid."""

import os
import subprocess
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLES = os.path.join(TOP, "examples")
PYTHON_DIR = os.path.join(TOP, "python")


@pytest.fixture
def board(board_elf):
    """The firmware, or a skip when the board cannot run here."""
    return board_elf


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, **extra)
    env.pop("DBGCTL_TAP", None)
    return env


def test_rig_example(daemon, client, board):
    before = {s["id"] for s in client.list()}
    run = subprocess.run([sys.executable, os.path.join(EXAMPLES, "rig.py"),
                          board], env=_env(DBGCTL_SOCKET=daemon),
                         capture_output=True, timeout=120)
    out = run.stdout.decode(errors="replace")
    assert run.returncode == 0, out + run.stderr.decode(errors="replace")
    assert "dbgctl board ready" in out
    assert "echoed: b'hello rig\\n'" in out
    assert "stopped at uart_putc by breakpoint-hit (seq " in out
    assert '"UNDEFINSTR"' in out and "fault_undefined_instruction" in out
    assert "reset: fault cleared True, banner again" in out
    assert out.rstrip().endswith("stopped: state exited")
    new = [s for s in client.list() if s["id"] not in before]
    assert len(new) == 1 and new[0]["state"] == "exited", new


def test_board_pytest_example(board):
    dbgctld = os.environ.get("DBGCTLD_BIN") or "dbgctld"
    second = os.environ.get("FIX_BOARD_B") or \
        os.path.join(os.path.dirname(board), "board-b.elf")
    env = _env(BOARD_ELF=board, BOARD_B_ELF=second)
    env.pop("DBGCTL_SOCKET", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-p", "dbgctl.pytest_plugin", "--dbgctl=" + dbgctld,
         os.path.join(EXAMPLES, "test_board.py")],
        env=env, cwd=EXAMPLES, capture_output=True, timeout=300)
    out = run.stdout.decode(errors="replace")
    assert run.returncode == 0, out + run.stderr.decode(errors="replace")
    # The reflash test needs the second build of the board.
    want = "5 passed" if os.path.exists(second) else "4 passed, 1 skipped"
    assert want in out, out


def test_labgrid_example_loads():
    labgrid = pytest.importorskip("labgrid")
    env = labgrid.Environment(os.path.join(EXAMPLES, "labgrid-env.yaml"))
    try:
        target = env.get_target("main")
        res = target.get_resource("DbgctlServer")
        assert (res.host, res.port, res.token_file) == \
            ("127.0.0.1", 7400, "/etc/dbgctl/token")
        assert res.connect == "tcp:127.0.0.1:7400"
    finally:
        env.cleanup()


def test_labgrid_ssh_example_loads():
    labgrid = pytest.importorskip("labgrid")
    env = labgrid.Environment(os.path.join(EXAMPLES, "labgrid-ssh-env.yaml"))
    try:
        res = env.get_target("main").get_resource("DbgctlServer")
        assert res.connect == "ssh://rig@rig-host-7"
    finally:
        env.cleanup()
