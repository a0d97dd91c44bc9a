"""The pytest plugin when a test fails: holds, bundles, verdicts in the
JUnit XML, bundles of a run interrupted or killed (run under pytester or
as a pytest of its own, against a real daemon)."""

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET

from dbgctl.pytest_plugin import alive

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One test passes, one fails, each with a leased session of its own that
# it notes; the failing one's session had a deadline's verdict first.
RIG_TESTS = textwrap.dedent('''
    import json, os, time

    def _note(s):
        rec = s.status()
        with open(os.environ["IDS_FILE"], "a") as f:
            f.write(json.dumps({"id": s.id, "pids": [rec["pid"],
                    rec["keeper_pid"]]}) + "\\n")

    def test_passes(dbgctl_launch):
        s = dbgctl_launch(["/bin/sh", "-c", "exec sleep 300"], kind="exec")
        _note(s)

    def test_fails(dbgctl_launch):
        s = dbgctl_launch([os.environ["FIX_SPINNER"]], commands=["run"],
                          deadline=500, on_deadline="hold")
        _note(s)
        deadline = time.monotonic() + 30
        while s.verdict() is None:
            assert time.monotonic() < deadline, "no verdict"
            time.sleep(0.05)
        assert False, "deliberate failure"
''')


def _rig(pytester, monkeypatch, fixtures, *args):
    """Run RIG_TESTS with args; (result, noted sessions, junit root)."""
    ids_file = pytester.path / "ids"
    junit = pytester.path / "junit.xml"
    monkeypatch.setenv("PYTHONPATH", PYTHON_DIR)
    monkeypatch.setenv("FIX_SPINNER", fixtures["spinner"])
    monkeypatch.setenv("IDS_FILE", str(ids_file))
    monkeypatch.delenv("DBGCTL_TAP", raising=False)
    pytester.makepyfile(test_rig=RIG_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "dbgctl.pytest_plugin", "-p", "no:cacheprovider",
        "--junitxml=" + str(junit), *args, timeout=180)
    noted = [json.loads(line) for line in ids_file.read_text().splitlines()]
    return result, noted, ET.parse(str(junit)).getroot()


def _props(root, name):
    """The JUnit properties of the test case called name, as a dict."""
    for case in root.iter("testcase"):
        if case.get("name") == name:
            return {p.get("name"): p.get("value")
                    for p in case.iter("property")}
    raise AssertionError("no testcase %s in the JUnit XML" % name)


def _wait_ended(client, sid, timeout=60):
    """The session's object once it has ended (bounded)."""
    return client.session(sid).wait(timeout=timeout)


def test_hold_on_failure_holds_only_the_failing_tests_sessions(
        pytester, monkeypatch, fixtures, daemon, client):
    monkeypatch.setenv("DBGCTL_SOCKET", daemon)
    result, noted, root = _rig(pytester, monkeypatch, fixtures,
                               "--dbgctl-hold-on-failure=120")
    result.assert_outcomes(passed=1, failed=1)
    passed, failed = noted
    assert client.session(passed["id"]).status()["state"] in (
        "exited", "failed")
    rec = client.session(failed["id"]).status()
    assert rec["state"] == "running", rec
    assert rec["hold"]["lease_ended"] is True, rec["hold"]
    assert "test_fails failed" in rec["hold"]["by"]["note"], rec["hold"]
    assert 100000 < rec["hold"]["left_ms"] <= 120000, rec["hold"]
    assert rec["target"]["state"] == "stopped", rec["target"]
    assert [p for p in failed["pids"] if not alive(p)] == []
    result.stdout.fnmatch_lines([
        "*verdict: deadline*",
        "held for * s, its target halted; look with:",
        "  dbgctl -s %s attach %d" % (daemon, failed["id"]),
        "  dbgctl -s %s logs %d" % (daemon, failed["id"]),
        "  dbgctl -s %s mi %d*dbgctl-gdb*" % (daemon, failed["id"]),
    ])
    props = _props(root, "test_fails")
    assert props.get("dbgctl_verdict_%d" % failed["id"]) == "deadline", \
        props
    assert "dbgctl_held_%d" % failed["id"] in props, props
    assert _props(root, "test_passes") == {}
    # Released, a session whose lease has ended is stopped, all of it.
    client.call("hold", {"session": failed["id"], "ttl": 0})
    end = _wait_ended(client, failed["id"])
    assert end["state"] == "exited", end
    assert [p for p in failed["pids"] if alive(p)] == []


