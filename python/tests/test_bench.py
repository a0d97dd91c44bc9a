"""The benchmark's settings as a person gives them: BENCH_BOARD relative
to where the bench is run (tests/bench, scripts/bench)."""

import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def test_a_relative_bench_board_is_found(board_elf, tmp_path):
    bench = os.environ.get("BENCH_BIN")
    if not bench or not os.access(bench, os.X_OK):
        pytest.skip("BENCH_BIN is not set: the benchmark was not built")
    shutil.copy(board_elf, str(tmp_path / "fw.elf"))
    env = dict(os.environ, BENCH_ONLY="board-memory", BENCH_RUNS="1",
               BENCH_SCALE="10", BENCH_BOARD="fw.elf",
               DBGCTL=os.environ.get("DBGCTL_BIN") or "dbgctl",
               DBGCTLD=os.environ.get("DBGCTLD_BIN") or "dbgctld")
    out = subprocess.run([bench], env=env, cwd=str(tmp_path),
                         capture_output=True, stdin=subprocess.DEVNULL,
                         timeout=300)
    table = out.stdout.decode(errors="replace")
    rows = [r for r in table.splitlines() if r.startswith("board memory")]
    assert rows, (table, out.stderr[-2000:])
    for row in rows:
        assert "n/a" not in row and "No such file" not in row, row


def test_scripts_bench_takes_a_relative_board_from_where_it_runs(tmp_path):
    # scripts/bench moves to the tree before it runs: what it hands on is
    # the board as named from the caller's directory.
    script = open(os.path.join(TOP, "scripts", "bench")).read()
    head = script.split('\ncd "$(dirname "$0")/.."\n')[0]
    probe = head + '\nprintf %s "$BENCH_BOARD"\n'
    out = subprocess.run(["sh", "-c", probe], cwd=str(tmp_path),
                         env=dict(os.environ, BENCH_BOARD="fw.elf"),
                         capture_output=True, timeout=30)
    assert out.returncode == 0, out
    assert out.stdout.decode() == str(tmp_path / "fw.elf"), out
