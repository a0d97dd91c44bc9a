"""The pytest plugin's --dbgctl-record: a qemu board of a failing test is
recorded, its report says how to replay the bundle (``dbgctl replay
PATH``), its JUnit properties carry the recording's path, and the
replay stops at the recorded fault (run under pytester, against a
private daemon, with the mps2-an385 board)."""

import json
import os
import subprocess
import textwrap
import time
import xml.etree.ElementTree as ET

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A test whose board faults (the fault byte), recorded or not as the run
# says.
BOARD_TESTS = textwrap.dedent('''
    import json, os

    def test_board_faults(dbgctl_launch):
        s = dbgctl_launch([os.environ["FIX_BOARD_AN385"]], kind="qemu",
                          machine="mps2-an385", transport=True)
        with open(os.environ["IDS_FILE"], "w") as f:
            json.dump({"id": s.id}, f)
        s.read_until(b"ready", timeout=60)
        s.write(b"!")
        assert s.wait_fault(timeout=60) is None
''')


@pytest.fixture
def board_an385():
    """The mps2-an385 firmware, or a skip."""
    fw = os.environ.get("FIX_BOARD_AN385")
    if not fw or not os.path.exists(fw):
        pytest.skip("board-an385.elf is not built (FIX_BOARD_AN385)")
    return fw


def _run(pytester, monkeypatch, daemon, *args):
    """Run BOARD_TESTS with args; (result, session id, junit root)."""
    monkeypatch.setenv("DBGCTL_SOCKET", daemon)
    monkeypatch.setenv("PYTHONPATH", PYTHON_DIR)
    ids_file = pytester.path / "ids"
    monkeypatch.setenv("IDS_FILE", str(ids_file))
    monkeypatch.delenv("DBGCTL_TAP", raising=False)
    junit = pytester.path / "junit.xml"
    pytester.makepyfile(test_board=BOARD_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "dbgctl.pytest_plugin", "-p", "no:cacheprovider",
        "--junitxml=" + str(junit), *args, timeout=300)
    sid = json.loads(ids_file.read_text())["id"]
    return result, sid, ET.parse(str(junit)).getroot()


def _props(root, name):
    """The values of the JUnit properties called name."""
    return [p.get("value") for p in root.iter("property")
            if p.get("name") == name]


def test_a_recorded_failing_test_says_how_to_replay_its_board(
        pytester, monkeypatch, daemon, board_an385, tmp_path):
    art = tmp_path / "art"
    result, sid, root = _run(pytester, monkeypatch, daemon,
                             "--dbgctl-record", "--dbgctl-artifacts=" +
                             str(art))
    result.assert_outcomes(failed=1)
    recordings = _props(root, "dbgctl_recording_%d" % sid)
    assert recordings, ET.tostring(root)[:2000]
    rec = recordings[0]
    assert os.path.getsize(rec) > 0, rec
    bundle = os.path.dirname(rec)
    result.stdout.fnmatch_lines(["*replay: dbgctl replay %s" % bundle])
    # The bundle replays: the replay stops at the recorded fault.
    env = dict(os.environ, DBGCTL_SOCKET=daemon)
    dbgctl = os.environ.get("DBGCTL_BIN", "dbgctl")
    out = subprocess.run([dbgctl, "replay", bundle], env=env, check=True,
                         capture_output=True, text=True, timeout=120)
    rid = out.stdout.strip()
    try:
        # Its first stop is the reset's; the fault's record comes after.
        end = time.monotonic() + 120
        st = {}
        while time.monotonic() < end and not st.get("fault") and \
                (st.get("target") or {}).get("state") != "exited":
            st = json.loads(subprocess.run(
                [dbgctl, "--json", "status", rid], env=env, check=True,
                capture_output=True, text=True, timeout=60).stdout)
            time.sleep(0.1)
        assert st.get("faulted") == "*HardFault_Handler", json.dumps(st)
    finally:
        subprocess.run([dbgctl, "stop", rid], env=env, timeout=60,
                       capture_output=True)


def test_without_record_a_failing_test_has_no_recording(
        pytester, monkeypatch, daemon, board_an385, tmp_path):
    art = tmp_path / "art"
    result, sid, root = _run(pytester, monkeypatch, daemon,
                             "--dbgctl-artifacts=" + str(art))
    result.assert_outcomes(failed=1)
    assert not _props(root, "dbgctl_recording_%d" % sid)
    assert _props(root, "dbgctl_bundle_%d" % sid)
    assert "dbgctl replay" not in result.stdout.str()


def test_a_recorded_failing_tests_board_is_released_not_held(
        pytester, monkeypatch, daemon, board_an385, tmp_path, client):
    art = tmp_path / "art"
    result, sid, root = _run(pytester, monkeypatch, daemon,
                             "--dbgctl-record", "--dbgctl-artifacts=" +
                             str(art), "--dbgctl-hold-on-failure=600")
    result.assert_outcomes(failed=1)
    assert _props(root, "dbgctl_recording_%d" % sid)
    assert not _props(root, "dbgctl_held_%d" % sid)
    result.stdout.fnmatch_lines(["*not held: its recording replays it"])
    st = client.call("status", {"session": sid})
    assert not st.get("hold"), st
