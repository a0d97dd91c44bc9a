"""The package installs with Debian's pip and no network, and its pytest
plugin is then found through its entry point."""

import os
import shutil
import subprocess
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_pip_install_and_entry_point(tmp_path):
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"],
                         capture_output=True)
    if pip.returncode != 0:
        pytest.skip("pip is not installed (python3-pip)")
    src = tmp_path / "src"
    shutil.copytree(PYTHON_DIR, src, ignore=shutil.ignore_patterns(
        "tests", "__pycache__", "meson.build"))
    target = tmp_path / "site"
    run = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation",
         "--no-index", "--no-deps", "--target", str(target), str(src)],
        capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    assert (target / "dbgctl" / "pytest_plugin.py").exists()
    env = dict(os.environ, PYTHONPATH=str(target))
    env.pop("DBGCTL_TAP", None)
    helped = subprocess.run([sys.executable, "-m", "pytest", "--help"],
                            env=env, cwd=str(tmp_path), capture_output=True,
                            timeout=120)
    out = helped.stdout.decode(errors="replace")
    assert helped.returncode == 0, out
    assert "--dbgctl-socket" in out and "--dbgctl=PATH" in out
