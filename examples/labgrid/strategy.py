"""A labgrid strategy that boots the board stand-in through dbgctl.

``BoardStrategy`` puts the target in one of three states, as labgrid's
``ShellStrategy`` does for a Linux board:

- ``off``: no board session (a running one is stopped, every process gone);
- ``booted``: QEMU runs the firmware (the environment's image ``board``)
  under gdb-multiarch, with UART0 on the session's transport, and the
  console has seen the boot banner (labgrid's ``console.expect``);
- ``shell``: booted, and the UART answers: a line written comes back.

List this file under the environment's ``imports`` after ``dbgctl.labgrid``
(see board-env.yaml beside it); then in a test::

    strategy = target.get_driver("BoardStrategy")
    strategy.transition("shell")
    console = target.get_driver("DbgctlConsoleDriver")
    console.sendline("hello")
    console.expect(r"hello\\n")
"""

import enum

import attr
from labgrid.factory import target_factory
from labgrid.step import step
from labgrid.strategy import Strategy, StrategyError

QEMU = ("qemu-system-arm -M lm3s6965evb -nographic -kernel {fw} "
        "-serial stdio -monitor none -gdb tcp:127.0.0.1:{{port}} -S")


class Status(enum.Enum):
    """The states a board can be put in."""
    unknown = 0
    off = 1
    booted = 2
    shell = 3


@attr.s(eq=False)
class BoardStrategy(Strategy):
    """Off, booted (banner seen) and shell (the UART answers) for the
    board stand-in, through :class:`dbgctl.labgrid.DbgctlConsoleDriver`."""

    bindings = {"dbgctl": "DbgctlDriver", "console": "DbgctlConsoleDriver"}

    image = attr.ib(default="board",
                    validator=attr.validators.instance_of(str))
    banner = attr.ib(default=r"dbgctl board ready\r\n",
                     validator=attr.validators.instance_of(str))
    boot_timeout = attr.ib(default=30.0,
                           validator=attr.validators.instance_of(float))
    status = attr.ib(default=Status.unknown)

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.session = None

    @step(args=["status"])
    def transition(self, status, *, step):
        """Put the board in ``status`` (a :class:`Status` or its name)."""
        if not isinstance(status, Status):
            status = Status[status]
        if status == Status.unknown:
            raise StrategyError("can not transition to %s" % status)
        if status == self.status:
            step.skip("nothing to do")
            return
        if status == Status.off:
            self._off()
        elif status == Status.booted:
            self.transition(Status.off)  # pylint: disable=missing-kwoa
            self._boot()
        elif status == Status.shell:
            if self.status != Status.booted:
                self.transition(Status.booted)  # pylint: disable=missing-kwoa
            self._probe()
        self.status = status

    def _off(self):
        """Stop the board's session, if there is one."""
        if self.session is not None:
            self.target.activate(self.dbgctl)
            self.dbgctl.stop(self.session)
            self.session = None
        self.target.deactivate(self.console)

    def _boot(self):
        """Launch QEMU and gdb on the firmware; wait for its banner."""
        fw = self.target.env.config.get_image_path(self.image)
        self.target.activate(self.console)
        self.session = self.console.launch(
            [fw], kind="gdbserver", debugger="gdb-multiarch",
            commands=["continue"], server=QEMU.format(fw=fw))
        self.console.expect(self.banner, timeout=self.boot_timeout)

    def _probe(self):
        """Write a line and expect it back: the UART answers commands."""
        self.console.sendline("dbgctl-probe")
        self.console.expect(r"dbgctl-probe\n", timeout=10.0)


# labgrid runs an imported .py file again for each Environment made in the
# process, and its factory takes a name once: register the first.
if "BoardStrategy" not in target_factory.all_classes:
    target_factory.reg_driver(BoardStrategy)
