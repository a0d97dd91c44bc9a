"""dbgctl inside labgrid: a host's dbgctld, its driver, and a console.

Where boards are scheduled across machines by labgrid's coordinator and
exporters, dbgctld is the per-host debugger service.  Reach it through
SSH, as labgrid reaches its exporters: the resource's ``address`` is
``ssh://[user@]host[:port][/path/to/socket]``, the driver runs
``dbgctl dial-stdio`` there through ssh (see :mod:`dbgctl.ssh`), and the
farm's keys, bastions and ``~/.ssh/config`` decide who gets in; no token,
no port opened.  List this module under ``imports`` in the environment's
YAML::

    imports:
      - dbgctl.labgrid
    targets:
      main:
        resources:
          DbgctlServer:
            address: ssh://rig@rig-host-7
        drivers:
          DbgctlDriver: {}

A daemon listening on TCP with a token is named by ``host``, ``port``
and ``token_file`` instead (the token crosses the network in clear:
prefer ``ssh://`` between machines)::

          DbgctlServer:
            host: 127.0.0.1
            port: 7400
            token_file: /etc/dbgctl/token

Activating :class:`DbgctlDriver` connects; its sessions are leased to that
connection, so they end when the driver is deactivated or the process
holding it dies.  A held session (``hold``, as the pytest plugin's
``--dbgctl-hold-on-failure`` holds a failing test's) is the exception: it
outlives the driver's deactivation and the lease, until its hold's time
runs out or someone releases it.

:class:`DbgctlConsoleDriver` is labgrid's ``ConsoleProtocol`` on a session's
target: ``read``, ``write``, ``sendline`` and labgrid's own ``expect``
(pexpect's, through labgrid's ``ConsoleExpectMixin``), so code written for a
serial console, a ``ShellDriver`` or ``console.expect(...)``, runs on a
board that dbgctld drives::

        drivers:
          DbgctlDriver: {}
          DbgctlConsoleDriver: {}

    console = target.get_driver("DbgctlConsoleDriver")
    console.launch([fw], kind="gdbserver", transport=True, ...)
    console.expect(r"board ready")
    console.sendline("hello")
    index, before, match, after = console.expect(r"(hel+o)")

It reads the session's target transcript (``logs`` on the ``target``
stream from an offset of its own), so it takes no bytes from
:meth:`dbgctl.Session.read` or an ``expect`` of the session, and they take
none from it.

Written against labgrid 0.4.1 (Debian 12's python3-labgrid), using only
``target_factory``, ``Resource``, ``Driver``, ``bindings``,
``Driver.check_active``, ``ConsoleProtocol`` and ``ConsoleExpectMixin``,
which current labgrid keeps.
"""

import base64
import logging

import attr
import pexpect
from labgrid.driver.common import Driver
from labgrid.driver.consoleexpectmixin import ConsoleExpectMixin
from labgrid.factory import target_factory
from labgrid.protocol import ConsoleProtocol
from labgrid.resource.common import Resource

from . import ssh
from .client import Client
from .errors import Error, Timeout, hide_frames

# Under pytest, a failed call's traceback ends at the caller's line.
__tracebackhide__ = hide_frames

# The most a console read asks the daemon for: what is there, up to this.
CONSOLE_READ_MAX = 65536
# Seconds a console wait's reply may take beyond the daemon's own timeout.
CONSOLE_MARGIN = 5.0


def _port(value):
    """A port as an int: a YAML number, or a string of digits as
    labgrid's ``!template`` gives one; anything else as it came, for
    _check_port to refuse."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def _check_port(_resource, _attribute, value):
    """Refuse a port that is not a TCP port number, naming the field
    (with a ValueError: labgrid replaces a TypeError's words with its
    own, leaving ours to a chained traceback)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("DbgctlServer port must be an integer or a string "
                        "of digits (a TCP port), not %s %r"
                        % (type(value).__name__, value))
    if not 0 < value < 65536:
        raise ValueError("DbgctlServer port must be 1 to 65535, not %d"
                         % value)