def test_artifacts_bundle_a_failing_tests_session(
        pytester, monkeypatch, fixtures, daemon, client, tmp_path):
    monkeypatch.setenv("DBGCTL_SOCKET", daemon)
    art = tmp_path / "art"
    result, noted, root = _rig(pytester, monkeypatch, fixtures,
                               "--dbgctl-artifacts=" + str(art))
    result.assert_outcomes(passed=1, failed=1)
    failed = noted[1]
    props = _props(root, "test_fails")
    path = props.get("dbgctl_bundle_%d" % failed["id"])
    assert path and path.startswith(str(art) + os.sep), props
    manifest = json.loads(open(os.path.join(path, "manifest.json")).read())
    assert manifest["session"]["id"] == failed["id"], manifest["session"]
    result.stdout.fnmatch_lines(["bundle: %s" % path])
    # Not held: the test's teardown stopped it.
    assert _wait_ended(client, failed["id"])["state"] == "exited"


# A shared native session of a session-scoped fixture; a health check of
# every test reads it with the debugger's reading verbs; one test drives
# it and passes, the next fails without driving it.
SHARED_TESTS = textwrap.dedent('''
    import json, os
    import pytest

    @pytest.fixture(scope="session")
    def shared(dbgctl_client):
        s = dbgctl_client.launch([os.environ["FIX_SPINNER"]],
                                 commands=["run"], name="shared", lease=True)
        s.wait_target("running", timeout=30)
        with open(os.environ["IDS_FILE"], "w") as f:
            json.dump({"id": s.id}, f)
        yield s
        s.stop()

    @pytest.fixture(autouse=True)
    def health(shared):
        assert "pc" in shared.registers("pc")
        assert len(shared.read_memory("$sp", 8)) == 8
        assert shared.break_list() is not None
        assert shared.eval("1 + 1") == "2"

    def test_drives(shared):
        shared.halt()
        shared.resume()

    def test_fails_without_driving_it():
        assert False, "deliberate failure, the shared session not driven"
''')


def test_a_health_check_that_reads_a_shared_session_does_not_blame_it(
        pytester, monkeypatch, fixtures, daemon, client, tmp_path):
    monkeypatch.setenv("DBGCTL_SOCKET", daemon)
    monkeypatch.setenv("PYTHONPATH", PYTHON_DIR)
    monkeypatch.setenv("FIX_SPINNER", fixtures["spinner"])
    ids_file = pytester.path / "ids"
    monkeypatch.setenv("IDS_FILE", str(ids_file))
    monkeypatch.delenv("DBGCTL_TAP", raising=False)
    art, junit = tmp_path / "art", pytester.path / "junit.xml"
    pytester.makepyfile(test_shared=SHARED_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "dbgctl.pytest_plugin", "-p", "no:cacheprovider",
        "--junitxml=" + str(junit), "--dbgctl-artifacts=" + str(art),
        "--dbgctl-hold-on-failure=120", timeout=180)
    result.assert_outcomes(passed=1, failed=1)
    sid = json.loads(ids_file.read_text())["id"]
    # The failing test only read the session through its health check:
    # no section, bundle, hold or property of it.
    assert _props(ET.parse(str(junit)).getroot(),
                  "test_fails_without_driving_it") == {}
    assert "dbgctl session" not in result.stdout.str()
    assert not os.path.exists(str(art)) or os.listdir(str(art)) == []
    # Not held: the fixture's teardown stopped it at the run's end.
    end = _wait_ended(client, sid)
    assert end["state"] == "exited" and not end.get("hold"), end


