"""Live watch: a session's expressions sampled at a rate while the target
runs (the daemon's ``watch`` method; dbgctl-protocol(7), watch).

:meth:`dbgctl.Session.watch` returns a :class:`Watch`: iterate it for the
samples as they come, each a dict ``{"watch", "seq", "t", "values"}``
(``values`` maps each expression to its value), or :meth:`Watch.wait` for
the first one meeting a condition such as ``"counter > 100"``.
"""

import json


class Watch:
    """A watch the daemon samples; a context manager that stops it.  It
    also stops when the client's connection closes.

    ``id``, ``hz`` and ``expressions`` (each with its ``address``,
    ``size`` and ``type``) are the daemon's answer to the start.  The
    iteration reads the session's ``watch`` stream from where it was when
    the watch started, yielding this watch's samples, and ends at its
    stop (by :meth:`stop`, another client or the session's end).  Samples
    are never lost to a slow iteration: they wait in the stream's
    transcript; ``skipped`` in a sample says how many ticks the daemon
    could not sample before it.
    """

    def __init__(self, session, answer):
        self.session = session
        self.answer = answer
        self.id = answer["watch"]
        self.hz = answer["hz"]
        self.expressions = answer["expressions"]
        self.stopped = False
        self._offset = answer.get("offset", 0)
        self._partial = b""

    def __repr__(self):
        return "<dbgctl.Watch %d of session %s: %s at %d Hz>" % (
            self.id, self.session.id,
            ", ".join(e["expression"] for e in self.expressions), self.hz)

    def _lines(self):
        """This watch's lines of the stream, as they come."""
        while True:
            while b"\n" in self._partial:
                line, self._partial = self._partial.split(b"\n", 1)
                msg = json.loads(line)
                if msg.get("watch") == self.id:
                    yield msg
            res = self.session.logs(offset=self._offset, stream="watch",
                                    wait=True)
            self._offset = res["next_offset"]
            self._partial += res["data"]
            if res.get("ended") and not res["data"]:
                return

    def __iter__(self):
        for msg in self._lines():
            if msg.get("stopped"):
                self.stopped = True
                return
            yield msg

    def wait(self, condition, timeout=None):
        """The first sample meeting ``condition`` (``"EXPR OP NUMBER"``,
        OP one of ``< <= > >= == !=``, EXPR one of the watch's), the last
        one taken included; :class:`dbgctl.Timeout` after ``timeout``
        seconds (``None``: until the watch stops)."""
        params = {"action": "wait", "watch": self.id,
                  "condition": condition}
        if timeout is not None:
            params["timeout"] = int(round(timeout * 1000))
        return self.session._call("watch", params, default=False,
                                  timeout=None if timeout is None
                                  else timeout + 5.0)["sample"]

    def stop(self):
        """Stop the watch (its stream's last line of it says so); its
        description with the counts of samples and skipped ticks."""
        if self.stopped:
            return None
        self.stopped = True
        return self.session._call("watch", {"action": "stop",
                                            "watch": self.id})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False