@target_factory.reg_resource
@attr.s(eq=False)
class DbgctlServer(Resource):
    """A host's dbgctld: ``address`` (``ssh://...``), or a daemon
    listening on TCP at ``host`` and ``port`` with ``token_file``.
    ``port`` is a number or a string of digits (``port: !template
    $DBGCTL_PORT``)."""

    host = attr.ib(default="127.0.0.1",
                   validator=attr.validators.instance_of(str))
    port = attr.ib(default=None, converter=_port, validator=_check_port)
    token_file = attr.ib(default=None, validator=attr.validators.optional(
        attr.validators.instance_of(str)))
    address = attr.ib(default=None, validator=attr.validators.optional(
        attr.validators.instance_of(str)))

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        if self.address is not None and not ssh.is_url(self.address):
            raise ValueError("DbgctlServer address must be ssh://..., not "
                             "%r" % self.address)
        if self.address is not None:
            ssh.parse(self.address)
        elif self.port is None:
            raise ValueError("DbgctlServer needs address (ssh://...) or "
                             "port (TCP)")

    @property
    def connect(self):
        """The address as dbgctl takes it: ``ssh://...`` or
        ``tcp:HOST:PORT``."""
        if self.address is not None:
            return self.address
        host = self.host
        if ":" in host and not host.startswith("["):
            host = "[%s]" % host
        return "tcp:%s:%d" % (host, self.port)


@target_factory.reg_driver
@attr.s(eq=False)
class DbgctlDriver(Driver):
    """Debugger sessions on the host that a :class:`DbgctlServer` names."""

    bindings = {"server": "DbgctlServer"}

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.client = None
        self.sessions = []

    def on_activate(self):
        """Connect to the host's dbgctld: through ssh, or over TCP with
        its token."""
        self.client = Client(connect=self.server.connect,
                             token_file=self.server.token_file)

    def on_deactivate(self):
        """Stop this driver's sessions but the held ones, then close the
        connection (a held session outlives its lease)."""
        try:
            self.stop_all()
        finally:
            self.client.close()
            self.client = None

    @Driver.check_active
    def launch(self, argv, **params):
        """Start a session as :meth:`dbgctl.Client.launch` does, leased to
        this driver's connection; return the :class:`dbgctl.Session`."""
        params.setdefault("lease", True)
        s = self.client.launch(argv, **params)
        self.sessions.append(s)
        return s

    @Driver.check_active
    def exec(self, session, command, timeout=None):
        """Run a debugger command in ``session``; the exec result."""
        return session.exec(command, timeout=timeout)

    @Driver.check_active
    def write(self, session, data):
        """Write all of ``data`` to the target's standard input."""
        return session.write(data)

    @Driver.check_active
    def read(self, session, max=4096, timeout=2.0):
        """Read the target's output: bytes as soon as any are there."""
        return session.read(max=max, timeout=timeout)

    @Driver.check_active
    def read_until(self, session, want, timeout=10.0):
        """Read the target's output until ``want`` has come; all of it."""
        return session.read_until(want, timeout=timeout)

    @Driver.check_active
    def expect(self, session, pattern, timeout=30.0, **kw):
        """Wait in the daemon for ``pattern`` on ``session``'s target
        output; the :class:`dbgctl.Match` (see
        :meth:`dbgctl.Session.expect`, whose arguments it takes)."""
        return session.expect(pattern, timeout=timeout, **kw)

    @Driver.check_active
    def stop(self, session, timeout=None):
        """Stop ``session``; its record once every process is gone."""
        record = session.stop(timeout=timeout)
        if session in self.sessions:
            self.sessions.remove(session)
        return record

    def stop_all(self):
        """Stop every session this driver launched but those held (see
        ``hold``: they stay until their hold ends or is released); raise
        the first error after trying them all."""
        first = None
        for s in list(self.sessions):
            try:
                if s.id is not None and s.status().get("hold"):
                    continue
                s.stop()
            except Error as e:
                first = first or e
        self.sessions = []
        if first is not None:
            raise first


