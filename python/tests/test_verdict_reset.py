"""A rig's verdicts on the QEMU board (issue 32), under the pytest plugin
and under the labgrid driver: a reset ends a HardFault's verdict, so a
later unrelated failure on the same board is not reported as a fault; an
expect pending when a deadline's verdict holds the board ends at once,
with the verdict; a reset by the lease's client puts the held board back
in service, with no new launch.

The scenarios are one piece of source, run in this process for labgrid
and written into the suite the plugin runs under pytester."""

import os
import textwrap
import xml.etree.ElementTree as ET

import pytest

from conftest import labgrid_env
from test_plugin_failure import _props

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What a rig does with a board: the same source in both harnesses.
SCENARIOS = textwrap.dedent('''
    import time

    import dbgctl

    BANNER = b"dbgctl board ready\\r\\n"


    def board_launch(launch, fw, **kw):
        """A board launched by launch (a Client's, the plugin's or the
        labgrid driver's), past its banner."""
        s = launch([fw], kind="qemu", machine="lm3s6965evb", **kw)
        s.expect_exact(BANNER, timeout=60)
        return s


    def reset_clears_the_verdict(s):
        """A HardFault's verdict, then a reset: no verdict, the history
        keeps it, and the firmware starts again."""
        seq = s.target_seq
        s.write(b"!")
        s.wait_fault(after=seq, timeout=60)
        assert s.verdict()["kind"] == "fault", s.record.get("verdict")
        res = s.reset(timeout=60)
        assert res["fault_cleared"] is True, res
        assert s.fault is None
        assert s.verdict() is None, s.record.get("verdict")
        old = s.record["verdicts"][-1]
        assert old["kind"] == "fault", old
        assert old["ended"]["by"] == "reset", old
        s.expect_exact(BANNER, timeout=60)


    def expect_ends_at_a_hold_verdict(s):
        """An expect pending when the deadline's verdict holds the board
        ends at once with the verdict; a reset by the lease's client
        puts the board back in service."""
        s.write(b"said-before-the-verdict\\n")
        s.expect_exact(b"said-before-the-verdict", timeout=60)
        s.deadline(2)
        t0 = time.monotonic()
        try:
            s.expect(b"never-said", timeout=90)
        except dbgctl.Verdict as e:
            ended = e
        else:
            raise AssertionError("the expect matched")
        took = time.monotonic() - t0
        assert took < 30, "the expect ended %.1f s after it began, not at "\\
            "the 2 s deadline's verdict" % took
        assert ended.verdict["kind"] == "deadline", ended.verdict
        rec = s.status()
        assert rec["hold"]["by"] == {"verdict": "deadline"}, rec["hold"]
        assert rec["target"]["state"] == "stopped", rec["target"]
        # The lease's client resets it: in service again, not held.
        s.reset(timeout=60)
        rec = s.status()
        assert rec.get("hold") is None, rec["hold"]
        assert rec.get("verdict") is None, rec["verdict"]
        assert rec["state"] == "running", rec
        s.expect_exact(BANNER, timeout=60)
        s.write(b"back-in-service\\n")
        s.expect_exact(b"back-in-service", timeout=60)
''')

_scenarios = {}
exec(compile(SCENARIOS, "scenarios", "exec"), _scenarios)

# The rig under the plugin: a board shared by the module that faults and
# is reset, then fails a test for another reason; a board of its own
# held by a deadline's verdict.
RIG_TESTS = SCENARIOS + textwrap.dedent('''
    import os

    import pytest

    FW = os.environ["FIX_BOARD"]


    @pytest.fixture(scope="module")
    def shared_board(dbgctl_client):
        s = board_launch(dbgctl_client.launch, FW, lease=True,
                         name="shared-board")
        yield s
        s.stop()


    def test_reset_clears_the_verdict(shared_board):
        reset_clears_the_verdict(shared_board)


    def test_a_later_timeout_on_the_board(shared_board):
        shared_board.expect(b"never-said", timeout=1)


    def test_an_expect_ends_at_a_hold_verdict(dbgctl_launch):
        expect_ends_at_a_hold_verdict(board_launch(dbgctl_launch, FW,
                                                   on_deadline="hold"))
''')


def test_plugin_reset_clears_the_verdict_and_a_hold_verdict_ends_an_expect(
        pytester, monkeypatch, daemon, board_elf):
    junit = pytester.path / "junit.xml"
    monkeypatch.setenv("DBGCTL_SOCKET", daemon)
    monkeypatch.setenv("PYTHONPATH", PYTHON_DIR)
    monkeypatch.setenv("FIX_BOARD", board_elf)
    monkeypatch.delenv("DBGCTL_TAP", raising=False)
    pytester.makepyfile(test_rig=RIG_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "dbgctl.pytest_plugin", "-p", "no:cacheprovider",
        "--junitxml=" + str(junit), timeout=400)
    out = result.stdout.str()
    result.assert_outcomes(passed=2, failed=1)
    assert "test_a_later_timeout_on_the_board FAILED" in out or \
        "FAILED test_rig.py::test_a_later_timeout_on_the_board" in out, out
    # The reset ended the fault's verdict: the later failure is a timeout.
    assert "verdict: fault" not in out, out
    props = _props(ET.parse(str(junit)).getroot(),
                   "test_a_later_timeout_on_the_board")
    assert not [k for k in props if k.startswith("dbgctl_verdict_")], props


@pytest.fixture
def driver(tcp_daemon, tmp_path):
    """The labgrid DbgctlDriver of an environment naming the TCP daemon,
    active; the environment is cleaned up after the test."""
    labgrid = pytest.importorskip("labgrid")
    env = labgrid.Environment(labgrid_env(tmp_path / "env.yaml", tcp_daemon))
    t = env.get_target("main")
    yield t.get_driver("DbgctlDriver")
    env.cleanup()


def test_labgrid_reset_clears_the_verdict(driver, board_elf):
    s = _scenarios["board_launch"](driver.launch, board_elf)
    _scenarios["reset_clears_the_verdict"](s)
    driver.stop(s)


def test_labgrid_an_expect_ends_at_a_hold_verdict(driver, board_elf):
    s = _scenarios["board_launch"](driver.launch, board_elf,
                                   on_deadline="hold")
    _scenarios["expect_ends_at_a_hold_verdict"](s)
    driver.stop(s)
