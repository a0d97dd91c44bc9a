"""Rig hosts over SSH: ``ssh://[user@]host[:port][/path/to/socket]``.

As dbgctl(1) does, and as Docker's ``DOCKER_HOST=ssh://`` does, the
connection runs ``ssh -o BatchMode=yes [-p PORT] [USER@]HOST -- dbgctl
dial-stdio [-s PATH]`` and speaks the protocol over ssh's standard input
and output, through a socketpair.  SSH authenticates: keys, agents,
bastions and ``~/.ssh/config`` apply as for any ssh, and ssh never asks
for a password or a host key (BatchMode).  ``DBGCTL_SSH`` is the ssh
program (words split at blanks, e.g. ``ssh -F /path/config``) and
``DBGCTL_SSH_COMMAND`` the command run on the host in place of ``dbgctl
dial-stdio`` (``-s PATH`` and ``--no-start`` go after it).
"""

import os
import re
import signal
import socket
import subprocess
import tempfile

from .errors import Error

__all__ = ["is_url", "parse", "argv", "Link"]

#: Seconds ssh is given to exit once its connection is closed.
EXIT_WAIT = 5.0

#: The last lines of ssh's stderr an error quotes.
SAID_LINES = 3

_AUTHORITY = re.compile(r"^(?:(?P<user>[^@/]+)@)?"
                        r"(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:/\[\]]+))"
                        r"(?::(?P<port>[0-9]+))?$")


def is_url(address):
    """Whether ``address`` is an ``ssh://`` address."""
    return isinstance(address, str) and address.startswith("ssh://")


def _word_ok(word):
    return bool(word) and not word.startswith("-") and \
        not any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in word)


def parse(url):
    """Split an ``ssh://`` address into ``(user, host, port, path)``; user,
    port and path are ``None`` when not given.  Raises ValueError, saying
    why, for a bad one."""
    if not is_url(url):
        raise ValueError("%r is not an ssh:// address" % url)
    rest = url[6:]
    auth, slash, path = rest.partition("/")
    m = _AUTHORITY.match(auth)
    if not m:
        raise ValueError("bad address %s: want ssh://[USER@]HOST[:PORT]"
                         "[/SOCKET]" % url)
    user, host = m.group("user"), m.group("v6") or m.group("host")
    port = m.group("port")
    if user is not None and not _word_ok(user):
        raise ValueError("bad address %s: bad user name" % url)
    if not _word_ok(host):
        raise ValueError("bad address %s: bad host name" % url)
    if port is not None and not 1 <= int(port) <= 65535:
        raise ValueError("bad address %s: bad port: %s" % (url, port))
    path = "/" + path if slash and path else None
    if path is not None and any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise ValueError("bad address %s: control character in the socket "
                         "path" % url)
    return user, host, int(port) if port else None, path


def _quote(word):
    return "'" + word.replace("'", "'\\''") + "'"


def argv(url, autostart=True):
    """The ssh command line that reaches the daemon at ``url``."""
    user, host, port, path = parse(url)
    args = os.environ.get("DBGCTL_SSH", "").split() or ["ssh"]
    args += ["-o", "BatchMode=yes"]
    if port is not None:
        args += ["-p", str(port)]
    args.append("%s@%s" % (user, host) if user else host)
    remote = os.environ.get("DBGCTL_SSH_COMMAND") or "dbgctl dial-stdio"
    if path:
        remote += " -s " + _quote(path)
    if not autostart:
        remote += " --no-start"
    return args + ["--", remote]


def _explain(code, said):
    """Why the link failed, in words, from ssh's exit code and stderr
    (``code`` negative: killed by that signal)."""
    low = said.lower()
    if code < 0:
        return "ssh was killed by signal %d" % -code
    if code == 127:
        return ("dbgctl is not installed on the host, or not on the PATH "
                "ssh gives it (set DBGCTL_SSH_COMMAND to its path there)")
    if code == 126:
        return "the host cannot run dbgctl"
    if code == 255 and ("host key" in low or
                        "identification has changed" in low):
        return ("the host key is unknown or has changed: check it and add "
                "it to known_hosts (ssh-keyscan, or one ssh by hand); "
                "dbgctl never turns the check off")
    if code == 255 and ("permission denied" in low or
                        "too many authentication failures" in low):
        return ("authentication refused: no key the host accepts (ssh runs "
                "with BatchMode=yes and never asks for a password: use "
                "ssh-agent or ~/.ssh/config)")
    if code == 255 and any(w in low for w in (
            "connection refused", "could not resolve", "no route to host",
            "timed out", "network is unreachable", "connection closed by",
            "connection reset", "kex_exchange_identification")):
        return "host unreachable"
    if code == 255:
        return "ssh failed (exit 255)"
    if code == 0:
        return "the daemon there closed the connection"
    return "dbgctl dial-stdio on the host failed (exit %d)" % code


class Link:
    """One ssh process carrying one connection: ``sock`` is this end."""

    def __init__(self, url, autostart=True):
        self.url = url
        self.argv = argv(url, autostart)
        ours, theirs = socket.socketpair()
        self._err = tempfile.TemporaryFile()
        try:
            # A session of its own: a terminal's Ctrl-C is the caller's.
            self.proc = subprocess.Popen(
                self.argv, stdin=theirs, stdout=theirs, stderr=self._err,
                start_new_session=True)
        except OSError as e:
            ours.close()
            self._err.close()
            raise Error("%s: cannot run %s: %s (DBGCTL_SSH names the ssh "
                        "program)" % (url, self.argv[0], e.strerror)) from e
        finally:
            theirs.close()
        self.sock = ours

    def said(self):
        """The last lines ssh wrote on its stderr, joined by ``; ``."""
        try:
            self._err.seek(0)
            text = self._err.read().decode(errors="replace")
        except (OSError, ValueError):
            return ""
        lines = [ln for ln in text.splitlines()
                 if ln.strip() and not ln.startswith("@")]
        return "; ".join(lines[-SAID_LINES:])

    def wait(self, timeout=EXIT_WAIT):
        """Reap ssh within ``timeout`` seconds, killing it after that;
        its return code."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGKILL)
            return self.proc.wait()

    def error(self):
        """The :class:`Error` that says why the link ended, once ssh has
        (reaped within EXIT_WAIT): its status and its words."""
        code = self.wait()
        said = self.said()
        return Error("%s: %s%s" % (self.url, _explain(code, said),
                                   ": " + said if said else ""))

    def close(self):
        """Close this end, reap ssh and let go of its stderr."""
        try:
            self.sock.close()
        except OSError:
            pass
        self.wait()
        self._err.close()
