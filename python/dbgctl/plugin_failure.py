"""What the pytest plugin does for a failing test beyond its report.

With ``--dbgctl-hold-on-failure[=SECONDS]`` every running session a
failing test touched is halted and held (see ``hold`` in dbgctl(1)), and
the report says how to look at it, with the address the run used
(``-s``, ``-H ssh://...``, or ``--connect tcp:...`` and ``--token-file``):
``dbgctl attach``, ``dbgctl logs`` and the front-end join (``dbgctl mi``,
or ``dbgctl-gdb`` as an IDE's gdb).  With ``--dbgctl-artifacts DIR`` each
such session's bundle is written under DIR by the daemon, and every
session launched in the process carries ``artifacts`` so that the daemon
writes one itself at a verdict or a fault, or if pytest is killed (their
lease ends).  The verdict and the path of every bundle written for each
session while the test ran go into the report and into the test's JUnit
XML properties (``dbgctl_verdict_N``, ``dbgctl_bundle_N``), as
``record_property`` would put them: the plugin's, and the daemon's
automatic one (one a session, at its first verdict or fault), waited for
when the test failed while the daemon was still writing it.  A run
interrupted by SIGINT writes the bundles of the running test's sessions,
named after it, before it ends.  With ``--dbgctl-record`` every qemu
session launched in the process on a machine that can record
(RECORD_MACHINES) records its board (``record``, see dbgctl(1)), bundles
are written (under ``--dbgctl-artifacts``, or a temporary directory of
the run's), and a bundle whose manifest lists the whole recording adds
to the report how to replay it (``dbgctl replay PATH``) and to the
properties the recording's path (``dbgctl_recording_N``); such a session
is not held (its board was ended for the recording, which the replay
stands for), so the board is free for the next job.  Any bundle of a
recording session ends its board's QEMU, the daemon's automatic one at
a first fault or a verdict too: a test that faults its board on purpose
and then looks at it or resets it fails under ``--dbgctl-record``.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

from .errors import Error

#: The machines the daemon records on (its replay.c checks the same
#: list; QEMU 7.2's replay aborts on lm3s6965evb): a qemu launch on
#: another under ``--dbgctl-record`` is simply not recorded, since the
#: daemon would refuse it.
RECORD_MACHINES = ("mps2-an385",)

#: A bundle's files that make its recording: whole, or it does not replay.
RECORDING_FILES = ("replay.bin", "replay.qcow2", "replay.json",
                   "firmware.elf")

#: Seconds a bundle may take before the plugin gives up waiting.
BUNDLE_TIMEOUT = 120.0

#: The watcher that keeps a private daemon for its holds (see holdwatch.py).
HOLDWATCH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "holdwatch.py")


def add_options(group):
    """Declare the failure options in the plugin's option group."""
    group.addoption("--dbgctl-hold-on-failure", metavar="SECONDS",
                    nargs="?", const=-1, default=None, type=int,
                    dest="dbgctl_hold",
                    help="halt and hold a failing test's sessions for "
                         "SECONDS (default: the daemon's hold time) so "
                         "that they can be looked at after the run")
    group.addoption("--dbgctl-artifacts", metavar="DIR", default=None,
                    dest="dbgctl_artifacts",
                    help="write a bundle of each failing test's sessions "
                         "under DIR, and have the daemon write one if "
                         "pytest is killed")
    group.addoption("--dbgctl-record", action="store_true", default=False,
                    dest="dbgctl_record",
                    help="record every qemu board on a machine that "
                         "can (%s; QEMU's record/replay), so that a "
                         "failing test's bundle can be replayed with "
                         "dbgctl replay; bundles go under "
                         "--dbgctl-artifacts, or a temporary directory. "
                         "Any bundle of a recording board, the automatic "
                         "one at its first fault or verdict too, ends its "
                         "QEMU: a test that faults its board on purpose "
                         "and then inspects or resets it fails under "
                         "this option" % ", ".join(RECORD_MACHINES))


def artifacts_dir(config):
    """The absolute artifacts directory, made 0700, or None; with
    ``--dbgctl-record`` and none given, a temporary one (see _record_dir),
    since the recordings live in bundles."""
    d = config.getoption("dbgctl_artifacts", None)
    if not d and config.getoption("dbgctl_record", False):
        d = _record_dir(config)
    if not d:
        return None
    d = os.path.abspath(d)
    os.makedirs(d, mode=0o700, exist_ok=True)
    return d


