"""The board stand-in under pytest, through dbgctl's fixtures.

    PYTHONPATH=python python3 -m pytest -p dbgctl.pytest_plugin \
        --dbgctl=build/daemon examples/test_board.py

``BOARD_ELF`` names the firmware (by default the build's).  Each test gets
its own board; the plugin stops it when the test ends and, if the test
fails, adds the board's console log and fault record to the report.
"""

import os
import shutil

import pytest

FW = os.path.abspath(os.environ.get("BOARD_ELF",
                                    "build/examples/board/board.elf"))

pytestmark = pytest.mark.skipif(
    not (os.path.exists(FW) and shutil.which("qemu-system-arm")
         and shutil.which("gdb-multiarch")),
    reason="needs %s, qemu-system-arm and gdb-multiarch" % FW)


@pytest.fixture
def board(dbgctl_launch):
    """A running board with its UART on the transport, past its banner."""
    s = dbgctl_launch(
        [FW], kind="gdbserver", debugger="gdb-multiarch", transport=True,
        commands=["continue"],
        server="qemu-system-arm -M lm3s6965evb -nographic -kernel %s "
               "-serial stdio -monitor none -gdb tcp:127.0.0.1:{port} -S"
               % FW)
    assert s.read_until(b"dbgctl board ready\r\n", timeout=20)
    return s


def test_echo(board):
    board.write(b"every byte comes back\n")
    assert board.read_until(b"back\n") == b"every byte comes back\n"


def test_breakpoint_and_counter(board):
    board.exec("-exec-interrupt")
    board.wait_target("stopped")
    board.exec("-break-insert uart_putc")
    board.exec("-exec-continue")
    board.wait_target("running")
    board.write(b"x")
    stop = board.wait_target("stopped")["stop"]
    assert (stop["reason"], stop["func"]) == ("breakpoint-hit", "uart_putc")
    value = board.exec("-data-evaluate-expression counter")["results"]
    assert int(value["value"]) > 0


def test_fault_record(board):
    board.write(b"!")
    fault = board.wait_fault(timeout=20)
    assert fault["cortex_m"]["decoded"] == ["UNDEFINSTR", "FORCED"]
    assert fault["cortex_m"]["faulting"]["func"] == \
        "fault_undefined_instruction"