# A test that fails as soon as its session's fault is known, while the
# daemon is still writing the fault's automatic bundle: a program with
# 200 MiB of memory, whose core takes a while.
FAULT_TESTS = textwrap.dedent('''
    import json, os, sys

    BIG = ("import os, signal; b = b'x' * (200 << 20); "
           "os.kill(os.getpid(), signal.SIGSEGV)")

    def test_faults(dbgctl_launch):
        s = dbgctl_launch([sys.executable, "-c", BIG], commands=["run"])
        with open(os.environ["IDS_FILE"], "w") as f:
            json.dump({"id": s.id}, f)
        assert s.wait_fault(timeout=30) is None
''')


def test_the_daemons_bundle_of_a_fault_is_a_property_of_the_test(
        pytester, monkeypatch, daemon, tmp_path):
    monkeypatch.setenv("DBGCTL_SOCKET", daemon)
    monkeypatch.setenv("PYTHONPATH", PYTHON_DIR)
    ids_file = pytester.path / "ids"
    monkeypatch.setenv("IDS_FILE", str(ids_file))
    monkeypatch.delenv("DBGCTL_TAP", raising=False)
    art, junit = tmp_path / "art", pytester.path / "junit.xml"
    pytester.makepyfile(test_faults=FAULT_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "dbgctl.pytest_plugin", "-p", "no:cacheprovider",
        "--junitxml=" + str(junit), "--dbgctl-artifacts=" + str(art),
        timeout=180)
    result.assert_outcomes(failed=1)
    sid = json.loads(ids_file.read_text())["id"]
    root = ET.parse(str(junit)).getroot()
    bundles = [p.get("value") for p in root.iter("property")
               if p.get("name") == "dbgctl_bundle_%d" % sid]
    # The daemon's own, written once the test had failed, and the
    # plugin's.
    auto = os.path.join(str(art), "%d-fault" % sid)
    assert auto in bundles, bundles
    assert len(bundles) == 2, bundles
    for b in bundles:
        _complete(b)
    result.stdout.fnmatch_lines(["bundle (fault): %s" % auto])


# A test that launches a leased session with the run's artifacts, notes
# it, then kills its own pytest, or interrupts it.
DYING_TESTS = textwrap.dedent('''
    import json, os, signal, time

    def test_dies(dbgctl_launch):
        s = dbgctl_launch([os.environ["FIX_SPINNER"]], commands=["run"])
        s.wait_target("running", timeout=30)
        with open(os.environ["IDS_FILE"], "w") as f:
            json.dump({"id": s.id}, f)
        os.kill(os.getpid(), getattr(signal, os.environ["DIE_BY"]))
        time.sleep(60)
''')


def _dying(tmp_path, daemon, fixtures, how):
    """Run DYING_TESTS in a pytest of its own that dies by signal how, on
    the daemon at socket daemon (None: a private one); (the process, the
    noted session id, the artifacts directory)."""
    rig = tmp_path / "rig"
    rig.mkdir()
    (rig / "test_dies.py").write_text(DYING_TESTS)
    ids_file = tmp_path / "ids"
    art = tmp_path / "art"
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, IDS_FILE=str(ids_file),
               FIX_SPINNER=fixtures["spinner"], DIE_BY=how)
    env.pop("DBGCTL_TAP", None)
    env.pop("DBGCTL_SOCKET", None)
    argv = ["--basetemp=" + str(tmp_path / "bt")]
    if daemon is not None:
        env["DBGCTL_SOCKET"] = daemon
    else:
        argv.append("--dbgctl=" + (os.environ.get("DBGCTLD_BIN") or
                                   "dbgctld"))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "dbgctl.pytest_plugin",
         "-p", "no:cacheprovider", "--dbgctl-artifacts=" + str(art)] +
        argv + [str(rig)], env=env, cwd=str(rig), stdin=subprocess.DEVNULL,
        capture_output=True, timeout=180)
    return proc, json.loads(ids_file.read_text())["id"], art


