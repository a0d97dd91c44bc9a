"""The pytest plugin, run under pytest's own pytester (see conftest.py)."""

import json
import os
import textwrap

from dbgctl.pytest_plugin import alive

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The rig's tests: one passes, one fails after its target has written to
# its console; both record the pids of their session for the checks below.
# The third sees that the fixture stopped their sessions when they ended.
RIG_TESTS = textwrap.dedent('''
    import json, os, time

    def _note(s):
        rec = s.status()
        pids = [rec["pid"], rec["keeper_pid"]]
        with open(os.environ["PIDS_FILE"], "a") as f:
            f.write(json.dumps({"id": s.id, "pids": pids}) + "\\n")

    def test_round_trip(dbgctl_launch):
        s = dbgctl_launch([os.environ["FIX_ECHO"]], kind="exec",
                          transport=True)
        _note(s)
        s.write(b"ping\\n")
        got = b""
        deadline = time.monotonic() + 10
        while b"ping" not in got and time.monotonic() < deadline:
            got += s.read(timeout=deadline - time.monotonic())
        assert b"ping" in got

    def test_fails_with_the_log(dbgctl_launch):
        s = dbgctl_launch(["/bin/sh", "-c",
                           "echo console-marker-42; exec sleep 300"],
                          kind="exec")
        _note(s)
        deadline = time.monotonic() + 10
        while b"console-marker-42" not in s.logs()["data"]:
            assert time.monotonic() < deadline, "no marker in the log"
            time.sleep(0.02)
        assert False, "deliberate failure"

    def test_earlier_sessions_ended(dbgctl_client):
        with open(os.environ["PIDS_FILE"]) as f:
            ids = [json.loads(line)["id"] for line in f]
        assert ids
        for i in ids:
            assert dbgctl_client.session(i).status()["state"] == "exited"
''')




def _run_rig(pytester, monkeypatch, fixtures, *args):
    pids_file = pytester.path / "pids"
    monkeypatch.setenv("PYTHONPATH", PYTHON_DIR)
    monkeypatch.setenv("FIX_ECHO", fixtures["echo"])
    monkeypatch.setenv("PIDS_FILE", str(pids_file))
    monkeypatch.delenv("DBGCTL_TAP", raising=False)
    pytester.makepyfile(test_rig=RIG_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "dbgctl.pytest_plugin", "-p", "no:cacheprovider", *args,
        timeout=120)
    text = pids_file.read_text() if pids_file.exists() else ""
    noted = [json.loads(line) for line in text.splitlines()]
    return result, noted


def test_private_daemon_pass_fail_and_report(pytester, monkeypatch,
                                             fixtures):
    monkeypatch.delenv("DBGCTL_SOCKET", raising=False)
    dbgctld = os.environ.get("DBGCTLD_BIN") or "dbgctld"
    result, noted = _run_rig(pytester, monkeypatch, fixtures,
                             "--dbgctl=" + dbgctld)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*deliberate failure*",
        "*- dbgctl session * -*",
        "state: running",
        "*console-marker-42*",
    ])
    assert len(noted) == 2
    for n in noted:
        assert [p for p in n["pids"] if alive(p)] == []


def test_named_socket_sessions_are_leased_and_stopped(
        pytester, monkeypatch, fixtures, daemon, client):
    monkeypatch.setenv("DBGCTL_SOCKET", daemon)
    result, noted = _run_rig(pytester, monkeypatch, fixtures,
                             "-k", "round_trip or ended")
    result.assert_outcomes(passed=2)
    assert len(noted) == 1
    rec = client.session(noted[0]["id"]).status()
    assert rec["state"] in ("exited", "failed"), rec
    assert [p for p in noted[0]["pids"] if alive(p)] == []


def test_missing_daemon_binary_is_a_clear_error(pytester, monkeypatch,
                                               fixtures, tmp_path):
    monkeypatch.delenv("DBGCTL_SOCKET", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    result, noted = _run_rig(pytester, monkeypatch, fixtures,
                             "-k", "round_trip")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no dbgctld binary*--dbgctl PATH*"])
    assert noted == []
