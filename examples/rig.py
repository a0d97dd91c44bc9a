#!/usr/bin/env python3
"""Drive the board stand-in (examples/board) the way a test rig does.

    PYTHONPATH=python python3 examples/rig.py [build/examples/board/board.elf]

QEMU runs the firmware with UART0 on the session's transport and gdb-multiarch
connected to QEMU's gdb stub.  The rig reads the banner, round-trips bytes,
stops the board at a breakpoint and reads ``counter`` through exec, sends the
fault byte and prints the fault record, and stops the session: everything
is gone when ``stop`` returns.  It uses the daemon of ``$DBGCTL_SOCKET`` (or
the default socket), starting one if none runs.
"""

import json
import os
import sys

import dbgctl

QEMU = ("qemu-system-arm -M lm3s6965evb -nographic -kernel {fw} "
        "-serial stdio -monitor none -gdb tcp:127.0.0.1:{{port}} -S")


def breakpoint_counter(s):
    """Stop at the next echo, read ``counter`` there, and run on."""
    s.exec("-exec-interrupt")
    s.wait_target("stopped")
    bkpt = s.exec("-break-insert uart_putc")["results"]["bkpt"]
    s.exec("-exec-continue")
    s.wait_target("running")
    s.write(b"b")
    stop = s.wait_target("stopped").get("stop", {})
    value = s.exec("-data-evaluate-expression counter")["results"]["value"]
    s.exec("-break-delete %s" % bkpt["number"])
    s.exec("-exec-continue")
    s.read_until(b"b")
    return stop, int(value)


def main(argv):
    """Run the rig against the firmware named in argv (or the build's)."""
    fw = os.path.abspath(argv[1] if len(argv) > 1
                         else "build/examples/board/board.elf")
    with dbgctl.Client() as c:
        s = c.launch([fw], kind="gdbserver", debugger="gdb-multiarch",
                     server=QEMU.format(fw=fw), transport=True,
                     commands=["continue"], lease=True)
        with s:
            banner = s.read_until(b"ready\r\n", timeout=20)
            print("session %d: %s" % (s.id, banner.decode().strip()))
            s.write(b"hello rig\n")
            print("echoed: %r" % s.read_until(b"hello rig\n"))
            stop, counter = breakpoint_counter(s)
            print("stopped at %s by %s; counter = %d"
                  % (stop.get("func"), stop.get("reason"), counter))
            s.write(b"!")
            print("fault:", json.dumps(s.wait_fault(), indent=2))
            record = s.stop()
        print("stopped: state %s" % record["state"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
