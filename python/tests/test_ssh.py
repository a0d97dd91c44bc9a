"""ssh:// from Python: the client, the pytest plugin and the labgrid driver
through a real sshd of the module's own (conftest.py's ssh_daemon), which
runs the build's ``dbgctl dial-stdio`` on the far side."""

import os
import shlex
import signal
import subprocess
import time

import pytest

import dbgctl
from dbgctl import ssh
from dbgctl.pytest_plugin import alive

from conftest import labgrid_env
from test_plugin import _run_rig


def _wait_ended(session, timeout=20.0):
    """The session's record once it has ended, polled within timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rec = session.status()
        if rec["state"] in ("exited", "failed"):
            return rec
        time.sleep(0.05)
    raise AssertionError("session %d did not end: %s" % (session.id, rec))


def test_parse_and_argv(monkeypatch):
    assert ssh.parse("ssh://rig@host:2222/run/sock") == \
        ("rig", "host", 2222, "/run/sock")
    assert ssh.parse("ssh://[::1]") == (None, "::1", None, None)
    for bad in ("ssh://", "ssh://-oProxyCommand=x", "ssh://h:0",
                "ssh://h:99999", "ssh://a b", "ssh://h/x\ny"):
        with pytest.raises(ValueError):
            ssh.parse(bad)
    monkeypatch.setenv("DBGCTL_SSH", "ssh -F /c")
    monkeypatch.delenv("DBGCTL_SSH_COMMAND", raising=False)
    assert ssh.argv("ssh://u@h:22/it's", autostart=False) == [
        "ssh", "-F", "/c", "-o", "BatchMode=yes", "-p", "22", "u@h", "--",
        "dbgctl dial-stdio -s '/it'\\''s' --no-start"]
    with pytest.raises(ValueError):
        dbgctl.Client(connect="ssh://-x")


def test_client_launch_expect_exec_stop(ssh_daemon, fixtures):
    url, _ = ssh_daemon
    with dbgctl.Client(connect=url) as c:
        assert c.address == url
        assert c.ping() == {"pong": True}
        s = c.launch([fixtures["echo"]], kind="exec", transport=True)
        s.write(b"over-ssh-42\n")
        m = s.expect(rb"over-ssh-(\d+)", timeout=20)
        assert m.group(1) == b"42"
        pids = [p for p in (s.status()["pid"], s.status()["keeper_pid"]) if p]
        rec = s.stop()
        assert rec["state"] in ("exited", "failed")
        assert [p for p in pids if alive(p)] == []
        with c.launch([fixtures["echo"]]) as g:
            res = g.exec("-break-insert main")
            assert res["results"]["bkpt"]["func"] == "main"


def test_subscribe_over_ssh(ssh_daemon):
    url, _ = ssh_daemon
    with dbgctl.Client(connect=url) as c:
        c.subscribe()
        s = c.launch(["/bin/sh", "-c", "echo noted-over-ssh"], kind="exec")
        states = []
        for msg in c.notifications(timeout=20):
            p = msg.get("params", {})
            if msg.get("method") == "session.state" and \
                    p.get("session") == s.id:
                states.append(p.get("state"))
                if p.get("state") in ("exited", "failed"):
                    break
        assert states[-1] == "exited", states


@pytest.fixture
def local(ssh_daemon):
    """A client of the ssh_daemon's own socket, on this host."""
    with dbgctl.Client(socket=ssh_daemon[1], autostart=False) as c:
        yield c


def test_a_lease_ends_when_ssh_is_killed(ssh_daemon, local, fixtures):
    url, _ = ssh_daemon
    client = local
    c = dbgctl.Client(connect=url)
    s = c.launch([fixtures["spinner"]], kind="exec", lease=True)
    pid = s.status()["pid"]
    c._ssh.proc.send_signal(signal.SIGKILL)
    rec = _wait_ended(client.session(s.id))
    assert rec["state"] == "exited" and not alive(pid)
    with pytest.raises(dbgctl.Error) as e:
        c.ping()
    assert "ssh was killed by signal 9" in str(e.value)
    c.close()