def _complete(bundle):
    """Assert every file the bundle's manifest names is in it."""
    manifest = json.loads(open(os.path.join(bundle, "manifest.json")).read())
    names = manifest.get("files") or []
    assert names, manifest
    for name in names:
        name = name["name"] if isinstance(name, dict) else name
        assert os.path.exists(os.path.join(bundle, name)), (bundle, name)
    return manifest


def test_a_killed_pytest_leaves_a_complete_bundle(tmp_path, daemon, client,
                                                   fixtures):
    proc, sid, art = _dying(tmp_path, daemon, fixtures, "SIGKILL")
    assert proc.returncode == -signal.SIGKILL, proc
    _wait_ended(client, sid)
    bundles = [d for d in os.listdir(art) if d.startswith("%d-" % sid)]
    assert len(bundles) == 1, os.listdir(art)
    manifest = _complete(os.path.join(art, bundles[0]))
    assert manifest["session"]["id"] == sid


def test_a_killed_pytest_leaves_a_bundle_of_its_private_daemons_session(
        tmp_path, fixtures):
    proc, sid, art = _dying(tmp_path, None, fixtures, "SIGKILL")
    assert proc.returncode == -signal.SIGKILL, proc
    # The lifeline ends the daemon (SIGTERM); first the lease's end or
    # that signal has the session's bundle written.
    log = str(tmp_path / "bt" / "dbgctl0" / "dbgctld.log")
    deadline = time.monotonic() + 60
    while " info: exited\n" not in (open(log).read()
                                     if os.path.exists(log) else ""):
        assert time.monotonic() < deadline, "the private daemon lives on"
        time.sleep(0.05)
    bundles = [d for d in os.listdir(art) if d.startswith("%d-" % sid)]
    assert len(bundles) == 1 and bundles[0] in ("%d-lease" % sid,
                                                "%d-signal" % sid), bundles
    manifest = _complete(os.path.join(art, bundles[0]))
    assert manifest["session"]["state"] == "running", \
        "the bundle was written after the stop began"


def test_an_interrupted_pytest_writes_its_tests_bundles(tmp_path, daemon,
                                                        client, fixtures):
    proc, sid, art = _dying(tmp_path, daemon, fixtures, "SIGINT")
    assert proc.returncode == 2, proc
    said = proc.stderr.decode(errors="replace")
    assert "dbgctl: session %d: bundle " % sid in said, said
    path = said.split("dbgctl: session %d: bundle " % sid)[1].split("\n")[0]
    assert path.startswith(str(art) + os.sep), path
    # Named after the test that ran, as a failing test's bundle is.
    assert os.path.basename(path) == \
        "test_dies.py_test_dies-interrupted-%d" % sid, path
    _complete(path)
    _wait_ended(client, sid)


def _wait_gone(pid, timeout):
    """Wait up to timeout seconds for pid to exit (its pidfd turns
    readable)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def test_a_private_daemon_stays_for_its_holds_then_goes(
        pytester, monkeypatch, fixtures):
    monkeypatch.delenv("DBGCTL_SOCKET", raising=False)
    dbgctld = os.environ.get("DBGCTLD_BIN") or "dbgctld"
    result, noted, _ = _rig(pytester, monkeypatch, fixtures,
                            "--dbgctl=" + dbgctld,
                            "--dbgctl-hold-on-failure=120")
    result.assert_outcomes(passed=1, failed=1)
    # The run's last teardown says so, in its captured stderr.
    result.stdout.fnmatch_lines(["dbgctl: 1 session(s) held; the private "
                                 "dbgctld at * stays until their holds end"])
    sock = [line for line in result.stdout.lines if "stays until" in line][
        0].split(" at ")[1].split(" stays")[0]
    import dbgctl
    with dbgctl.Client(socket=sock, autostart=False) as c:
        daemon_pid = c.hello()["pid"]
        failed = noted[1]
        assert c.session(failed["id"]).status()["state"] == "running"
        assert [p for p in failed["pids"] if not alive(p)] == []
        c.call("hold", {"session": failed["id"], "ttl": 0})
    _wait_gone(daemon_pid, 60)
    assert not alive(daemon_pid), "the private daemon outlived its holds"
    assert [p for p in failed["pids"] if alive(p)] == []
