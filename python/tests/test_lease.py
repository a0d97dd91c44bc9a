"""A client keeps its leased sessions when it loses its daemon.

A daemon of the test's own (auto-started on a socket in a temporary
directory, its sessions waiting DBGCTLD_ADOPT_GRACE=60 s for the next one)
is SIGKILLed while a reconnecting Client holds a leased session and makes
no call: the client connects to the next daemon at once and claims its
lease with the launch's token, so the session outlives its lease_grace,
while the leased session of a client that does not reconnect ends at its
own (the longer).  A lease is also claimed by another client, given the
session's id and token, and refused with a wrong token.
"""

import os
import signal
import time

import pytest

import dbgctl

from test_reconnect import own_daemon  # noqa: F401 (a fixture)

#: lease_grace (ms) of the session kept, and of the one let go: longer,
#: so that once it has ended the other's grace is over too.
GRACE_KEPT = 6000
GRACE_LEFT = 2 * GRACE_KEPT


def _alive(pid):
    """Whether process pid lives (and is not a zombie)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _sleeper(c, grace):
    """A leased exec session on client c, sleeping, with lease_grace."""
    return c.launch(["sleep", "1000"], kind="exec", lease=True,
                    lease_grace=grace)


def test_a_reconnecting_client_keeps_its_leased_session(own_daemon):  # noqa: F811
    sock, pids = own_daemon
    c = dbgctl.Client(socket=sock)
    other = dbgctl.Client(socket=sock, reconnect=0)
    look = None
    try:
        first = c.hello()["pid"]
        pids.append(first)
        kept = _sleeper(c, GRACE_KEPT)
        left = _sleeper(other, GRACE_LEFT)
        assert isinstance(kept.lease_token, str) and \
            len(kept.lease_token) == 32
        st = kept.status()
        assert "lease_token" not in st
        pid = st["pid"]
        os.kill(first, signal.SIGKILL)
        # No call on c from here: it reconnects and claims by itself.  The
        # test's own look goes to the next daemon, not the dying one.
        deadline = time.monotonic() + 30
        while _alive(first) and time.monotonic() < deadline:
            time.sleep(0.01)
        look = dbgctl.Client(socket=sock)
        ended = look.session(left.id).wait(timeout=60)
        assert ended["state"] in ("exited", "failed"), ended
        st = look.session(kept.id).status()
        assert st["state"] == "running", st
        assert "lease_token" not in st
        assert _alive(pid), "the kept session's process is gone"
        pids.append(look.hello()["pid"])
        assert pids[-1] != first
        # Its client goes: the lease, now that connection's, ends it.
        c.close()
        ended = look.session(kept.id).wait(timeout=60)
        assert ended["state"] in ("exited", "failed"), ended
    finally:
        c.close()
        other.close()
        if look is not None:
            look.close()


def test_another_client_claims_a_lease_with_its_token(own_daemon):  # noqa: F811
    sock, pids = own_daemon
    c = dbgctl.Client(socket=sock)
    pids.append(c.hello()["pid"])
    s = _sleeper(c, 60000)
    token = s.lease_token
    with dbgctl.Client(socket=sock) as d:
        with pytest.raises(dbgctl.Error) as e:
            d.claim(s.id, token)
        assert e.value.kind == "busy", e.value
        c.close()
        with pytest.raises(dbgctl.Error) as e:
            d.claim(s.id, "0" * 32)
        assert e.value.kind == "unauthorized", e.value
        # The launching connection's close may take a moment to be seen.
        for _ in range(500):
            try:
                mine = d.claim(s.id, token)
                break
            except dbgctl.Error as e:
                if e.kind != "busy":
                    raise
                time.sleep(0.01)
        assert mine.lease_token == token
        assert mine.status()["state"] == "running"
        mine.stop(timeout=0)
