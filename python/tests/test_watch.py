"""Live watch from Python (issue 36): Session.watch is an iterator of the
samples of the running QEMU board's counter, rising, at the asked rate by
their own timestamps, the target never halted; wait() answers with a
sample meeting a condition; a non-lvalue is refused."""

import os

import pytest

import dbgctl


@pytest.fixture
def an385_elf(board_elf):
    """The mps2-an385 variant of the board (FIX_BOARD_AN385), or a skip."""
    fw = os.environ.get("FIX_BOARD_AN385")
    if not fw or not os.path.exists(fw):
        pytest.skip("FIX_BOARD_AN385 is not set: the firmware was not built")
    return fw


def test_watch_iterates_samples_without_a_halt(client, an385_elf):
    s = client.launch([an385_elf], kind="qemu", machine="mps2-an385")
    try:
        s.expect(b"dbgctl board an385 ready\r\n", timeout=20)
        seq = s.status()["target"]["seq"]
        with s.watch("counter", hz=100) as w:
            assert w.expressions[0]["type"] == "uint32"
            samples = []
            for sample in w:
                samples.append(sample)
                if len(samples) == 100:
                    break
            values = [x["values"]["counter"] for x in samples]
            assert values == sorted(values) and values[-1] > values[0]
            seqs = [x["seq"] for x in samples]
            assert seqs == sorted(set(seqs))
            # Samples keep the grid of ticks; a loaded machine may skip
            # some ticks, which each sample says, but not half of them.
            ticks = seqs[-1] - seqs[0]
            spacing = (samples[-1]["t"] - samples[0]["t"]) / ticks
            assert 0.009 < spacing < 0.011, "%f s a tick" % spacing
            assert ticks <= 2 * 99, "100 samples span %d ticks" % ticks
            met = w.wait("counter > %d" % (values[-1] + 1000), timeout=30)
            assert met["values"]["counter"] > values[-1] + 1000
        assert w.stopped
        target = s.status()["target"]
        assert target["state"] == "running" and target["seq"] == seq
        with pytest.raises(dbgctl.Error) as e:
            s.watch("counter + 1")
        assert e.value.kind == "invalid_params"
        assert "not an lvalue" in str(e.value)
    finally:
        s.stop()
