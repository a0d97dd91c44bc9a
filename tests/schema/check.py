#!/usr/bin/env python3
"""Drive a real dbgctld through every method over the raw protocol and
validate every reply (by its request's method) and every notification
against proto/schema.json, the schema given as argument; report in TAP."""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

try:
    import jsonschema
except ImportError:
    print("1..1")
    print("not ok 1 - python3-jsonschema is missing (apt-get install "
          "python3-jsonschema)")
    sys.exit(1)

SCHEMA = json.load(open(sys.argv[1]))
DBGCTLD = os.environ["DBGCTLD_BIN"]
DBGCTL = os.environ["DBGCTL_BIN"]
ECHO = os.environ["FIX_ECHO"]
FAULT = os.environ.get("FIX_FAULT")
BOARD_AN385 = os.environ.get("FIX_BOARD_AN385")
MISSING = "/nonexistent/dbgctl-schema-check"
results = []        # (ok, description, detail, todo)
seen = {}           # notification method -> count
called = set()      # the methods requested


VALIDATORS = {}


def problem(ref, msg):
    """The first validation error of msg against $defs/ref, or None."""
    if ref not in VALIDATORS:
        VALIDATORS[ref] = jsonschema.Draft202012Validator(
            {"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"],
             "$ref": "#/$defs/" + ref})
    err = jsonschema.exceptions.best_match(VALIDATORS[ref].iter_errors(msg))
    if err is None:
        return None
    return "%s at %s" % (err.message, "/".join(map(str, err.absolute_path)))


def record(ok, desc, detail=None, todo=None):
    """A check; todo names a known daemon bug it fails on (TAP TODO)."""
    results.append((ok, desc, detail, todo))


def note(msg):
    """Validate a notification, reporting only the ones that fail."""
    method = msg.get("method", "?")
    seen[method] = seen.get(method, 0) + 1
    why = problem("notification", msg)
    if why is not None:
        record(False, "notification %s" % method, why + ": " + json.dumps(msg))
    return msg


