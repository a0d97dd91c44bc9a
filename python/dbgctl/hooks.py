"""Who hears of the sessions and launches of every Client of this process:
the hooks of :func:`watch_sessions` and :func:`watch_launches`, and which
requests drive a session (:func:`drives`)."""

from .errors import hide_frames

# Under pytest, a failed call's traceback ends at the caller's line.
__tracebackhide__ = hide_frames

#: Callables told of each session a Client of this process drives, as
#: ``hook(client, session)`` (an id, or a name as the caller gave it); see
#: :func:`watch_sessions`.
_SESSION_HOOKS = []

#: Callables that may add to the params of every launch a Client of this
#: process sends, as ``hook(client, params)``; see :func:`watch_launches`.
_LAUNCH_HOOKS = []

#: The methods that drive a session: its input, its expects, its
#: debugger, its run control, its signals and its end.  Requests that only
#: read it (``status``, ``logs``, ``list``, ``wait``, ``subscribe``,
#: ``registers``, ``eval``, a ``bundle`` or ``hold`` of a report) are not
#: heard by watch_sessions; nor are the reading actions of the methods in
#: :data:`DRIVING_ACTIONS`.
DRIVING = frozenset((
    "launch", "write", "read", "pipe", "expect", "exec", "signal", "resize",
    "stop", "deadline", "halt", "resume", "break", "memory", "reset",
    "load", "wait_target", "wait_fault"))

#: The methods of :data:`DRIVING` that also read, by their ``action``:
#: the actions that drive, and the one a request without ``action`` is
#: (dbgctl-protocol(7)).  A memory read or a breakpoint list only looks.
DRIVING_ACTIONS = {
    "break": (("insert", "delete"), "insert"),
    "memory": (("write",), "read"),
}


def watch_sessions(hook):
    """Have ``hook(client, session)`` called, in the calling thread, for
    every request that drives a session (see :func:`drives`: launch,
    write, read, expect, exec, run control, breakpoints set or deleted,
    a memory write, signal, stop) and
    every :class:`Session` a launch makes, by any Client of this process;
    returns a function that ends it.  Reading a session (``status``,
    ``logs``, :meth:`Client.session`, registers, eval, a memory read, a
    breakpoint list) is not heard.  The pytest plugin's
    failure reports learn which sessions a test drove so."""
    _SESSION_HOOKS.append(hook)
    return lambda: _SESSION_HOOKS.remove(hook)


def watch_launches(hook):
    """Have ``hook(client, params)`` called, in the calling thread, with
    the params of every launch any Client of this process is about to
    send; the hook may add to them (``params.setdefault(...)``).  Returns
    a function that ends it.  The pytest plugin gives every session its
    run's ``artifacts`` and its test's deadline so."""
    _LAUNCH_HOOKS.append(hook)
    return lambda: _LAUNCH_HOOKS.remove(hook)


def drives(method, params):
    """Whether a request of ``method`` with ``params`` drives the session
    it names (see :data:`DRIVING`)."""
    if method not in DRIVING:
        return False
    if method not in DRIVING_ACTIONS:
        return True
    actions, default = DRIVING_ACTIONS[method]
    return ((params or {}).get("action") or default) in actions


def _touched(client, session):
    """Tell every hook of watch_sessions that ``session`` was touched."""
    for hook in list(_SESSION_HOOKS):
        hook(client, session)
