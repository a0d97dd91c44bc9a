"""Which sessions a test touched, and where their streams stood: the
pytest plugin's record of every session this process's clients drive
(heard through :func:`dbgctl.client.watch_sessions`), the test's deadline
it gives them, and their streams' sizes at each test's setup."""

import contextlib
import inspect
import threading
import time
import weakref

from .client import Client, Session
from .errors import Error

#: Seconds two readings of one deadline's ``at`` may differ by (the daemon
#: gives it from its clock at each request).
DEADLINE_SLACK = 1.0

#: The streams a report shows, in its order.
STREAMS = ("target", "semihost", "console")


class _Track:
    """One session seen in this process: a client to read it through, and
    its streams' sizes at the current test's setup."""

    def __init__(self, client, session):
        self.client = weakref.ref(client)
        # How to connect again if that client is closed by then.
        self.again = getattr(client, "_again", None)
        self.session = session
        self.start = {}
        self.absent = set()
        self.ended = False
        # Launched by a client of this process with ``artifacts``: the
        # daemon writes its automatic bundle at a verdict or a fault.
        self.artifacts = False


class _Seen:
    """The sessions this process's clients touched: every one since the
    run began, and those of the running test."""

    def __init__(self):
        self.lock = threading.Lock()
        self.tracks = {}
        self.touched = set()
        self.quiet = threading.local()
        # The running test: its node id, and when its deadline (if it has
        # one) runs out, by time.monotonic().
        self.current = None
        self.deadline_at = None
        # The sessions the running test drove while it had a deadline:
        # key -> None, or, for one given the test's deadline, (a weak
        # reference to the client that did, the session, the deadline's
        # "at" as given, when the session's own deadline runs out by
        # time.monotonic() or None).
        self.timed = {}

    def hear(self, client, session):
        """The watch_sessions hook: note a session the test drives now,
        unless the plugin is the one asking, and give it the test's
        deadline."""
        if getattr(self.quiet, "on", False):
            return
        self.note(client, session)
        self.give_deadline(client, session)

    def give_deadline(self, client, session):
        """Give a session the running test drives the test's deadline,
        once a test: the time left of it (see ``deadline`` in
        dbgctl-protocol(7)), unless the session's own deadline (a
        launch's, say) comes first; one that is not running keeps none."""
        key = (repr(client.address), session)
        with self.lock:
            if self.deadline_at is None or key in self.timed:
                return
            self.timed[key] = None
            left = self.deadline_at - time.monotonic()
        with self.reading():
            try:
                had = client.call("status", {"session": session}).get(
                    "deadline")
                asked = time.monotonic()
                if had is not None and had.get("in_ms", 0) <= left * 1000:
                    return
                res = client.call("deadline", {
                    "session": session, "ms": max(1, int(left * 1000))})
            except Error:
                return
        given = res.get("deadline") or {}
        # What to put back at the end: the session's own deadline, by
        # this clock (a rig host's may differ), or none.
        old = None if had is None else asked + had["in_ms"] / 1000.0
        with self.lock:
            if key in self.timed:
                self.timed[key] = (weakref.ref(client), session,
                                   given.get("at"), old)

    def end_deadlines(self):
        """At a test's end: put back the deadline each session had before
        the test gave it its own (none, if it had none), so that a board
        shared with later tests lives on with its own safety net; one the
        test moved or cleared itself is left as the test left it."""
        with self.lock:
            timed = [t for t in self.timed.values() if t is not None]
            self.timed, self.deadline_at = {}, None
        with self.reading():
            for ref, session, given, old in timed:
                client = ref()
                if client is None or getattr(client, "_closed", False):
                    continue
                try:
                    now = client.call("status", {"session": session}).get(
                        "deadline")
                    if now is None or given is None or \
                            abs(now.get("at", 0) - given) > DEADLINE_SLACK:
                        continue
                    ms = 0 if old is None else \
                        max(1, int((old - time.monotonic()) * 1000))
                    client.call("deadline", {"session": session, "ms": ms})
                except Error:
                    pass

    def note(self, client, session):
        """Note a session the running test touched."""
        key = (repr(client.address), session)
        with self.lock:
            track = self.tracks.get(key)
            if track is None:
                self.tracks[key] = track = _Track(client, session)
            elif _live_client(track) is None:
                # Keep a client that stays open (not a wait's own
                # connection, closed when it has its answer).
                track.client = weakref.ref(client)
                track.again = getattr(client, "_again", track.again)
            if getattr(client, "_artifacts", {}).get(session):
                track.artifacts = True
            self.touched.add(key)

    @contextlib.contextmanager
    def reading(self):
        """Leave the plugin's own requests out of what tests touched."""
        was = getattr(self.quiet, "on", False)
        self.quiet.on = True
        try:
            yield
        finally:
            self.quiet.on = was

    def begin(self, item, seconds=None):
        """At a test's setup: forget what the last test touched, start
        its deadline of ``seconds`` if it has one, and note where each
        session's streams stand now."""
        with self.lock:
            self.touched = set()
            self.current = item.nodeid
            self.deadline_at = None if seconds is None else \
                time.monotonic() + seconds
            tracks = list(self.tracks.values())
        with self.reading():
            for track in tracks:
                _mark(track)

    def test_tracks(self, item):
        """The tracks of the sessions ``item`` touched, one per session."""
        funcargs = getattr(item, "funcargs", {})
        for name in _own_args(item):
            for s in _sessions_in(funcargs.get(name)):
                if s.id is not None:
                    self.note(s.client, s.id)
        with self.lock:
            return [t for k, t in self.tracks.items() if k in self.touched]


def _own_args(item):
    """The names of the test function's own arguments: not the fixtures
    they depend on, nor autouse ones (a fixture that only reads a shared
    board does not make it the test's)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is not None:
        return list(info.argnames)
    try:
        return list(inspect.signature(item.obj).parameters)
    except (AttributeError, TypeError, ValueError):
        return []


def _sessions_in(value):
    """The Sessions a fixture value is or holds as an attribute."""
    if isinstance(value, Session):
        return [value]
    try:
        attrs = vars(value).values()
    except TypeError:
        return []
    found = []
    for a in attrs:
        if isinstance(a, Session):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found += [s for s in a if isinstance(s, Session)]
    return found


def _live_client(track):
    """The track's client, if it is still open."""
    client = track.client()
    if client is None or getattr(client, "_closed", False) or \
            getattr(client, "_lost", None) is not None:
        return None
    return client


def _mark(track):
    """Note the sizes of a running session's streams for this test; an
    ended session's stay as they were noted once it had ended."""
    if track.ended:
        return
    track.start = {}
    client = _live_client(track)
    if client is not None:
        _mark_through(client, track)
        return
    if track.again is None:
        return
    try:
        with Client(**track.again) as fresh:
            _mark_through(fresh, track)
    except (Error, OSError):
        # Its daemon is gone: nothing of it can be read again.
        track.ended = True


def _mark_through(client, track):
    """Note the sizes of a session's streams, asked through ``client``."""
    for stream in STREAMS:
        if stream in track.absent:
            continue
        try:
            res = client.call("logs", _logs_params(track.session, stream,
                                                   lines=0))
        except Error as e:
            if e.kind == "not_supported":
                track.absent.add(stream)
            continue
        track.start[stream] = res.get("size", 0)
        track.ended = track.ended or bool(res.get("ended"))


def _logs_params(session, stream, **params):
    """The params of a logs request of ``stream`` (console by default)."""
    p = {"session": session}
    if stream != "console":
        p["stream"] = stream
    p.update(params)
    return p
