"""The board stand-in under pytest, through dbgctl's fixtures: the pattern
of a rig's suite (boot, breakpoint, continue until the next stop, fault,
reset, reflash, two boards) with the Session's run control verbs.

    PYTHONPATH=python python3 -m pytest -p dbgctl.pytest_plugin \
        --dbgctl=build/daemon examples/test_board.py

``BOARD_ELF`` names the firmware (by default the build's), ``BOARD_B_ELF``
a second build of it with another banner (by default ``board-b.elf``
beside it; the reflash test is skipped without one).  Each test gets its
own board; the plugin stops it when the test ends and, if the test fails,
adds the board's UART and console logs and fault record to the report.
The UART is read with ``expect``: each waits for a pattern from where the
last match ended, so no byte is read twice or missed.  Every wait for a
stop or a fault names the record it must come after (``after=seq``), so
none takes a stale one, and all of it goes over the one connection of
the run: no raw debugger commands, no subscription of its own.
"""

import os
import shutil
import struct

import pytest

FW = os.path.abspath(os.environ.get("BOARD_ELF",
                                    "build/examples/board/board.elf"))
FW_B = os.path.abspath(os.environ.get(
    "BOARD_B_ELF", os.path.join(os.path.dirname(FW), "board-b.elf")))
BANNER = b"dbgctl board ready"

pytestmark = pytest.mark.skipif(
    not (os.path.exists(FW) and shutil.which("qemu-system-arm")
         and shutil.which("gdb-multiarch")),
    reason="needs %s, qemu-system-arm and gdb-multiarch" % FW)


def launch_board(launch, fw=FW, **kw):
    """Start QEMU's lm3s6965evb on ``fw`` under gdb-multiarch, its UART on
    the session's transport, running; ``launch`` is ``dbgctl_launch`` or a
    Client's ``launch``.  The one place that says how a board starts."""
    return launch([fw], kind="qemu", machine="lm3s6965evb", **kw)


@pytest.fixture
def board(dbgctl_launch):
    """A running board with its UART on the transport, past its banner."""
    s = launch_board(dbgctl_launch)
    s.expect_exact(BANNER + b"\r\n", timeout=20)
    return s


def test_echo(board):
    board.write(b"every byte comes back 42\n")
    m = board.expect(rb"every (\w+) comes back (?P<n>\d+)\n", timeout=10)
    assert (m.group(1), m.group("n")) == (b"byte", b"42")
    assert m.before == b""


def test_breakpoint_and_continue_until_stop(board):
    bkpt = board.break_insert("uart_putc")
    seq = board.target_seq
    board.write(b"xy")
    stop = board.wait_stop(after=seq, timeout=20)
    assert (stop.reason, stop.func) == ("breakpoint-hit", "uart_putc")
    assert stop.bkptno == int(bkpt["number"])
    # Stopped: the Cortex-M's registers and memory, by name.
    regs = board.registers("pc", "sp", "xpsr")
    # Natural format: "0x1f4 <uart_putc+4>" for the pc, as gdb prints it.
    assert int(regs["pc"].split()[0], 16) == int(stop.addr, 16)
    assert set(regs) == {"pc", "sp", "xpsr"}
    counter = int(board.eval("counter"))
    assert counter > 0
    raw = board.read_memory("&counter", 4)
    assert struct.unpack("<I", raw)[0] == counter
    # The echo of the second byte is the next stop, never this one again.
    again = board.resume(until_stop=True, timeout=20)
    assert again.seq > stop.seq and again.func == "uart_putc"
    assert board.break_delete() == [bkpt["number"]]
    board.resume()
    assert board.expect_exact(b"xy", timeout=10).before == b""


def test_fault_then_reset_then_fault_again(board):
    seq = board.target_seq
    board.write(b"ok!")
    board.expect_exact(b"ok", timeout=20)
    fault = board.wait_fault(after=seq, timeout=20)
    assert fault["cortex_m"]["decoded"] == ["UNDEFINSTR", "FORCED"]
    assert fault["cortex_m"]["faulting"]["func"] == \
        "fault_undefined_instruction"
    res = board.reset()
    assert res["fault_cleared"] is True and board.fault is None
    board.expect_exact(BANNER + b"\r\n", timeout=20)
    # Deleting every breakpoint leaves the fault triage armed.
    board.break_delete()
    board.write(b"!")
    again = board.wait_fault(after=res["target"]["seq"], timeout=20)
    assert again["seq"] > fault["seq"]
    assert again["cortex_m"]["decoded"] == ["UNDEFINSTR", "FORCED"]


@pytest.mark.skipif(not os.path.exists(FW_B),
                    reason="no second build of the board at %s (BOARD_B_ELF)"
                    % FW_B)
def test_reflash_changes_the_banner(board):
    res = board.load(FW_B)
    assert res["file"] == FW_B
    other = board.expect(rb"([^\r\n]+)\r\n", timeout=20).group(1)
    assert other != BANNER
    board.load(FW)
    assert board.expect(rb"([^\r\n]+)\r\n", timeout=20).group(1) == BANNER


def test_two_boards(dbgctl_launch):
    boards = [launch_board(dbgctl_launch, wait=False) for _ in range(2)]
    for b in boards:
        b.expect_exact(BANNER + b"\r\n", timeout=30)
        b.break_insert("uart_putc")
    seqs = [b.target_seq for b in boards]
    for b in boards:
        b.write(b"z")
    stops = [b.wait_stop(after=seq, timeout=20)
             for b, seq in zip(boards, seqs)]
    assert [s.func for s in stops] == ["uart_putc", "uart_putc"]
    # A fault on one board is that board's alone.
    first, second = boards
    first.break_delete()
    seq = first.target_seq
    first.resume()
    first.write(b"!")
    assert first.wait_fault(after=seq, timeout=20)["cortex_m"]["faulting"]
    assert second.fault is None
    second.break_delete()
    second.resume()
    second.expect_exact(b"z", timeout=10)