def _record_dir(config):
    """The run's directory of bundles under ``--dbgctl-record`` without
    ``--dbgctl-artifacts``: under ``--basetemp`` if given, else a new
    temporary directory, the same for the whole run (pytest's own
    temporary directory is not public before a test asks for it)."""
    d = getattr(config, "_dbgctl_record_dir", None)
    if d is not None:
        return d
    base = config.getoption("basetemp", None)
    if base:
        d = os.path.join(os.path.abspath(str(base)), "dbgctl-artifacts")
    else:
        d = tempfile.mkdtemp(prefix="dbgctl-artifacts-")
    config._dbgctl_record_dir = d
    return d


def records(params):
    """Whether a qemu launch's params name a machine that can record."""
    return params.get("kind") == "qemu" and \
        params.get("machine") in RECORD_MACHINES


def _name(nodeid):
    """A test's node id as a file name's part."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[-100:]


def _bundle_path(config, nodeid, sid):
    """Where the bundle of session sid goes for test nodeid, not yet
    taken."""
    base = os.path.join(artifacts_dir(config), "%s-%s" % (_name(nodeid),
                                                          sid))
    path, n = base, 1
    while os.path.lexists(path):
        n += 1
        path = "%s.%d" % (base, n)
    return path


def _bundle(config, client, sid, nodeid):
    """Have the daemon write session sid's bundle for nodeid; its path."""
    return client.call("bundle", {"session": sid, "path": _bundle_path(
        config, nodeid, sid)}, timeout=BUNDLE_TIMEOUT)["path"]


