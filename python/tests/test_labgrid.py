"""The labgrid driver: an Environment from YAML, against a daemon on
loopback TCP with a token (see conftest.py's tcp_daemon)."""

import os
import shutil

import pytest

import dbgctl
from dbgctl.pytest_plugin import alive

from conftest import labgrid_env

labgrid = pytest.importorskip("labgrid")


@pytest.fixture
def target(tcp_daemon, tmp_path):
    """The labgrid target of an environment naming the TCP daemon."""
    env = labgrid.Environment(labgrid_env(tmp_path / "env.yaml", tcp_daemon))
    t = env.get_target("main")
    yield t
    env.cleanup()


def _pids(rec):
    return [p for p in (rec.get("pid"), rec.get("keeper_pid"),
                        (rec.get("server") or {}).get("pid")) if p]


def test_driver_runs_a_target_and_stops_it(target, fixtures):
    d = target.get_driver("DbgctlDriver")
    board = os.environ.get("FIX_BOARD")
    if board and shutil.which("qemu-system-arm") and \
            shutil.which("gdb-multiarch"):
        s = d.launch([board], kind="gdbserver", transport=True,
                     debugger="gdb-multiarch", commands=["continue"],
                     server="qemu-system-arm -M lm3s6965evb -nographic "
                     "-kernel %s -serial stdio -monitor none "
                     "-gdb tcp:127.0.0.1:{port} -S" % board)
        d.read_until(s, b"dbgctl board ready", timeout=20)
        server = s.status()["server"]
        with open("/proc/%d/comm" % server["pid"]) as f:
            assert f.read().strip() == "qemu-system-arm"
    else:
        s = d.launch([fixtures["echo"]], kind="exec", transport=True)
    pids = _pids(s.status())
    d.write(s, b"labgrid-round-trip\n")
    d.read_until(s, b"labgrid-round-trip")
    rec = d.stop(s)
    assert rec["state"] in ("exited", "failed"), rec
    assert [p for p in pids if alive(p)] == []
    assert d.sessions == []


def test_deactivate_stops_the_sessions(target, fixtures):
    d = target.get_driver("DbgctlDriver")
    s = d.launch([fixtures["spinner"]], kind="exec")
    pids = _pids(s.status())
    assert pids and all(alive(p) for p in pids)
    target.deactivate(d)
    assert [p for p in pids if alive(p)] == []
    with pytest.raises(Exception):
        d.launch([fixtures["spinner"]], kind="exec")


def test_wrong_token_fails_activation(tcp_daemon, tmp_path, fixtures):
    connect, _ = tcp_daemon
    bad = tmp_path / "bad-token"
    bad.write_text("not-the-token\n")
    bad.chmod(0o600)
    env = labgrid.Environment(labgrid_env(tmp_path / "env.yaml",
                                          (connect, bad)))
    try:
        t = env.get_target("main")
        with pytest.raises(dbgctl.Unauthorized):
            t.get_driver("DbgctlDriver")
    finally:
        env.cleanup()


def test_a_port_from_a_template_is_taken(tcp_daemon, tmp_path, monkeypatch,
                                         fixtures):
    connect, token = tcp_daemon
    host, port = connect[4:].rsplit(":", 1)
    monkeypatch.setenv("LG_DBGCTL_PORT", port)
    path = tmp_path / "env.yaml"
    labgrid_env(path, tcp_daemon)
    # labgrid's !template (of LG_* variables) gives a string.
    text = path.read_text().replace("port: %s" % port,
                                    "port: !template $LG_DBGCTL_PORT")
    assert "!template" in text
    path.write_text(text)
    env = labgrid.Environment(str(path))
    try:
        d = env.get_target("main").get_driver("DbgctlDriver")
        assert d.server.port == int(port)
        s = d.launch([fixtures["echo"]], kind="exec", transport=True)
        d.write(s, b"templated-port\n")
        d.read_until(s, b"templated-port")
    finally:
        env.cleanup()


def test_a_bad_port_names_the_field(tcp_daemon, tmp_path, monkeypatch):
    path = tmp_path / "env.yaml"
    labgrid_env(path, tcp_daemon)
    port = tcp_daemon[0].rsplit(":", 1)[1]
    for bad, said in (('"seventy"', "str 'seventy'"), ("70000", "70000")):
        path.write_text(path.read_text().replace(
            "port: %s" % port, "port: %s" % bad))
        env = labgrid.Environment(str(path))
        try:
            with pytest.raises(Exception) as e:
                env.get_target("main")
            # The error itself, not only a chained one, names it.
            assert "DbgctlServer port must be" in str(e.value), e.value
            assert said in str(e.value), e.value
        finally:
            env.cleanup()
        port = bad