@target_factory.reg_driver
@attr.s(eq=False)
class DbgctlConsoleDriver(ConsoleExpectMixin, Driver, ConsoleProtocol):
    """labgrid's console on a dbgctl session's target output and input.

    ``session_name`` (a session's name or id) attaches the console to that
    session when the driver is activated; otherwise :meth:`launch` or
    :meth:`attach` gives it one.  ``stream`` is the stream read (``target``;
    ``console`` reads the debugger's terminal instead, and then writes go
    there too; ``rtt0`` to ``rtt3`` read an RTT up-channel, started on
    attach, and write its down-channel).  ``txdelay`` is labgrid's pause
    before each byte written.
    """

    bindings = {"dbgctl": "DbgctlDriver"}

    session_name = attr.ib(default=None, validator=attr.validators.optional(
        attr.validators.instance_of((str, int))))
    stream = attr.ib(default="target", validator=attr.validators.in_(
        ("target", "console", "server", "rtt0", "rtt1", "rtt2", "rtt3")))
    txdelay = attr.ib(default=0.0,
                      validator=attr.validators.instance_of(float))

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.logger = logging.getLogger("%s(%s)" % (self, self.target))
        self.session = None
        self.offset = 0

    def on_activate(self):
        """Attach to ``session_name``'s session, if the config names one."""
        if self.session_name is not None:
            self._attach(self.dbgctl.client.session(self.session_name))

    def on_deactivate(self):
        """Forget the session; whoever launched it stops it."""
        self.session = None

    @Driver.check_active
    def launch(self, argv, **params):
        """Launch a session through the bound :class:`DbgctlDriver` (its
        target on the transport unless ``transport=False``), and read it
        from its first byte; return the :class:`dbgctl.Session`."""
        params.setdefault("transport", True)
        s = self.dbgctl.launch(argv, **params)
        self._attach(s, 0)
        return s

    @Driver.check_active
    def attach(self, session, offset=None):
        """Be the console of ``session`` (a :class:`dbgctl.Session`), read
        from ``offset`` in its stream: by default the stream's first byte
        for a session of the bound driver, else the stream's end now."""
        self._attach(session, offset)

    def _attach(self, session, offset=None):
        """Attach, as :meth:`attach` does, while activating too; an RTT
        stream's channel is started first (dbgctl-protocol(7), rtt)."""
        if self.stream.startswith("rtt"):
            session.rtt(int(self.stream[3:]))
        if offset is None:
            offset = 0 if session in self.dbgctl.sessions else \
                self._logs(session, {"lines": 0})["offset"]
        self.session = session
        self.offset = offset
        # What pexpect held was another session's or another offset's.
        self._expect.buffer = self._expect.string_type()

    def _logs(self, session, params):
        """One ``logs`` of the driver's stream of ``session``."""
        p = {"session": session.id, "stream": self.stream}
        p.update(params)
        return session.client.call("logs", p)

    def _session(self):
        """The console's session, or an error saying how to give one."""
        if self.session is None:
            raise Error("%s has no session: launch or attach one first"
                        % self)
        return self.session

    def _take(self, size):
        """What the stream holds from the driver's offset, moving the
        offset past it; ``b""`` if nothing is there yet.  Raises
        pexpect's EOF once the stream has ended and all of it was read."""
        while True:
            res = self._logs(self._session(), {
                "offset": self.offset,
                "max": max(size, CONSOLE_READ_MAX)})
            data = base64.b64decode(res.get("data") or "")
            self.offset = res.get("next_offset", res["offset"] + len(data))
            gap = res.get("missing")
            if not gap:
                break
            # Bytes the transcript's limits lost: say so and read on.
            self.logger.warning("%d bytes at %d of session %d's %s stream "
                                "are lost", gap.get("bytes", 0),
                                gap.get("offset", 0), self.session.id,
                                self.stream)
        if not data and res.get("ended"):
            raise pexpect.EOF("the %s stream of session %d has ended"
                              % (self.stream, self.session.id))
        return data

    def _wait(self, timeout):
        """Wait, in the daemon, until the stream has a byte past the
        driver's offset or ``timeout`` seconds pass (pexpect's TIMEOUT);
        an ``expect`` of any one byte from that offset does it without
        polling, and moves no position that ``read`` or a Session's
        ``expect`` reads from (the latter always says where it starts)."""
        s = self._session()
        ms = max(1, int(round(timeout * 1000)))
        try:
            s.client.call("expect", {
                "session": s.id, "stream": self.stream, "patterns": ".",
                "flags": ["dotall"], "from": self.offset, "timeout": ms},
                timeout=ms / 1000 + CONSOLE_MARGIN)
        except Timeout as e:
            raise pexpect.TIMEOUT("no output from session %d within %.2f s"
                                  % (s.id, timeout)) from e
        except Error as e:
            if e.kind != "eof":
                raise
            raise pexpect.EOF(str(e)) from e

    def _read(self, size=1, timeout=0.0):
        """At least one byte of the stream (what is there, up to
        ``CONSOLE_READ_MAX``), waiting up to ``timeout`` seconds; pexpect's
        TIMEOUT when none came, as labgrid's serial driver raises."""
        data = self._take(size)
        if data:
            return data
        if timeout is None or timeout <= 0:
            raise pexpect.TIMEOUT("no output from session %d"
                                  % self._session().id)
        self._wait(timeout)
        return self._take(size)

    def _write(self, data):
        """Write all of ``data`` to the session: its target's input, its
        terminal for a console driver on the ``console`` stream, or the
        RTT down-channel of an ``rttN`` stream's number."""
        stream = self.stream if self.stream in ("console", "rtt0", "rtt1",
                                                "rtt2", "rtt3") else None
        return self._session().write(data, stream=stream)

