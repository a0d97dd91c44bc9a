"""The pytest plugin's --dbgctl-record: a qemu board of a failing test is
recorded, its report says how to replay the bundle (``dbgctl replay
PATH``), its JUnit properties carry the recording's path, and the
replay stops at the recorded fault (run under pytester, against a
private daemon, with the mps2-an385 board); a board of a machine that
cannot record launches unrecorded; a bundle whose manifest does not list
the whole recording is not said to replay."""

import json
import os
import subprocess
import textwrap
import time
import xml.etree.ElementTree as ET

import pytest

from dbgctl import plugin_failure

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


# A passing test on the lm3s6965evb board, which cannot record.
LM3S_TESTS = textwrap.dedent('''
    import os

    def test_board_runs(dbgctl_launch):
        s = dbgctl_launch([os.environ["FIX_BOARD"]], kind="qemu",
                          machine="lm3s6965evb")
        s.expect(b"dbgctl board ready", timeout=60)
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


def test_under_record_a_board_that_cannot_record_launches_unrecorded(
        pytester, monkeypatch, daemon, board_elf, tmp_path):
    # The daemon refuses "record" on lm3s6965evb: the plugin must not ask.
    monkeypatch.setenv("DBGCTL_SOCKET", daemon)
    monkeypatch.setenv("PYTHONPATH", PYTHON_DIR)
    monkeypatch.delenv("DBGCTL_TAP", raising=False)
    pytester.makepyfile(test_lm3s=LM3S_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "dbgctl.pytest_plugin", "-p", "no:cacheprovider",
        "--dbgctl-record", "--dbgctl-artifacts=" + str(tmp_path / "art"),
        timeout=300)
    result.assert_outcomes(passed=1)
    assert "cannot record" not in result.stdout.str()


class _Item:
    """What recorded() needs of a pytest item."""

    def __init__(self):
        self.user_properties = []


def _bundle_dir(tmp_path, cut=(), missing=()):
    """A bundle directory with a recording's files, its manifest listing
    them but those in cut (as the size bound cut them) and missing."""
    path = tmp_path / "bundle"
    path.mkdir()
    files = []
    for name in plugin_failure.RECORDING_FILES:
        (path / name).write_bytes(b"x" * 8)
        files.append({"name": name, "bytes": 8})
    manifest = {"files": [f for f in files if f["name"] not in missing],
                "cut": [{"name": n, "size": 99, "kept": 8, "why": "bound"}
                        for n in cut],
                "failed": [], "missing": [{"what": n, "why": "killed"}
                                          for n in missing]}
    (path / "manifest.json").write_text(json.dumps(manifest))
    return str(path)


def test_a_bundle_with_its_whole_recording_says_how_to_replay(tmp_path):
    item = _Item()
    path = _bundle_dir(tmp_path)
    assert plugin_failure.recorded(item, 3, path) == \
        "replay: dbgctl replay %s\n" % path
    assert item.user_properties == [("dbgctl_recording_3", os.path.join(
        path, "replay.bin"))]


def test_a_bundle_whose_recording_was_cut_is_not_said_to_replay(tmp_path):
    item = _Item()
    assert plugin_failure.recorded(item, 3, _bundle_dir(
        tmp_path, cut=("replay.bin",))) == ""
    assert item.user_properties == []


def test_a_bundle_whose_recording_is_missing_is_not_said_to_replay(
        tmp_path):
    item = _Item()
    assert plugin_failure.recorded(item, 3, _bundle_dir(
        tmp_path, missing=("replay.bin",))) == ""
    assert item.user_properties == []


class _Config:
    """What artifacts_dir() needs of pytest's config: its options only
    (no private tmpdir factory, as under -p no:tmpdir)."""

    def __init__(self, **options):
        self.options = options

    def getoption(self, name, default=None):
        """The option's value, as pytest's."""
        return self.options.get(name, default)


def test_record_without_artifacts_bundles_under_basetemp(tmp_path):
    config = _Config(dbgctl_record=True, basetemp=str(tmp_path / "bt"))
    d = plugin_failure.artifacts_dir(config)
    assert d == str(tmp_path / "bt" / "dbgctl-artifacts")
    assert os.path.isdir(d) and plugin_failure.artifacts_dir(config) == d


def test_record_without_artifacts_or_basetemp_bundles_in_one_temp_dir():
    config = _Config(dbgctl_record=True)
    d = plugin_failure.artifacts_dir(config)
    try:
        assert os.path.isdir(d) and plugin_failure.artifacts_dir(config) == d
    finally:
        os.rmdir(d)