def test_failures_say_what_failed(ssh_daemon, monkeypatch, tmp_path):
    url, _ = ssh_daemon
    config = os.environ["DBGCTL_SSH"].split()[-1]
    cases = [
        ({"DBGCTL_SSH": "/nonexistent/ssh"}, "cannot run /nonexistent/ssh"),
        ({"DBGCTL_SSH": "ssh -F %s -o UserKnownHostsFile=%s" % (
            config, tmp_path / "none")}, "host key is unknown"),
        ({"DBGCTL_SSH_COMMAND": "no-such-dbgctl dial-stdio"},
         "dbgctl is not installed on the host"),
    ]
    for env, want in cases:
        with monkeypatch.context() as m:
            for k, v in env.items():
                m.setenv(k, v)
            t0 = time.monotonic()
            with pytest.raises(dbgctl.Error) as e:
                dbgctl.Client(connect=url)
            assert want in str(e.value) and url in str(e.value)
            assert time.monotonic() - t0 < 15
    other = tmp_path / "other_key"
    os.system("ssh-keygen -q -t ed25519 -N '' -f %s" % other)
    with open(config) as f:
        text = f.read()
    refused = tmp_path / "refused_config"
    refused.write_text(text.replace("id_key", str(other)).replace(
        "IdentityFile " + os.path.dirname(config) + "/", "IdentityFile "))
    monkeypatch.setenv("DBGCTL_SSH", "ssh -F %s" % refused)
    with pytest.raises(dbgctl.Error) as e:
        dbgctl.Client(connect=url)
    assert "authentication refused" in str(e.value)


def test_plugin_over_dbgctl_host(pytester, monkeypatch, fixtures,
                                 ssh_daemon, local):
    url, _ = ssh_daemon
    monkeypatch.delenv("DBGCTL_SOCKET", raising=False)
    result, noted = _run_rig(pytester, monkeypatch, fixtures,
                             "--dbgctl-host=" + url,
                             "-k", "round_trip or ended")
    result.assert_outcomes(passed=2)
    assert len(noted) == 1
    rec = local.session(noted[0]["id"]).status()
    assert rec["state"] in ("exited", "failed"), rec
    assert [p for p in noted[0]["pids"] if alive(p)] == []


def test_labgrid_driver_over_ssh(ssh_daemon, fixtures, tmp_path):
    labgrid = pytest.importorskip("labgrid")
    url, _ = ssh_daemon
    env = labgrid.Environment(labgrid_env(tmp_path / "env.yaml",
                                          (url, None)))
    t = env.get_target("main")
    try:
        d = t.get_driver("DbgctlDriver")
        assert d.server.connect == url
        s = d.launch([fixtures["echo"]], kind="exec", transport=True)
        d.write(s, b"labgrid-over-ssh\n")
        d.read_until(s, b"labgrid-over-ssh", timeout=20)
        d.write(s, b"expected-over-ssh\n")
        assert d.expect(s, "expected-over-(ssh)", timeout=20)
        rec = d.stop(s)
        assert rec["state"] in ("exited", "failed")
    finally:
        env.cleanup()


def test_a_hold_over_dbgctl_host_says_how_to_reach_it(
        pytester, monkeypatch, fixtures, ssh_daemon, local, tmp_path):
    url, _ = ssh_daemon
    monkeypatch.delenv("DBGCTL_SOCKET", raising=False)
    result, noted = _run_rig(pytester, monkeypatch, fixtures,
                             "--dbgctl-host=" + url,
                             "--dbgctl-hold-on-failure=60",
                             "-k", "fails_with_the_log")
    result.assert_outcomes(failed=1)
    sid = noted[0]["id"]
    try:
        result.stdout.fnmatch_lines([
            "held for * s, its target halted; look with:",
            "  dbgctl -H %s attach %d" % (url, sid),
            "  dbgctl -H %s logs %d" % (url, sid),
            "  dbgctl -H %s mi %d    (an IDE: DBGCTL_HOST=%s "
            "DBGCTL_SESSION=%d dbgctl-gdb as its gdb)" % (url, sid, url,
                                                         sid)])
        # Pasted as printed, it reaches the rig host's daemon.
        argv = shlex.split("  dbgctl -H %s logs %d" % (url, sid))
        argv[0] = os.environ.get("DBGCTL_BIN") or "dbgctl"
        env = dict(os.environ, DBGCTL_SOCKET=str(tmp_path / "none"))
        out = subprocess.run(argv, env=env, capture_output=True,
                             stdin=subprocess.DEVNULL, timeout=60)
        assert out.returncode == 0, out
        assert b"console-marker-42" in out.stdout, out
    finally:
        local.call("hold", {"session": sid, "ttl": 0})
    assert _wait_ended(local.session(sid))["state"] == "exited"
