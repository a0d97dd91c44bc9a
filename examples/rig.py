#!/usr/bin/env python3
"""Drive the board stand-in (examples/board) the way a test rig does.

    PYTHONPATH=python python3 examples/rig.py [build/examples/board/board.elf]

QEMU runs the firmware with UART0 on the session's transport and
gdb-multiarch connected to QEMU's gdb stub.  The rig expects the banner,
round-trips bytes, stops the board at a breakpoint in ``uart_putc`` and
reads ``counter`` and the registers there, sends the fault byte and prints
the fault record (gdb stops the board in its HardFault handler), resets the
board (which clears the fault, and the banner comes again), and stops the
session: everything is gone when ``stop`` returns.  Each ``expect`` waits
for its pattern from where the last one's match ended, so the rig never
reads a byte twice or misses one; each wait for a stop or a fault names
the target record it must come after (``after=seq``), so it never takes a
stale one.  All of it goes over one connection, with no raw debugger
commands.  It uses the daemon of ``$DBGCTL_SOCKET`` (or the default
socket), starting one if none runs.
"""

import json
import os
import sys

import dbgctl


def launch_board(c, fw):
    """Start the board on ``fw``, running, its UART on the transport: the
    one place that says how a board starts."""
    return c.launch([fw], kind="qemu", machine="lm3s6965evb", lease=True)


def breakpoint_counter(s):
    """Stop at the next echo, read ``counter`` and the pc there, run on."""
    bkpt = s.break_insert("uart_putc")
    seq = s.target_seq
    s.write(b"b")
    stop = s.wait_stop(after=seq, timeout=20)
    value = int(s.eval("counter"))
    pc = s.registers("pc")["pc"]
    s.break_delete(bkpt["number"])
    s.resume()
    s.expect_exact(b"b")
    return stop, value, pc


def main(argv):
    """Run the rig against the firmware named in argv (or the build's)."""
    fw = os.path.abspath(argv[1] if len(argv) > 1
                         else "build/examples/board/board.elf")
    with dbgctl.Client() as c:
        with launch_board(c, fw) as s:
            banner = s.expect(rb"(.*ready)\r\n", timeout=20)
            print("session %d: %s" % (s.id, banner.group(1).decode()))
            s.write(b"hello rig\n")
            print("echoed: %r" % s.expect(rb"hello \w+\n").group())
            stop, counter, pc = breakpoint_counter(s)
            print("stopped at %s by %s (seq %d, pc %s); counter = %d"
                  % (stop.func, stop.reason, stop.seq, pc, counter))
            seq = s.target_seq
            s.write(b"!")
            print("fault:", json.dumps(s.wait_fault(after=seq, timeout=20),
                                       indent=2))
            res = s.reset()
            s.expect(rb"ready\r\n", timeout=20)
            print("reset: fault cleared %s, banner again"
                  % res["fault_cleared"])
            record = s.stop()
        print("stopped: state %s" % record["state"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
