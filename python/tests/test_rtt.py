"""RTT from Python (issue 36): Session.rtt(channel) on the running QEMU
board (mps2-an385, whose RAM the daemon shares) gives the channel's
expect/read/write, like the target's UART, and never halts the board;
labgrid's console driver reads and writes an RTT channel."""

import json
import os
import shutil
import struct

import pytest

import dbgctl

from conftest import labgrid_env

BANNER = b"dbgctl board an385 ready\r\n"
TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def _valid(obj, ref):
    """Assert obj is what proto/schema.json's $defs/ref says."""
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.path.join(TOP, "proto", "schema.json")) as f:
        defs = json.load(f)["$defs"]
    jsonschema.validate(obj, {"$ref": "#/$defs/" + ref, "$defs": defs})


@pytest.fixture
def an385_elf():
    """The board's firmware for mps2-an385 (FIX_BOARD_AN385), or a skip."""
    fw = os.environ.get("FIX_BOARD_AN385")
    if not fw or not os.path.exists(fw):
        pytest.skip("FIX_BOARD_AN385 is not set: the firmware was not built")
    for tool in ("qemu-system-arm", "gdb-multiarch"):
        if not shutil.which(tool):
            pytest.skip("%s is not on PATH" % tool)
    return fw


def _counter(s):
    """The board's counter, read live."""
    return struct.unpack("<I", s.read_memory("&counter", 4, live=True))[0]


def test_rtt_channel_expect_read_write_never_halt(client, an385_elf):
    s = client.launch([an385_elf], kind="qemu", machine="mps2-an385")
    try:
        s.expect(BANNER, timeout=20)
        ch = s.rtt(0)
        assert (ch.stream, ch.name) == ("rtt0", "Terminal")
        seq = s.status()["target"]["seq"]
        first = _counter(s)
        m = ch.expect(rb"rtt (\d+) counter (\d+)\n", timeout=20)
        assert int(m.group(2)) > 0
        got = ch.read(timeout=20)
        while b"rtt ready\n" not in got:
            got += ch.read(timeout=20)
        ch.write(b"u")
        ch.expect(b"MODE UPPER\n", timeout=20)
        ch.expect(rb"RTT \d+ COUNTER \d+\n", timeout=20)
        target = s.status()["target"]
        assert target["state"] == "running" and target["seq"] == seq
        assert _counter(s) != first
        status = s.status()
        assert status["rtt"]["up"][0]["name"] == "Terminal"
        _valid(status, "session")
        _valid(client.call("rtt", {"session": s.id, "poll_hz": 200}),
               "results/rtt")
    finally:
        s.stop()


def test_rtt_bad_channel_and_rate_refused(client, an385_elf):
    s = client.launch([an385_elf], kind="qemu", machine="mps2-an385")
    try:
        s.expect(BANNER, timeout=20)
        with pytest.raises(dbgctl.Error) as e:
            s.rtt(0, poll_hz=5000)
        assert e.value.kind == "invalid_params"
        with pytest.raises(dbgctl.Error) as e:
            s.rtt(1)
        assert e.value.kind == "invalid_params" and "1 up-channel" in str(
            e.value)
    finally:
        s.stop()


def test_labgrid_console_on_an_rtt_channel(tcp_daemon, tmp_path, an385_elf):
    labgrid = pytest.importorskip("labgrid")
    env = labgrid.Environment(labgrid_env(
        tmp_path / "env.yaml", tcp_daemon,
        drivers=["DbgctlConsoleDriver: {stream: rtt0}"]))
    try:
        target = env.get_target("main")
        d = target.get_driver("DbgctlDriver")
        console = target.get_driver("DbgctlConsoleDriver")
        s = d.launch([an385_elf], kind="qemu", machine="mps2-an385")
        s.expect(BANNER, timeout=20)
        console.attach(s, 0)
        index, before, match, after = console.expect(r"rtt ready\n",
                                                     timeout=20)
        console.write(b"u")
        index, before, match, after = console.expect(
            r"RTT (\d+) COUNTER", timeout=20)
        assert b"MODE UPPER\n" in before
        assert s.status()["target"]["state"] == "running"
    finally:
        env.cleanup()
