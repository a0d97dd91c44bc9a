"""Keep a private dbgctld for the sessions it holds, then shut it down.

``python3 holdwatch.py SOCKET FD ID...`` is what the pytest plugin leaves
behind when a run ends with held sessions (``--dbgctl-hold-on-failure``):
FD is the write end of the daemon's lifeline (see lifeline.py), so the
daemon lives while this process does.  It waits, through the daemon's own
``wait`` method, for each held session to end (its hold is bounded by the
daemon), then shuts the daemon down and exits, closing the lifeline.
"""

import os
import sys

from dbgctl.client import Client
from dbgctl.errors import Error


def holdwatch_main(argv):
    """Wait out the holds of argv's sessions, then shut the daemon down."""
    if len(argv) < 3 or not argv[2].isdigit():
        sys.stderr.write("usage: holdwatch.py SOCKET FD ID...\n")
        return 2
    sock, fd = argv[1], int(argv[2])
    try:
        with Client(socket=sock, autostart=False) as client:
            for sid in argv[3:]:
                try:
                    client.call("wait", {"session": int(sid)},
                                default=False)
                except Error:
                    pass
            client.shutdown()
    except (Error, OSError):
        pass
    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(holdwatch_main(sys.argv))
