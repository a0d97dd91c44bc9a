"""The board under labgrid's pytest plugin, booted by BoardStrategy.

    PYTHONPATH=python python3 -m pytest \
        --lg-env examples/labgrid/board-env.yaml \
        examples/labgrid/test_strategy.py

labgrid's ``strategy`` fixture is this environment's BoardStrategy and
``target`` its target; the console is dbgctl's, so ``console.expect`` is
labgrid's own, on the board's UART.
"""


def test_board_answers_on_its_console(strategy, target):
    strategy.transition("shell")
    console = target.get_driver("DbgctlConsoleDriver")
    console.sendline("hello labgrid 42")
    index, before, match, after = console.expect(
        [r"goodbye", r"hello (\w+) (\d+)\n"], timeout=10.0)
    assert index == 1
    assert match.group(1, 2) == (b"labgrid", b"42")


def test_board_powers_off(strategy, target):
    strategy.transition("shell")
    session = strategy.session
    strategy.transition("off")
    assert session.status()["state"] in ("exited", "failed")