def _recording_whole(path):
    """Whether the manifest of the bundle directory at path lists every
    file of a recording, none of them cut, failed or missing: a recording
    the daemon could not complete is left out, and one cut by the size
    bound does not replay."""
    try:
        with open(os.path.join(path, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict):
        return False
    kept = {e.get("name"): e.get("bytes") for e in
            manifest.get("files") or [] if isinstance(e, dict)}
    if any(not kept.get(name) for name in RECORDING_FILES):
        return False
    for key, field in (("cut", "name"), ("failed", "name"),
                       ("missing", "what")):
        for e in manifest.get(key) or []:
            if isinstance(e, dict) and (
                    e.get(field) in RECORDING_FILES or
                    str(e.get(field, "")).startswith(("replay",
                                                       "recording"))):
                return False
    return True


def recorded(item, sid, path):
    """The report's line for a bundle at path whose manifest lists a whole
    recording (how to replay it), its property ``dbgctl_recording_N``;
    "" for one without."""
    if not _recording_whole(path):
        return ""
    item.user_properties.append(("dbgctl_recording_%s" % sid,
                                 os.path.join(path, "replay.bin")))
    return "replay: dbgctl replay %s\n" % shlex.quote(path)


def address_options(client):
    """How dbgctl(1) and dbgctl-gdb reach client's daemon: (the options,
    the environment), as shell words: ``-s SOCKET``, ``-H ssh://...``, or
    ``--connect tcp:HOST:PORT --token-file FILE``."""
    addr = getattr(client, "address", None)
    again = getattr(client, "_again", None) or {}
    if isinstance(addr, tuple):
        host, port = addr
        if ":" in host:
            host = "[%s]" % host
        where = "tcp:%s:%d" % (host, port)
        token = again.get("token_file") or \
            os.environ.get("DBGCTL_TOKEN_FILE")
        opts = ["--connect", where]
        env = ["DBGCTL_HOST=" + where]
        if token:
            token = os.path.abspath(token)
            opts += ["--token-file", token]
            env.append("DBGCTL_TOKEN_FILE=" + token)
    elif isinstance(addr, str) and "://" in addr:
        opts, env = ["-H", addr], ["DBGCTL_HOST=" + addr]
    elif isinstance(addr, str):
        sock = os.path.abspath(addr)
        opts, env = ["-s", sock], ["DBGCTL_SOCKET=" + sock]
    else:
        opts, env = [], []
    return " ".join(map(shlex.quote, opts)), \
        " ".join(map(shlex.quote, env))


def _commands(client, sid):
    """The commands that look at session sid of client's daemon, as they
    work pasted into a shell: with the address the run used."""
    opts, env = address_options(client)
    dbgctl = "dbgctl " + opts if opts else "dbgctl"
    env = env + " " if env else ""
    return ("  %s attach %s\n  %s logs %s\n"
            "  %s mi %s    (an IDE: %sDBGCTL_SESSION=%s dbgctl-gdb as "
            "its gdb)\n" % (dbgctl, sid, dbgctl, sid, dbgctl, sid, env,
                             sid))


def _auto_bundle(item, client, record, due):
    """The daemon's automatic bundle of a session launched with
    ``artifacts`` (at its verdict, fault, lease's end), if it was written
    while the test ran: a property and the report's line.  The daemon
    writes one such bundle a session, at its first trigger; ``due`` (the
    session was launched with ``artifacts`` by a client of this process)
    has the report wait for one still being written."""
    auto = record.get("bundle")
    if auto is None and due:
        auto = _auto_bundle_wait(client, record,
                                 getattr(item, "_dbgctl_began", 0))
    if not isinstance(auto, dict) or \
            (auto.get("time") or 0) < getattr(item, "_dbgctl_began", 0):
        return ""
    sid = record.get("id")
    if not auto.get("path") or auto.get("error"):
        return "bundle (%s): not written: %s\n" % (auto.get("reason"),
                                                    auto.get("error"))
    item.user_properties.append(("dbgctl_bundle_%s" % sid, auto["path"]))
    return "bundle (%s): %s\n%s" % (auto.get("reason"), auto["path"],
                                    recorded(item, sid, auto["path"]))


def _auto_bundle_wait(client, record, began):
    """The automatic bundle of a session whose verdict or fault came at or
    after ``began`` and whose bundle is not written yet (a fault's is
    begun once its record is the session's, after a ``wait_fault`` has its
    answer): once written, bounded by BUNDLE_TIMEOUT; None when nothing
    triggered it during the test."""
    trigger = record.get("verdict") or record.get("fault")
    if not isinstance(trigger, dict) or (trigger.get("time") or 0) < began:
        return None
    end = time.monotonic() + BUNDLE_TIMEOUT
    while time.monotonic() < end:
        try:
            auto = client.call("status", {"session": record.get("id")}).get(
                "bundle")
        except Error:
            return None
        if auto is not None:
            return auto
        time.sleep(0.05)
    return None


def on_failure(config, item, client, record, held, due=False):
    """Act on one running session of a failing test: bundle it, hold it,
    and return the report's lines; held collects (client, id) of holds;
    ``due``: the daemon writes the session's automatic bundle (see
    _auto_bundle)."""
    sid = record.get("id")
    lines = ""
    verdict = (record.get("verdict") or {}).get("kind")
    if verdict:
        item.user_properties.append(("dbgctl_verdict_%s" % sid, verdict))
        lines += "verdict: %s\n" % verdict
    lines += _auto_bundle(item, client, record, due)
    if record.get("state") != "running":
        return lines
    replayable = "replay: " in lines
    if artifacts_dir(config) is not None:
        try:
            path = _bundle(config, client, sid, item.nodeid)
            item.user_properties.append(("dbgctl_bundle_%s" % sid, path))
            replay = recorded(item, sid, path)
            lines += "bundle: %s\n" % path + replay
            replayable = replayable or bool(replay)
        except Error as e:
            lines += "bundle: not written: %s\n" % e
    ttl = config.getoption("dbgctl_hold", None)
    if ttl is None:
        return lines
    if replayable:
        # Its QEMU ended for the recording: the replay stands for the board.
        return lines + "not held: its recording replays it\n"
    try:
        res = client.call("hold", {"session": sid, "ttl": ttl if ttl >= 0
                          else None, "note": "pytest: %s failed"
                          % item.nodeid}, timeout=30.0)
    except Error as e:
        return lines + "hold: refused: %s\n" % e
    held.append((client, sid))
    left = res["hold"]["left_ms"] // 1000
    lines += "held for %d s, its target halted; look with:\n%s" % (
        left, _commands(client, sid))
    item.user_properties.append(("dbgctl_held_%s" % sid, str(left)))
    return lines


def bundle_interrupted(config, client, sid, nodeid):
    """Write a bundle of session sid of an interrupted run; its path or
    None."""
    if artifacts_dir(config) is None:
        return None
    try:
        return _bundle(config, client, sid, nodeid + "-interrupted")
    except Error:
        return None


def held_sessions(client):
    """The ids of the sessions of client's daemon that are held now."""
    try:
        rows = client.call("list", {"fields": ["hold"]})["sessions"]
    except Error:
        return []
    return [r["id"] for r in rows if r.get("hold")]


def keep_for_holds(client, sock, lifeline):
    """Hand a private daemon with held sessions to a watcher that keeps
    it, through its lifeline, until the last hold has ended, then shuts
    it down; True if handed over (the caller then leaves it running)."""
    held = held_sessions(client)
    if not held:
        return False
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=pkg + os.pathsep + os.environ.get(
        "PYTHONPATH", ""))
    subprocess.Popen([sys.executable or "python3", HOLDWATCH, sock,
                      str(lifeline)] + [str(h) for h in held],
                     pass_fds=(lifeline,), stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, env=env)
    sys.stderr.write("dbgctl: %d session(s) held; the private dbgctld at %s "
                     "stays until their holds end\n" % (len(held), sock))
    return True
