"""Live memory from Python (issue 36): read_memory(live=True) on the
running QEMU board never halts it (the target's seq stays, its counter
moves on), and a live write where only QEMU's monitor serves is
refused."""

import struct
import time

import pytest

import dbgctl


def _counter(s):
    """The board's counter, read live; the target record is untouched."""
    return struct.unpack("<I", s.read_memory("&counter", 4, live=True))[0]


def test_live_read_never_halts_the_board(client, board_elf):
    s = client.launch([board_elf], kind="qemu", machine="lm3s6965evb")
    try:
        s.expect(b"dbgctl board ready\r\n", timeout=20)
        seq = s.status()["target"]["seq"]
        first = _counter(s)
        deadline = time.monotonic() + 20
        while _counter(s) == first and time.monotonic() < deadline:
            time.sleep(0.005)
        assert _counter(s) != first, "the counter never moved"
        target = s.status()["target"]
        assert target["state"] == "running" and target["seq"] == seq
        with pytest.raises(dbgctl.Error) as e:
            s.write_memory("&counter", b"\0\0\0\0", live=True)
        assert e.value.kind == "not_supported"
    finally:
        s.stop()
