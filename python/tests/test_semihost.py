"""Semihosting from Python: ``Session.semihost`` reads the firmware's
semihosting console as the UART is read (expect, read_until, read) and
gives its exit status; the pytest plugin's ``dbgctl_firmware`` makes that
status the test's result, and a failure's report shows it.

``FIX_SEMIHOST`` (exits 3) and ``FIX_SEMIHOST_OK`` (exits 0) are
examples/board/semihost.c; without them, qemu-system-arm or gdb-multiarch
the tests are skipped."""

import os
import shutil
import textwrap

import pytest

import dbgctl

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _firmware(var):
    """The firmware a variable names; skip without it or QEMU."""
    fw = os.environ.get(var)
    if not fw or not os.path.exists(fw):
        pytest.skip("%s is not built" % var)
    for tool in ("qemu-system-arm", "gdb-multiarch"):
        if shutil.which(tool) is None:
            pytest.skip("%s is not on PATH" % tool)
    return fw


def test_semihost_stream_reads_as_the_uart_and_gives_the_exit(client):
    fw = _firmware("FIX_SEMIHOST")
    s = client.launch([fw], kind="qemu", machine="lm3s6965evb",
                      semihosting=True, lease=True)
    try:
        m = s.semihost.expect(rb"exiting with (\d)", timeout=60)
        assert m.group(1) == b"3"
        first = b"semihost: hello from the board\n"
        assert s.semihost.read(max=len(first), timeout=60) == first
        assert s.semihost.wait_exit(timeout=60) == 3
        assert s.semihost.exit_code == 3
        rest = b""
        while True:
            piece = s.semihost.read(timeout=60)
            if not piece:
                break
            rest += piece
        assert rest == b"semihost: exiting with 3\n" \
            b"semihost: a line on the handle :tt\n"
        assert s.semihost.text() == b"semihost: hello from the board\n" \
            b"semihost: exiting with 3\n" \
            b"semihost: a line on the handle :tt\n"
        # The UART's words are on the target stream, not this one.
        assert b"on the UART" in s.logs(stream="target")["data"]
    finally:
        s.stop()


def test_semihost_of_a_session_without_it_is_not_supported(client):
    fw = _firmware("FIX_BOARD")
    s = client.launch([fw], kind="qemu", machine="lm3s6965evb", lease=True)
    try:
        with pytest.raises(dbgctl.Error) as e:
            s.semihost.expect(b"x", timeout=5)
        assert e.value.kind == "not_supported"
        assert "without --semihosting" in str(e.value)
        assert s.semihost.exit_code is None
    finally:
        s.stop()


RIG = textwrap.dedent('''
    import os

    def test_passes(dbgctl_firmware):
        s = dbgctl_firmware(os.environ["FIX_SEMIHOST_OK"])
        assert s.semihost.exit_code == 0

    def test_fails_with_the_firmware_status(dbgctl_firmware):
        dbgctl_firmware(os.environ["FIX_SEMIHOST"])
''')


def test_plugin_reports_the_firmware_status_as_the_result(
        pytester, monkeypatch, daemon):
    _firmware("FIX_SEMIHOST")
    monkeypatch.setenv("PYTHONPATH", PYTHON_DIR)
    monkeypatch.setenv("DBGCTL_SOCKET", daemon)
    monkeypatch.delenv("DBGCTL_TAP", raising=False)
    pytester.makepyfile(test_fw=RIG)
    result = pytester.runpytest_subprocess(
        "-p", "dbgctl.pytest_plugin", "-p", "no:cacheprovider",
        timeout=300)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*firmware *semihost.elf exited with code 3 by semihosting*",
        "*semihost: exiting with 3*",
        "*firmware: exited with code 3, by semihosting*",
    ])