class Conn:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.sock.settimeout(30)
        self.buf = b""
        self.ids = 0
        self.notes = []

    def line(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def raw_reply(self, method, params):
        """Validate the one JSON line of a pipe or attach, read byte by
        byte so that the raw stream after it stays unread."""
        self.send(method, params)
        data = b""
        while not data.endswith(b"\n"):
            c = self.sock.recv(1)
            if not c:
                raise EOFError("connection closed")
            data += c
        msg = json.loads(data)
        why = problem("responses/" + method, msg)
        record(why is None and "result" in msg, method,
               why or json.dumps(msg))

    def send(self, method, params=None, raw=None):
        called.add(method)
        self.ids += 1
        msg = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            msg["params"] = params
        self.sock.sendall(raw if raw is not None else
                          json.dumps(msg).encode() + b"\n")
        self.sent = None if raw is not None else msg
        return self.ids

    def quiet(self, method, params=None):
        """A request whose reply is only looked at (a poll), not checked."""
        msg = self.reply(self.send(method, params))
        return msg.get("result", msg.get("error"))

    def reply(self, id):
        while True:
            msg = self.line()
            if "id" not in msg:
                self.notes.append(note(msg))
            elif msg["id"] == id or msg["id"] is None:
                return msg

    def call(self, method, params=None, expect=None, desc=None, raw=None,
             rid=None, semantic=False, todo=None):
        """Send a request, validate its reply; expect is an error kind.
        semantic: an invalid_params the schema cannot tell (the daemon
        refuses a request the schema accepts); todo: see record."""
        id = self.send(method, params, raw)
        msg = self.reply(id if rid is None else rid)
        desc = desc or method + (" -> " + expect if expect else "")
        ref = "responses/" + method
        if method not in SCHEMA["$defs"]["responses"]:
            ref = "response"
        why = problem(ref, msg)
        # The request itself: refused by the schema iff by the daemon.
        if why is None and self.sent is not None and method in \
                SCHEMA["$defs"]["params"] and (problem(
                    "request", self.sent) is None) == (
                    expect == "invalid_params" and not semantic):
            why = "the schema %s the request %s" % (
                "accepts" if expect else "refuses", json.dumps(self.sent))
        if why is None and expect is None and "error" in msg:
            why = "unexpected error"
        if why is None and expect is not None and (
                "error" not in msg or msg["error"]["data"]["kind"] != expect):
            why = "expected error %s" % expect
        record(why is None, desc, None if why is None else
               why + ": " + json.dumps(msg)[:2000], todo)
        return msg.get("result", msg.get("error"))

    def wait_note(self, pred, timeout=10):
        """Read notifications until one satisfies pred; it or None."""
        for n in self.notes:
            if pred(n):
                return n
        end = time.time() + timeout
        while time.time() < end:
            self.sock.settimeout(max(0.01, end - time.time()))
            try:
                msg = self.line()
            except (socket.timeout, EOFError):
                break
            if "id" not in msg:
                self.notes.append(note(msg))
                if pred(msg):
                    self.sock.settimeout(30)
                    return msg
        self.sock.settimeout(30)
        return None


def b64(s):
    return base64.b64encode(s).decode()


def start(path, env, tmp):
    """A foreground dbgctld on path, once it accepts a connection."""
    daemon = subprocess.Popen([DBGCTLD, "--foreground", "--listen",
                               "unix:" + path], env=env, cwd=tmp,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    # The socket file comes before listen(): wait for a connection.
    for _ in range(800):
        probe = socket.socket(socket.AF_UNIX)
        try:
            probe.connect(path)
            return daemon
        except OSError:
            time.sleep(0.025)
        finally:
            probe.close()
    daemon.kill()
    daemon.wait()
    raise SystemExit("dbgctld did not listen on %s in 20 s" % path)


def main(tmp):
    env = dict(os.environ, XDG_RUNTIME_DIR=tmp + "/run",
               XDG_STATE_HOME=tmp + "/state")
    os.mkdir(tmp + "/run", 0o700)
    path = tmp + "/sock"
    for run in (drive, replacing):
        daemon = start(path, env, tmp)
        try:
            run(path, daemon)
        finally:
            if daemon.poll() is None:
                daemon.terminate()
                try:
                    daemon.wait(5)
                except subprocess.TimeoutExpired:
                    daemon.kill()
                    daemon.wait()


def replacing(path, daemon):
    """replace's reply, then the new daemon it names on the same socket."""
    c = Conn(path)
    c.call("replace", {"binary": MISSING}, "spawn_failed",
           desc="replace by a missing binary -> spawn_failed")
    res = c.call("replace", desc="replace by the same binary")
    record(daemon.wait(10) == 0, "the replaced daemon exits 0")
    n = Conn(path)
    hello = n.call("hello", desc="hello of the new daemon")
    record(hello.get("pid") == res.get("new_pid"), "the new daemon answers",
           json.dumps([hello, res]))
    n.call("shutdown", {"timeout": 1000}, desc="shutdown of the new daemon")
    # It is not our child: its going is its socket file's.
    for _ in range(400):
        if not os.path.exists(path):
            break
        time.sleep(0.025)


def sanity():
    """The schema is not vacuous: it refuses what the man page rules out."""
    out = {"session": 1, "stream": "console", "data": "", "offset": 0}
    for ref, msg, desc in [
            ("session", {"id": 1, "kind": "exec"}, "a session without state"),
            ("failure", {"jsonrpc": "2.0", "id": 1, "error": {
                "code": 1, "message": "x", "data": {"kind": "timeout"}}},
             "an error whose code and kind disagree"),
            ("notification", {"jsonrpc": "2.0", "method": "session.output",
                              "params": dict(out, eof=True)},
             "console output with eof")]:
        record(problem(ref, msg) is not None, "schema refuses " + desc)


def steps(c, session, table):
    """Requests on one session, each with the error kind it must get (and
    call's options); the last answer."""
    res = None
    for row in table:
        method, params, kind = row[:3]
        res = c.call(method, dict(params, session=session), kind,
                     desc="%s %s %s -> %s" % (method, session,
                                              json.dumps(params),
                                              kind or "result"),
                     **(row[3] if len(row) > 3 else {}))
    return res


# Every run-control method, with params it would take on a gdb session.
VERBS = [("wait_target", {}), ("wait_fault", {}), ("halt", {}),
         ("resume", {}), ("break", {"action": "list"}),
         ("eval", {"expression": "1"}),
         ("memory", {"address": "0x1000", "length": 1}), ("registers", {}),
         ("where", {}), ("reset", {}), ("load", {}),
         ("watch", {"expressions": ["x"]})]


def target_of(res):
    """The target record of a verb's answer, or of its error's data."""
    if not isinstance(res, dict):
        return {}
    return res.get("target") or res.get("data", {}).get("target") or {}


def by(res):
    """Who the stop of a verb's answer (or error) is by, or its state."""
    t = target_of(res)
    return t.get("stop", {}).get("by", t.get("state"))


def poll(c, session, pred, timeout=20):
    """The session's status once pred holds of it, or None after timeout."""
    end = time.time() + timeout
    while time.time() < end:
        st = c.quiet("status", {"session": session})
        if pred(st):
            return st
        time.sleep(0.05)
    return None


def refusals(c):
    """Every verb refuses an exec session, and an lldb one."""
    c.call("launch", {"kind": "exec", "name": "ex", "argv": [ECHO]},
           desc="launch exec for the run-control verbs")
    steps(c, "ex", [(m, p, "not_supported") for m, p in VERBS])
    steps(c, "ex", [
        ("rtt", {}, "not_supported"),
        ("rtt", {"poll_hz": 5000}, "invalid_params"),
        ("write", {"stream": "rtt0", "data": b64(b"u")}, "not_supported"),
        ("logs", {"stream": "rtt1"}, "not_supported"),
        ("expect", {"stream": "rtt2", "patterns": "x", "timeout": 1},
         "not_supported")])
    if shutil.which("lldb"):
        c.call("launch", {"kind": "lldb", "name": "ll", "argv": [ECHO]},
               desc="launch lldb for the run-control verbs")
        steps(c, "ll", [(m, p, "not_supported") for m, p in VERBS[:4]])
    c.call("stop", {"sessions": ["ex"] + (["ll"] if shutil.which("lldb")
                                          else []), "timeout": 1000},
           desc="stop the sessions that refused")
    steps(c, "ex", [("halt", {}, "not_supported")])


def native(c, sub):
    """Run control of a native gdb session: echo, which reads its input
    (so it runs until told), from before its start to a re-run."""
    c.call("launch", {"name": "rc", "argv": [ECHO, "rc"], "transport": True},
           desc="launch gdb for run control")
    sub.call("subscribe", {"session": "rc"}, desc="subscribe run control")
    steps(c, "rc", [
        ("wait_target", {"state": "any"}, None),
        ("wait_target", {"state": "sleeping"}, "invalid_params"),
        ("resume", {}, "not_running"),
        ("halt", {}, "not_running"),
        ("load", {}, "not_supported"),
        ("wait_fault", {"timeout": 0}, "timeout")])
    res = steps(c, "rc", [("reset", {"halt": True}, None)])
    record(by(res) == "reset", "reset halt: the stop at main is by reset",
           json.dumps(res))
    steps(c, "rc", [
        ("break", {"location": "read", "condition": "1"}, None),
        ("break", {"location": "main", "temporary": True}, None),
        ("break", {"action": "list"}, None),
        ("break", {}, "invalid_params", {"semantic": True}),
        ("break", {"action": "toggle"}, "invalid_params"),
        ("break", {"location": "no_such_function_here"}, "debugger_error"),
        ("eval", {"expression": "argc"}, None),
        ("eval", {"expression": "no_such_symbol_here"}, "debugger_error"),
        ("eval", {}, "invalid_params"),
        ("where", {}, None),
        ("where", {"timeout": -1}, "invalid_params")])
    regs = c.call("registers", {"session": "rc"}, desc="registers, all")
    name = next(iter(regs.get("registers", {"pc": ""})))
    mem = steps(c, "rc", [
        ("registers", {"names": [name]}, None),
        ("registers", {"names": ["no-such-register"]}, "invalid_params",
         {"semantic": True}),
        ("memory", {"address": "&argc", "length": 4}, None)])
    steps(c, "rc", [
        ("memory", {"address": int(mem.get("address", "0x0"), 16),
                    "length": 4}, None),
        ("memory", {"action": "write", "address": "&argc",
                    "data": {"base64": mem.get("base64", "")}}, None),
        ("memory", {"action": "write", "address": "&argc",
                    "data": {"hex": mem.get("hex", "")}}, None),
        ("memory", {"address": "&argc"}, "invalid_params",
         {"semantic": True}),
        ("memory", {"action": "write", "address": "&argc",
                    "data": {"hex": "zz"}}, "invalid_params"),
        ("memory", {"address": "&argc", "length": 0}, "invalid_params"),
        ("memory", {"address": "(char *)0", "length": 1}, "debugger_error"),
        ("memory", {"address": "&argc", "length": 4, "live": True}, None),
        ("watch", {"expressions": ["argc"]}, "not_supported"),
        ("watch", {"expressions": ["argc"], "hz": 5000}, "invalid_params",
         {"semantic": True}),
        ("watch", {"action": "list"}, None),
        ("watch", {"action": "stop", "watch": 1}, "invalid_params",
         {"semantic": True}),
        ("watch", {"action": "stop", "watch": 0}, "invalid_params"),
        ("memory", {"action": "write", "address": "&argc", "live": True,
                    "data": {"hex": mem.get("hex", "")}}, None),
        ("resume", {"how": "next", "until_stop": True}, None),
        ("resume", {"how": "until"}, "invalid_params", {"semantic": True}),
        ("resume", {"how": "jump"}, "invalid_params")])
    res = steps(c, "rc", [("resume", {"until_stop": True}, None)])
    record(target_of(res).get("stop", {}).get("bkptno") is not None,
           "resume until_stop: the stop at a breakpoint has bkptno",
           json.dumps(res))
    res = steps(c, "rc", [
        ("break", {"action": "delete", "numbers": [1]}, "invalid_params"),
        ("break", {"action": "delete", "numbers": ["99"]}, "invalid_params",
         {"semantic": True}),
        ("break", {"action": "delete"}, None),
        ("resume", {}, None),
        ("resume", {}, None)])
    record(res.get("already") is True, "resume of a running target: already",
           json.dumps(res))
    res = steps(c, "rc", [("eval", {"expression": "1+1"}, None)])
    record(res.get("halted_for") is True and target_of(res).get(
        "transient") is True, "eval on a running target: halted_for, "
        "transient running", json.dumps(res))
    seq = target_of(res).get("seq", 0)
    res = steps(c, "rc", [
        ("wait_target", {"after": seq, "timeout": 300}, "timeout"),
        ("resume", {"until_stop": True, "timeout": 300,
                    "halt_on_timeout": True}, "timeout")])
    record(by(res) == "halt", "resume until_stop timed out with "
           "halt_on_timeout: data.target is the stop by halt",
           json.dumps(res))
    res = steps(c, "rc", [("halt", {}, None), ("resume", {}, None)])
    seq = target_of(res).get("seq", 0)
    res = steps(c, "rc", [("halt", {}, None)])
    stop = target_of(res)
    record(by(res) == "halt" and stop.get("seq", 0) > seq,
           "halt of a running target: a new stop by halt", json.dumps(res))
    res = steps(c, "rc", [("wait_target", {"after": seq}, None)])
    record(res == stop, "wait_target after the running: that stop",
           json.dumps(res))
    steps(c, "rc", [
        ("wait_target", {"state": "running", "after": stop.get("seq", 0),
                         "timeout": 0}, "timeout"),
        ("reset", {}, None)])


def faulting(c):
    """A native gdb session stopped at its fault break: fault records with
    seq and time, the history, and a reset that clears the fault."""
    c.call("launch", {"name": "ff", "argv": [FAULT], "commands": ["run"],
                      "fault_breaks": ["crash_here"],
                      "fault_break_defaults": False},
           desc="launch gdb with a fault break")
    f = c.call("wait_fault", {"session": "ff", "timeout": 20000},
               desc="wait_fault: the record of the fault break")
    st = steps(c, "ff", [("status", {}, None)])
    record(st.get("faults", [{}])[-1].get("seq") == f.get("seq"),
           "status faults ends with the fault", json.dumps(st)[:2000])
    record(f.get("bkptno") in st.get("fault_breaks", {}).get("numbers", []),
           "native gdb: the fault break is in fault_breaks",
           json.dumps(st.get("fault_breaks")))
    steps(c, "ff", [
        ("break", {"action": "delete", "numbers": [f.get("bkptno", "1")]},
         "invalid_params", {"semantic": True}),
        ("wait_fault", {"after": f.get("seq", 0), "timeout": 300},
         "timeout"),
        ("reset", {"halt": True}, None)])
    st = steps(c, "ff", [("status", {}, None)])
    record("fault" not in st and len(st.get("faults", [])) == 1,
           "reset clears fault, faults keeps it", json.dumps(st)[:2000])


def gdbserver(c, path):
    """Fault breaks of a gdbserver session: internal, kept, re-armed."""
    c.call("launch", {"kind": "gdbserver", "name": "gs", "argv": [FAULT],
                      "fault_breaks": ["crash_here"],
                      "fault_break_defaults": False},
           desc="launch gdbserver with a fault break")
    st = poll(c, "gs", lambda st: st.get("fault_breaks", {}).get("numbers"))
    record(st is not None, "gdbserver: the fault break is in fault_breaks")
    num = st["fault_breaks"]["numbers"][0] if st else "1"
    res = steps(c, "gs", [
        ("break", {"action": "list"}, None),
        ("break", {"action": "delete", "numbers": [num]}, "invalid_params",
         {"semantic": True}),
        ("break", {"action": "delete"}, None),
        ("exec", {"command": "-break-delete"}, None)])
    # The exec is answered once the fault break is back: no waiting.
    st = c.quiet("status", {"session": "gs"})
    fb = (st or {}).get("fault_breaks", {})
    record(fb.get("armed") and fb.get("rearmed", 0) >= 1 and
           fb.get("numbers"),
           "a raw -break-delete: the fault break is back by its answer",
           json.dumps(fb))
    stop = steps(c, "gs", [
        ("resume", {"until_stop": True, "timeout": 20000}, None)])
    seq = target_of(stop).get("seq", 1)
    steps(c, "gs", [
        ("wait_fault", {"after": seq - 1, "timeout": 20000}, None),
        ("reset", {}, "not_supported"),
        ("load", {}, "not_supported")])
    # A wait the session's end answers: not_running, with the target.
    id = c.send("wait_target", {"session": "gs", "state": "running",
                                "after": seq + 100})
    q = Conn(path)
    q.call("stop", {"session": "gs", "timeout": 1000},
           desc="stop the gdbserver session under a wait")
    q.sock.close()
    msg = c.reply(id)
    why = problem("responses/wait_target", msg)
    record(why is None and msg.get("error", {}).get("data", {}).get(
        "kind") == "not_running", "wait_target the session's end answers "
        "-> not_running", why or json.dumps(msg)[:2000])
    steps(c, "gs", [("halt", {}, "not_running")])


def watch(c):
    """Live watch on the QEMU board (mps2-an385), when it is built and
    QEMU is there: start, list, wait, stop, and the stream's samples."""
    if not BOARD_AN385 or not shutil.which("qemu-system-arm"):
        return
    c.call("launch", {"kind": "qemu", "name": "wq", "machine": "mps2-an385",
                      "argv": [BOARD_AN385]}, desc="launch the an385 board")
    poll(c, "wq", lambda st: st.get("target", {}).get("state") == "running")
    res = steps(c, "wq", [
        ("watch", {"expressions": ["counter"], "hz": 50}, None),
        ("watch", {"action": "list"}, None)])
    wid = res.get("watches", [{}])[0].get("watch", 1)
    steps(c, "wq", [
        ("watch", {"action": "wait", "watch": wid,
                   "condition": "counter > 0", "timeout": 20000}, None),
        ("watch", {"expressions": ["counter + 1"]}, "invalid_params",
         {"semantic": True}),
        ("watch", {"action": "wait", "watch": wid, "condition": "x"},
         "invalid_params", {"semantic": True}),
        ("watch", {"action": "stop", "watch": wid}, None)])
    logs = c.call("logs", {"session": "wq", "stream": "watch"},
                  desc="logs of the watch stream")
    lines = base64.b64decode(logs.get("data", "")).decode().splitlines()
    samples = [json.loads(x) for x in lines]
    why = None
    for s in samples:
        if "values" in s:
            why = why or problem("results/watch/oneOf/2/properties/sample", s)
    record(len(samples) >= 2 and why is None and samples[-1].get("stopped"),
           "the watch stream's lines are samples, then the stop",
           why or json.dumps(samples[-3:]))
    c.call("stop", {"session": "wq", "timeout": 2000},
           desc="stop the an385 board")


def commands(path, method, params):
    """Each command line of a method's params ("x-commands": its words
    after dbgctl, and a pattern its output matches) run on the examples'
    session: exit 0 and its output matched; with --json, exit 0 and an
    answer that is a result of the method."""
    for cmd in params.get("x-commands", []):
        words = " ".join(cmd["argv"])
        run = subprocess.run([DBGCTL, "-s", path] + cmd["argv"],
                             capture_output=True, text=True, timeout=60)
        record(run.returncode == 0 and re.search(cmd["stdout"], run.stdout,
                                                 re.M) is not None,
               "dbgctl %s prints /%s/" % (words, cmd["stdout"]),
               "exit %d, stdout %r, stderr %r" % (run.returncode,
                                                  run.stdout[-500:],
                                                  run.stderr[-500:]))
        run = subprocess.run([DBGCTL, "-s", path, "--json"] + cmd["argv"],
                             capture_output=True, text=True, timeout=60)
        try:
            why = problem("results/" + method, json.loads(run.stdout))
        except ValueError:
            why = "not JSON"
        record(run.returncode == 0 and why is None,
               "dbgctl --json %s answers a result of %s" % (words, method),
               "exit %d: %s; stdout %r, stderr %r" % (
                   run.returncode, why, run.stdout[-500:],
                   run.stderr[-500:]))


def examples(c, path):
    """Each example of a method's params in the schema ($defs/params/NAME's
    "examples"), answered with a result, and each of its command lines
    ("x-commands", see commands), on a gdb session named app halted at
    main: a method the examples show needs no call of its own here."""
    shown = [(m, p["examples"]) for m, p in SCHEMA["$defs"]["params"].items()
             if "examples" in p]
    c.call("launch", {"name": "app", "argv": [ECHO, "app"]},
           desc="launch app, the examples' session")
    steps(c, "app", [("reset", {"halt": True}, None)])
    for method, params in ((m, p) for m, ps in shown for p in ps):
        c.call(method, params, desc="%s example %s" % (method,
                                                       json.dumps(params)))
    for method, params in SCHEMA["$defs"]["params"].items():
        commands(path, method, params)
    # mi turns its connection into a gdb/MI channel of app's gdb.
    m = Conn(path)
    m.raw_reply("mi", {"session": "app", "mi": "mi3"})
    m.sock.sendall(b"-list-features\n")
    out = chunk = b"-"
    while chunk and b"\n^done" not in out and b"\n^error" not in out:
        chunk = m.sock.recv(65536)
        out += chunk
    record(b"\n^done,features=" in out, "mi carries gdb/MI both ways",
           repr(out[-300:]))
    m.sock.close()
    c.call("stop", {"session": "app", "timeout": 1000},
           desc="stop app, the examples' session")


def coverage():
    """Every method of the schema was requested, here or by its examples."""
    for method in SCHEMA["$defs"]["params"]:
        record(method in called, "%s was requested" % method,
               "no call of %s in tests/schema/check.py and no \"examples\" "
               "in $defs/params/%s" % (method, method))


def control(c, sub, path):
    """The run-control methods (wait_target, wait_fault, halt, resume,
    break, eval, memory, registers, reset, load)."""
    refusals(c)
    native(c, sub)
    if FAULT:
        faulting(c)
    if FAULT and shutil.which("gdbserver"):
        gdbserver(c, path)
    watch(c)
    examples(c, path)
    c.call("stop", {"sessions": ["rc"] + (["ff"] if FAULT else []),
                    "timeout": 2000}, desc="stop the run-control sessions")
    steps(c, "rc", [("halt", {}, "not_running"),
                    ("wait_target", {}, "not_running")])
    sub.wait_note(lambda n: n["method"] == "session.target" and n[
        "params"]["target"].get("transient") and n["params"]["target"][
        "state"] == "running")
    seqs = {}
    for n in sub.notes:
        if n["method"] == "session.target":
            seqs.setdefault(n["params"]["session"], []).append(
                n["params"]["target"].get("seq", 0))
    record(seqs and all(b > a for v in seqs.values() for a, b in
                        zip(v, v[1:])),
           "session.target seq increases in every session", json.dumps(seqs))
    transient = [n["params"]["target"] for n in sub.notes if
                 n["method"] == "session.target" and
                 n["params"]["target"].get("transient")]
    record({t["state"] for t in transient} == {"stopped", "running"} and all(
        t.get("stop", {}).get("by", "dbgctl") == "dbgctl" for t in transient),
        "transient stops (by dbgctl) and runnings are published",
        json.dumps(transient)[:2000])


def drive(path, daemon):
    sanity()
    c = Conn(path)
    sub = Conn(path)
    c.call("hello")
    c.call("ping")
    # dial's descriptors ride beside it (integ-ssh passes them): none is refused.
    c.call("dial", expect="invalid_params", semantic=True,
           desc="dial with no descriptors passed")
    c.call("list", desc="list with no session")
    # An exec session with a transport, its console and target subscribed.
    c.call("launch", {"kind": "exec", "name": "echo", "cwd": "/",
                      "argv": [ECHO, "one"], "transport": True},
           desc="launch exec with transport")
    sub.call("subscribe", {"session": "echo",
                           "streams": ["console", "target"]},
             desc="subscribe console and target")
    c.call("read", {"session": "echo", "timeout": 0}, "busy")
    c.call("write", {"session": "echo", "data": b64(b"hi\n"), "eof": True},
           desc="write with eof")
    eof = sub.wait_note(lambda n: n["method"] == "session.output" and
                        n["params"].get("eof"))
    record(eof is not None, "session.output target with eof")
    c.call("wait", {"session": "echo", "timeout": 5000})
    # A gdb session of the echo program, for exec and session.target.
    c.call("launch", {"name": "g", "argv": [ECHO, "two"],
                      "transport": True}, desc="launch gdb")
    sub.call("subscribe", {"session": "g"}, desc="subscribe second session")
    c.call("exec", {"session": "g", "command": "-break-insert main"},
           desc="exec MI command")
    c.call("exec", {"session": "g", "command": "info breakpoints"},
           desc="exec console command")
    c.call("exec", {"session": "g", "command": "-exec-run"},
           desc="exec -exec-run")
    st = sub.wait_note(lambda n: n["method"] == "session.target" and
                       n["params"]["target"]["state"] == "stopped")
    record(st is not None, "session.target stopped at the breakpoint")
    steps(c, "g", [
        ("exec", {"command": "-no-such-command"}, "debugger_error"),
        ("exec", {"command": "a\nb"}, "invalid_params"),
        ("status", {}, None),
        ("write", {"stream": "console", "data": b64(b"info inferiors\n")},
         None),
        ("logs", {"max": 64}, None),
        ("logs", {"lines": 1}, None),
        ("resize", {"rows": 40, "cols": 120, "redraw": True}, None)])
    # attach on a connection of its own: only its reply line is JSON.
    a = Conn(path)
    a.raw_reply("attach", {"session": "g", "lines": 0})
    a.sock.close()
    # A second exec session with a transport, for read, logs and signal.
    c.call("launch", {"kind": "exec", "name": "e2", "argv": [ECHO],
                      "transport": True, "stop_timeout": 1000},
           desc="launch exec")
    c.call("launch", {"kind": "exec", "name": "e2", "argv": [ECHO]},
           "name_in_use")
    # launch with wait: session.launched on this connection, then the end.
    c.call("launch", {"kind": "exec", "argv": ["/bin/sh", "-c", "exit 3"],
                      "cwd": "/", "wait": True}, desc="launch with wait")
    c.call("write", {"session": "e2", "data": b64(b"hello\n")})
    c.call("read", {"session": "e2", "max": 4}, desc="read with max")
    c.call("expect", {"session": "e2", "patterns": r"h(?P<x>e)(l+)",
                      "from": 0, "timeout": 10000},
           desc="expect with groups")
    c.call("expect", {"session": "e2", "exact": ["never", "nor this"],
                      "timeout": 0}, "timeout", desc="expect -> timeout")
    c.call("expect", {"session": "e2", "patterns": "x", "stream": "server"},
           "not_supported", desc="expect on a stream it lacks -> not_supported")
    c.call("logs", {"session": "e2", "stream": "target", "timestamps": True},
           desc="logs of the target stream with times")
    c.call("logs", {"session": "e2", "stream": "target-in"},
           desc="logs of the target's input")
    c.call("read", {"session": "e2", "stream": "console"}, "invalid_params",
           desc="read of the console -> invalid_params")
    steps(c, "e2", [
        ("exec", {"command": "bt"}, "not_supported"),
        ("signal", {"signal": "INT"}, None),
        ("wait", {"timeout": 5000}, None),
        ("resize", {"rows": 10, "cols": 10}, "not_running"),
        ("signal", {}, "not_running"),
        ("write", {"stream": "console", "data": "eA=="}, "not_running"),
        ("read", {}, None),
        ("expect", {"patterns": "never", "stream": "target"}, "eof")])
    a = Conn(path)
    a.call("attach", {"session": "e2"}, "not_running",
           desc="attach to an ended session -> not_running")
    a.sock.close()
    # pipe on a connection of its own, then raw bytes through it.
    c.call("launch", {"kind": "exec", "name": "p", "argv": [ECHO],
                      "transport": True}, desc="launch exec to pipe")
    p = Conn(path)
    p.raw_reply("pipe", {"session": "p"})
    q = Conn(path)
    q.call("pipe", {"session": "p"}, "busy",
           desc="a second pipe to a piped session -> busy")
    q.sock.close()
    p.sock.sendall(b"abc\n")
    p.sock.shutdown(socket.SHUT_WR)
    raw = chunk = p.sock.recv(65536)
    while chunk:
        chunk = p.sock.recv(65536)
        raw += chunk
    record(raw.endswith(b"abc\n"), "pipe carries raw bytes", repr(raw))
    p.sock.close()
    c.call("write", {"session": "p", "data": b64(b"x")}, "not_running",
           desc="write after the pipe closed the input -> not_running")
    # A gdb session that faults, for session.fault.
    if FAULT:
        c.call("launch", {"name": "f", "argv": [FAULT], "commands": ["run"]},
               desc="launch gdb running a faulting program")
        sub.call("subscribe", {"session": "f"}, desc="subscribe faulting")
        f = sub.wait_note(lambda n: n["method"] == "session.fault")
        record(f is not None, "session.fault")
        c.call("status", {"session": "f"}, desc="status with a fault")
    # A deadline moved, then a silence: session.verdict and its status.
    c.call("launch", {"kind": "exec", "name": "quiet", "argv": ["sleep",
           "1000"], "deadline": 60000, "silence_timeout": 300},
           desc="launch with a deadline and a silence timeout")
    sub.call("subscribe", {"session": "quiet"}, desc="subscribe quiet")
    c.call("deadline", {"session": "quiet", "ms": 30000},
           desc="deadline moved")
    v = sub.wait_note(lambda n: n["method"] == "session.verdict")
    record(v is not None and v["params"]["verdict"]["kind"] == "silent",
           "session.verdict of a silence", repr(v))
    c.call("status", {"session": "quiet"}, desc="status with a verdict")
    c.call("deadline", {"session": "quiet", "ms": 0}, "not_running",
           desc="deadline after a verdict -> not_running")
    # A hold, with a note and its status; a release; a bad ttl.
    c.call("launch", {"kind": "exec", "name": "kept", "argv": ["sleep",
           "1000"]}, desc="launch a session to hold")
    c.call("hold", {"session": "kept", "ttl": 60, "note": "why"},
           desc="hold with a ttl and a note")
    c.call("status", {"session": "kept"}, desc="status of a held session")
    c.call("list", {"fields": ["hold"]}, desc="list with the hold member")
    c.call("hold", {"session": "kept", "ttl": 0}, desc="hold released")
    c.call("hold", {"session": "kept", "ttl": -1}, "invalid_params",
           desc="hold with a negative ttl -> invalid_params")
    # A lease: its token in launch's answer, refused while its connection
    # lives, or with a wrong token; claimed once that connection closed;
    # refused once the session ended.
    lc = Conn(path)
    res = lc.call("launch", {"kind": "exec", "name": "leased", "argv": [
                  "sleep", "1000"], "lease": True, "lease_grace": 60000},
                  desc="launch with a lease")
    token = res.get("lease_token", "")
    record(len(token) == 32, "launch's answer has the lease_token",
           json.dumps(res))
    c.call("lease", {"session": "leased", "token": token}, "busy",
           desc="lease held by a live connection -> busy")
    c.call("lease", {"session": "leased", "token": "0" * 32},
           "unauthorized", desc="lease with a wrong token -> unauthorized")
    c.call("lease", {"session": "kept", "token": token}, "invalid_params",
           semantic=True, desc="lease of a session without one -> "
           "invalid_params")
    c.call("lease", {"session": "leased"}, "invalid_params",
           desc="lease without a token -> invalid_params")
    lc.sock.close()
    for _ in range(800):
        got = c.quiet("lease", {"session": "leased", "token": token})
        if "code" not in got:
            break
        time.sleep(0.025)
    c.call("lease", {"session": "leased", "token": token},
           desc="lease claimed once its connection closed")
    st = c.call("status", {"session": "leased"}, desc="status of a claimed "
                "session, without its token")
    record(problem("responses/status", {"jsonrpc": "2.0", "id": 1, "result":
                   dict(st, lease_token=token)}) is not None,
           "schema refuses a status showing the lease_token")
    c.call("stop", {"session": "leased", "timeout": 1000},
           desc="stop of a leased session")
    c.call("lease", {"session": "leased", "token": token}, "not_running",
           desc="lease of a session that ended -> not_running")
    # Bundles: asked for (its manifest too), refused, and automatic.
    tmp = os.path.dirname(path)
    c.call("bundle", {"session": "quiet", "path": tmp + "/b1"},
           desc="bundle of a session with a verdict")
    why = problem("bundle_manifest", json.load(open(tmp +
                                                   "/b1/manifest.json")))
    record(why is None, "the bundle's manifest.json", why)
    c.call("bundle", {"session": "quiet", "path": "rel/b"}, "invalid_params",
           semantic=True, desc="bundle at a relative path -> invalid_params")
    c.call("bundle", {"session": "quiet", "path": tmp + "/b1"}, "exists",
           desc="bundle at a path that exists -> exists")
    c.call("bundle", {"session": "quiet", "path": tmp + "/b2.tar.gz",
           "tar": True}, desc="bundle as a .tar.gz")
    c.call("launch", {"kind": "exec", "name": "art", "argv": ["sleep",
           "1000"], "silence_timeout": 500, "artifacts": tmp + "/art"},
           desc="launch with artifacts and a silence timeout")
    sub.call("subscribe", {"session": "art"}, desc="subscribe art")
    b = sub.wait_note(lambda n: n["method"] == "session.bundle")
    record(b is not None and b["params"]["reason"] == "silent",
           "session.bundle of a silence", repr(b))
    c.call("status", {"session": "art"}, desc="status with a bundle")
    control(c, sub, path)
    # Errors, each with the kind it must have.
    for method, params, kind in [
            ("launch", {"kind": "exec", "argv": [MISSING]}, "spawn_failed"),
            ("launch", {"kind": "bogus", "argv": ["true"]}, "invalid_params"),
            ("status", {"session": 999}, "no_such_session"),
            ("status", {"session": "nobody"}, "no_such_session"),
            ("status", {}, "invalid_params"),
            ("wait", {"session": "g", "timeout": 0}, "timeout"),
            ("stop", {}, "invalid_params"),
            ("resize", {"session": "g", "rows": 0, "cols": 1},
             "invalid_params"),
            ("no.such.method", None, "method_not_found")]:
        c.call(method, params, kind, desc="%s %s -> %s"
               % (method, json.dumps(params), kind))
    for raw, rid, kind in [
            (b'{"jsonrpc":\n', None, "parse_error"),
            (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}\n', None,
             "invalid_request"),
            (b'{"jsonrpc":"2.0","id":7.5,"method":"ping","params":[]}\n',
             7.5, "invalid_params")]:
        c.call("ping", expect=kind, raw=raw, rid=rid,
               desc="%s -> %s" % (raw.decode().strip(), kind))
    c.call("stop", {"sessions": ["g", "echo"], "timeout": 1000},
           desc="stop of two sessions")
    # remove and prune: ended sessions only, all or none.
    c.call("launch", {"kind": "exec", "name": "live", "argv": [ECHO]},
           desc="launch exec left running")
    c.call("remove", {"sessions": ["e2", "live"]}, "busy",
           desc="remove of a running session -> busy")
    c.call("remove", {}, "invalid_params")
    c.call("remove", {"sessions": [999]}, "no_such_session")
    c.call("remove", {"session": "e2", "keep_files": True},
           desc="remove an ended session")
    sub.call("unsubscribe", {"session": "echo"}, desc="unsubscribe one")
    sub.call("unsubscribe", desc="unsubscribe all")
    c.call("list")
    c.call("stop", {"all": True, "timeout": 0}, desc="stop all")
    c.call("prune", {}, desc="prune the ended sessions")
    sub.call("subscribe", desc="subscribe to every session")
    # Sessions born under the subscription: every state from starting.
    c.call("launch", {"kind": "exec", "argv": [MISSING]}, "spawn_failed",
           desc="launch that fails, under a subscription")
    c.call("launch", {"kind": "exec", "argv": [ECHO]},
           desc="launch left for shutdown to stop")
    c.call("shutdown", {"timeout": 1000})
    sub.wait_note(lambda n: False, timeout=0.2)
    for m in ["session.state", "session.output", "session.target",
              "session.launched", "session.verdict",
              "session.bundle"] + (
            ["session.fault"] if FAULT else []):
        record(seen.get(m, 0) > 0, "%s notifications valid (%d seen)"
               % (m, seen.get(m, 0)))
    record(daemon.wait(10) == 0, "daemon exits 0 after shutdown")


def run():
    tmp = tempfile.mkdtemp(prefix="dbgctl-schema.")
    try:
        main(tmp)
        coverage()
    except Exception as e:  # report a broken run as a failed check
        record(False, "the run went to its end", "%s: %s"
               % (type(e).__name__, str(e)[:2000]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("1..%d" % len(results))
    for i, (ok, desc, detail, todo) in enumerate(results, 1):
        print("%s %d - %s%s" % ("ok" if ok else "not ok", i, desc,
                                " # TODO " + todo if todo else ""))
        if not ok and detail:
            for line in detail.splitlines():
                print("# " + line)
    # A known bug's check that passes is news too: its TODO is stale.
    return 0 if results and all(ok != bool(todo) for ok, _, _, todo in
                                results) else 1


if __name__ == "__main__":
    sys.exit(run())
