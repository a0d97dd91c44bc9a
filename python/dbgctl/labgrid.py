"""dbgctl inside labgrid: a resource naming a host's dbgctld, and a driver.

Where boards are scheduled across machines by labgrid's coordinator and
exporters, dbgctld is the per-host debugger service, reached over TCP with
a token.  List this module under ``imports`` in the environment's YAML::

    imports:
      - dbgctl.labgrid
    targets:
      main:
        resources:
          DbgctlServer:
            host: 127.0.0.1
            port: 7400
            token_file: /etc/dbgctl/token
        drivers:
          DbgctlDriver: {}

Activating :class:`DbgctlDriver` connects; its sessions are leased to that
connection, so they end when the driver is deactivated or the process
holding it dies.  Written against labgrid 0.4.1 (Debian 12's
python3-labgrid), using only ``target_factory``, ``Resource``, ``Driver``,
``bindings`` and ``Driver.check_active``, which current labgrid keeps.
"""

import attr
from labgrid.driver.common import Driver
from labgrid.factory import target_factory
from labgrid.resource.common import Resource

from .client import Client
from .errors import Error


@target_factory.reg_resource
@attr.s(eq=False)
class DbgctlServer(Resource):
    """A dbgctld listening on TCP: ``host``, ``port`` and ``token_file``."""

    host = attr.ib(default="127.0.0.1",
                   validator=attr.validators.instance_of(str))
    port = attr.ib(default=None,
                   validator=attr.validators.instance_of(int))
    token_file = attr.ib(default=None, validator=attr.validators.optional(
        attr.validators.instance_of(str)))

    @property
    def connect(self):
        """The address in dbgctl's ``tcp:HOST:PORT`` form."""
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
        """Connect to the host's dbgctld with its token."""
        self.client = Client(connect=self.server.connect,
                             token_file=self.server.token_file)

    def on_deactivate(self):
        """Stop this driver's sessions, then close the connection."""
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
    def stop(self, session, timeout=None):
        """Stop ``session``; its record once every process is gone."""
        record = session.stop(timeout=timeout)
        if session in self.sessions:
            self.sessions.remove(session)
        return record

    def stop_all(self):
        """Stop every session this driver launched; raise the first error
        after trying them all."""
        first = None
        for s in list(self.sessions):
            try:
                s.stop()
            except Error as e:
                first = first or e
        self.sessions = []
        if first is not None:
            raise first
