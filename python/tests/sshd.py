"""A real OpenSSH server for the ssh:// tests: /usr/sbin/sshd with its own
sshd_config, host key and authorized key in a temporary directory, on a
loopback port; the client side's config (known_hosts, identity) for
``DBGCTL_SSH``.  The far side sees the build's dbgctl first on its PATH.
"""

import contextlib
import os
import signal
import socket
import subprocess
import time

import pytest

SSHD = "/usr/sbin/sshd"

#: Seconds sshd has to listen.
START_TIMEOUT = 20.0


def _keygen(path):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                    "dbgctl-test", "-f", path], check=True,
                   stdin=subprocess.DEVNULL, capture_output=True)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


class Sshd:
    """A running sshd: ``port``, ``config`` (the client's ssh_config),
    ``env`` (DBGCTL_SSH for it), ``url(sock)``."""

    def __init__(self, tmp, path):
        self.dir = os.path.join(tmp, "ssh")
        os.makedirs(self.dir, mode=0o700)
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        _keygen(os.path.join(self.dir, "host_key"))
        _keygen(os.path.join(self.dir, "id_key"))
        with open(os.path.join(self.dir, "id_key.pub")) as f:
            _write(os.path.join(self.dir, "authorized_keys"), f.read())
        self.path = path
        self.home = tmp
        self.proc = None
        for _ in range(5):
            self.port = _free_port()
            if self._start():
                break
        if self.proc is None:
            raise RuntimeError("sshd would not start: %s" % self._log())
        self.config = os.path.join(self.dir, "ssh_config")
        with open(os.path.join(self.dir, "host_key.pub")) as f:
            pub = " ".join(f.read().split()[:2])
        _write(os.path.join(self.dir, "known_hosts"),
               "[127.0.0.1]:%d %s\n" % (self.port, pub))
        _write(self.config, "\n".join([
            "Host *",
            "  UserKnownHostsFile %s/known_hosts" % self.dir,
            "  GlobalKnownHostsFile /dev/null",
            "  StrictHostKeyChecking yes",
            "  IdentityFile %s/id_key" % self.dir,
            "  IdentitiesOnly yes",
            "  ControlPath none",
            "  LogLevel ERROR", ""]))
        self.env = {"DBGCTL_SSH": "ssh -F %s" % self.config}

    def _log(self):
        try:
            with open(os.path.join(self.dir, "sshd.log"),
                      errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _start(self):
        """Start sshd on self.port; true once it listens."""
        conf = os.path.join(self.dir, "sshd_config")
        _write(conf, "\n".join([
            "ListenAddress 127.0.0.1:%d" % self.port,
            "HostKey %s/host_key" % self.dir,
            "AuthorizedKeysFile %s/authorized_keys" % self.dir,
            "PidFile none", "StrictModes no", "UsePAM no",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password",
            "AllowStreamLocalForwarding yes",
            "MaxStartups 100:30:200", "LogLevel INFO",
            # HOME too: no shell rc file of the user's slows or changes it.
            "SetEnv PATH=%s HOME=%s XDG_RUNTIME_DIR=%s XDG_STATE_HOME=%s"
            % (self.path, self.home, self.home,
               os.path.join(self.home, "state")), ""]))
        log = os.path.join(self.dir, "sshd.log")
        if os.path.exists(log):
            os.unlink(log)
        proc = subprocess.Popen([SSHD, "-D", "-f", conf, "-E", log],
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            if "Server listening on" in self._log():
                self.proc = proc
                return True
            time.sleep(0.01)
        proc.kill()
        proc.wait()
        raise RuntimeError("sshd did not listen: %s" % self._log())

    def url(self, sock):
        """The ssh:// address of the daemon at ``sock`` through this sshd."""
        return "ssh://127.0.0.1:%d%s" % (self.port, sock)

    def stop(self):
        """Stop sshd and what it started (its process group's sessions
        have their own: each ends when its connection does)."""
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


@contextlib.contextmanager
def running(tmp, dbgctl_bin):
    """Run sshd in ``tmp``, the far side's PATH starting with the directory
    of ``dbgctl_bin``; skip when sshd is not installed (fail under
    ``DBGCTL_CI=1``).  Yields Sshd and
    always stops it."""
    if not os.access(SSHD, os.X_OK):
        why = "%s is not installed (openssh-server)" % SSHD
        if os.environ.get("DBGCTL_CI") == "1":
            pytest.fail("DBGCTL_CI=1: %s" % why)
        pytest.skip(why)
    s = Sshd(tmp, "%s:/usr/bin:/bin" % os.path.dirname(dbgctl_bin))
    try:
        yield s
    finally:
        s.stop()
