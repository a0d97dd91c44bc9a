"""The pytest plugin's report of a failing test: a section for every
session it touched, with the session's state, its fault, and the tails of
its streams as plain text."""

import base64
import json
import re

from . import plugin_failure
from .client import Client
from .errors import Error
from .plugin_seen import STREAMS, _live_client, _logs_params

#: Lines of each stream a failure report shows per session.
LOG_LINES = 40

#: The most bytes of each stream a failure report shows per session.
TAIL_BYTES = 64 * 1024


# Escape sequences: CSI (ESC [ or the C1 byte), OSC to BEL or ST; DCS,
# SOS, PM and APC to ST; and the rest, ESC with intermediates and a final
# byte (charset selects ESC ( B, keypad modes, ESC 7 ...); one cut off at
# the end of the bytes shown.
_ESCAPE = re.compile(r"""
      (?:\x1b\[|\x9b) [0-?]* [ -/]* [@-~]
    | (?:\x1b\]|\x9d) [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)?
    | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f]) [^\x1b\x9c]* (?:\x1b\\|\x9c)?
    | \x1b [ -/]* [0-~]
    | \x1b (?:\[[0-?]*[ -/]*)? $
""", re.X)

# Line ends as a terminal's output has them: CR LF, LF CR, a lone CR.
_LINE_END = re.compile(r"\r*\n\r*|\r+")

# Control characters left once escapes are gone, but for tab and LF.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(data):
    """A stream's bytes as plain text for a report: decoded as UTF-8
    (bad bytes replaced), escape sequences removed, every CR LF, LF CR or
    lone CR an LF, and other control characters but tab dropped."""
    text = data.decode("utf-8", errors="replace")
    text = _ESCAPE.sub("", text)
    text = _LINE_END.sub("\n", text)
    return _CONTROL.sub("", text)


def _tail(client, session, stream, start):
    """The last lines of a stream, none before ``start``; None when the
    session has no such stream."""
    try:
        res = client.call("logs", _logs_params(session, stream,
                                               lines=LOG_LINES,
                                               max=TAIL_BYTES))
        if res.get("next_offset", 0) < res.get("size", 0):
            # The lines are longer than a report holds: take their end.
            off = max(res["size"] - TAIL_BYTES, start or 0)
            res = client.call("logs", _logs_params(session, stream,
                                                   offset=off,
                                                   max=TAIL_BYTES))
    except Error as e:
        if e.kind == "not_supported":
            return None
        raise
    data = base64.b64decode(res.get("data") or "")
    off = res.get("offset", 0)
    if start is not None and off < start:
        data = data[start - off:]
    return data


def fault_summary(fault):
    """One line or two on a fault record: what it faulted on, the
    decoded Cortex-M fault bits, and the faulting function and line."""
    what = fault.get("signal") or fault.get("location") or "a fault"
    if fault.get("reason"):
        what += " (%s)" % fault["reason"]
    cm = fault.get("cortex_m") or {}
    frames = fault.get("frames") or []
    frame = cm.get("faulting") or (frames[0] if frames else None)
    if frame:
        what += " in %s" % (frame.get("func") or frame.get("addr") or "?")
        if frame.get("file"):
            what += " at %s:%s" % (frame["file"], frame.get("line", "?"))
    lines = [what]
    if cm:
        bits = " ".join(cm.get("decoded") or []) or "no bits set"
        more = "CFSR %s HFSR %s: %s" % (cm.get("cfsr"), cm.get("hfsr"), bits)
        if "MMARVALID" in bits:
            more += ", MMFAR %s" % cm.get("mmfar")
        if "BFARVALID" in bits:
            more += ", BFAR %s" % cm.get("bfar")
        lines.append(more)
    if cm.get("stacked_unavailable"):
        lines.append("no stacked frame: %s" % cm["stacked_unavailable"])
    return "\n  ".join(lines)


def _section(client, track, item):
    """The report's sections for one session: (title, text) pairs; the
    failure's actions (hold, bundle) are taken on the way."""
    record = client.call("status", {"session": track.session})
    title = "dbgctl session %s" % record.get("id", track.session)
    if record.get("name"):
        title += " (%s)" % record["name"]
    text = "state: %s\n" % record.get("state")
    target = record.get("target") or {}
    if target.get("by") == "semihosting":
        text += "firmware: exited with code %s, by semihosting\n" % \
            target.get("code")
    fault = record.get("fault")
    if fault:
        text += "fault: %s\n  (the whole record: %s fault record)\n" % (
            fault_summary(fault), title)
    sid = record.get("id", track.session)
    for stream in STREAMS:
        start = track.start.get(stream)
        data = _tail(client, track.session, stream, start)
        if data is None:
            continue
        since = " since this test began" if start is not None else ""
        text += "%s (last %d lines%s):\n" % (stream, LOG_LINES, since)
        body = plain(data)
        text += (body if body.endswith("\n") else body + "\n") \
            if body else "(nothing)\n"
        # The tail where a JUnit XML's reader sees it, too.
        item.user_properties.append(("dbgctl_%s_%s" % (stream, sid), body))
    text += plugin_failure.on_failure(item.config, item, client, record,
                                      item.config._dbgctl_held,
                                      track.artifacts)
    sections = [(title, text)]
    if fault:
        sections.append((title + " fault record",
                         json.dumps(fault, indent=2, sort_keys=True)))
    return record.get("id", track.session), sections


def _sections(track, item):
    """The sections of one track, through its client or, if that one is
    closed by now, a connection of the report's own."""
    client = _live_client(track)
    if client is not None:
        return _section(client, track, item)
    if track.again is None:
        raise Error("its client is gone")
    with Client(**track.again) as fresh:
        return _section(fresh, track, item)


def _report(seen, item):
    """Every section for the sessions ``item`` touched."""
    out, done = [], set()
    with seen.reading():
        for track in seen.test_tracks(item):
            try:
                sid, sections = _sections(track, item)
            except (Error, OSError) as e:
                out.append(("dbgctl session %s" % track.session,
                            "(the session cannot be read: %s)" % e))
                continue
            key = (repr(getattr(track.client(), "address", None)), sid)
            if key in done:
                continue
            done.add(key)
            out += sections
    return out
