"""Session.expect, its Match, Timeout and EOF, read_until over it, and
launch(wait=False), against a real daemon (see conftest.py)."""

import re
import shlex
import sys

import pytest

import dbgctl

#: Generous: the machine is shared, and a test waits for events, not time.
WAIT = 30.0


def _py(client, code, **kw):
    """Launch ``code`` in Python as an exec session with a transport."""
    return client.launch([sys.executable, "-c", code], kind="exec",
                         transport=True, **kw)


def _bytewise(data, then="sleep"):
    """Python code writing ``data`` a byte per write, then sleeping (so
    that the stream stays open) or not."""
    return ("import os, sys, time\n"
            "for b in %r:\n"
            "    os.write(1, bytes([b])); time.sleep(0.01)\n"
            "%s" % (data, "time.sleep(60)\n" if then == "sleep" else ""))


def _quiet(data):
    """Python code writing ``data`` (bytes, or a Python expression of
    them) at once, then staying open."""
    if isinstance(data, bytes):
        data = repr(data)
    return ("import os, time\n"
            "d = %s\n"
            "while d:\n"
            "    d = d[os.write(1, d):]\n"
            "time.sleep(60)\n" % (data,))


def _transcript(s, size, stream="target"):
    """The stream's first ``size`` bytes, waiting for them to come."""
    got = b""
    while len(got) < size:
        res = s.logs(offset=len(got), stream=stream, wait=True)
        assert res["data"] or not res["ended"], got
        got += res["data"]
    return got[:size]


def test_expect_groups_named_groups_and_offsets(client):
    text = b"boot\r\nhello counter=42 name=bob\r\nend\r\n"
    with _py(client, _quiet(text)) as s:
        m = s.expect(rb"counter=(\d+) (x)?name=(?P<who>\w+)\r\n",
                     timeout=WAIT)
        assert isinstance(m, dbgctl.Match) and m.stream == "target"
        assert m.group() == m.group(0) == m[0] == b"counter=42 name=bob\r\n"
        assert m.group(1) == b"42" and m.group(2) is None
        assert m.group("who") == m[3] == b"bob"
        assert m.group(1, "who") == (b"42", b"bob")
        assert m.groups() == (b"42", None, b"bob")
        assert m.groups(b"-") == (b"42", b"-", b"bob")
        assert m.groupdict() == {"who": b"bob"}
        assert m.before == b"boot\r\nhello " and m.index == 0
        start = text.index(b"counter")
        assert m.span() == (start, start + len(m.group(0)))
        assert (m.start(), m.end()) == m.span()
        assert text[m.start(1):m.end(1)] == b"42"
        assert m.span("who") == m.span(3) and \
            text[m.start("who"):m.end("who")] == b"bob"
        assert m.span(2) == (-1, -1) and m.start(2) == -1
        assert m.next == m.end() and s.cursor() == m.end()
        assert m.raw["text"] == "counter=42 name=bob\r\n"
        with pytest.raises(IndexError):
            m.group(4)
        with pytest.raises(IndexError):
            m.group("nobody")
        # The cursor moved past the match: the next expect sees the rest.
        m = s.expect(rb"\w+", timeout=WAIT)
        assert m.group() == b"end" and m.before == b""


def test_expect_list_earliest_match_and_ties(client):
    with _py(client, _quiet(b"one two three four\n")) as s:
        m = s.expect([b"three", b"two", b"t(wo)"], timeout=WAIT)
        assert m.index == 1 and m.group() == b"two" and m.pattern == b"two"
        m = s.expect([re.compile(b"f(our)"), b"(?P<x>fo)ur"], timeout=WAIT)
        assert m.index == 0 and m.group(1) == b"our"
        assert m.before == b" three "
        with pytest.raises(ValueError):
            s.expect([], timeout=WAIT)


def test_expect_exact_literals_and_bytes(client):
    text = b"a.b*(c) [x]\xff\x00\xfeq \xc3\xa9t\xc3\xa9 tail\n"
    with _py(client, _quiet(text)) as s:
        m = s.expect_exact(b"*(c)", timeout=WAIT)
        assert m.group() == b"*(c)" and m.before == b"a.b"
        m = s.expect("[x]", exact=True, timeout=WAIT)
        assert m.group() == b"[x]" and m.start() == text.index(b"[x]")
        # Bytes no JSON string can carry: a NUL and bytes not UTF-8.
        m = s.expect_exact([b"nothing", b"\xff\x00\xfe"], timeout=WAIT)
        assert m.index == 1 and m.group() == b"\xff\x00\xfe"
        assert m.start() == text.index(b"\xff")
        m = s.expect_exact("\u00e9t", timeout=WAIT)
        assert m.group() == "\u00e9t".encode()
        m = s.expect(b"(\xc3\xa9|x)\\s(tail)", timeout=WAIT)
        assert m.groups() == (b"\xc3\xa9", b"tail")
        with pytest.raises(TypeError):
            s.expect_exact(re.compile("x"), timeout=WAIT)


def test_expect_compiled_patterns_and_flags(client):
    text = b"Hello\nWORLD\nfoo=1\nbar\xff=2\n"
    with _py(client, _quiet(text)) as s:
        m = s.expect(re.compile(rb"hello.world", re.I | re.S), timeout=WAIT)
        assert m.group() == b"Hello\nWORLD"
        m = s.expect(r"^foo=(\d)$", flags=re.M, timeout=WAIT)
        assert m.group(1) == b"1"
        # A bytes pattern's non-ASCII byte, in verbose mode, with re.A.
        m = s.expect(re.compile(b"bar \xff   # the byte 0xff\n"
                                b"  = (?P<n> \\d)", re.X | re.A),
                     timeout=WAIT)
        assert m.group("n") == b"2" and m.group() == b"bar\xff=2"
    with _py(client, _quiet(b"ABC abc\n")) as s:
        # Different flags in one list: each pattern keeps its own.
        m = s.expect([re.compile("abc"), re.compile("ABC", re.I)],
                     timeout=WAIT)
        assert m.index == 1 and m.start() == 0
        m = s.expect([re.compile("abc"), re.compile("XYZ", re.I)],
                     timeout=WAIT)
        assert m.index == 0 and m.start() == 4
        m = s.expect(re.compile("\n", re.U), timeout=WAIT)
        assert m.group() == b"\n"


def test_expect_refuses_flags_it_has_not(client):
    with _py(client, _quiet(b"x\n")) as s:
        with pytest.raises(ValueError, match=r"re\.LOCALE"):
            s.expect(re.compile(b"x", re.L), timeout=WAIT)
        with pytest.raises(ValueError, match=r"re\.DEBUG"):
            s.expect("x", flags=re.DEBUG, timeout=WAIT)
        with pytest.raises(ValueError, match="sideways"):
            s.expect("x", flags=["caseless", "sideways"], timeout=WAIT)
        with pytest.raises(dbgctl.Error) as e:
            s.expect("(x", timeout=WAIT)
        assert e.value.kind == "invalid_params"
        assert "missing closing parenthesis" in str(e.value)
        # None of it moved the cursor.
        assert s.expect("x", flags=["caseless"], timeout=WAIT).start() == 0


def test_expect_pattern_split_over_single_byte_writes(client):
    text = b"noise MAGIC-TOKEN:7 counter=1234567890\r\nmore"
    with _py(client, _bytewise(text)) as s:
        m = s.expect(rb"MAGIC-TOKEN:(\d)", timeout=WAIT)
        assert m.group(1) == b"7" and m.start() == text.index(b"MAGIC")
        # Never a number cut short by how the bytes came.
        m = s.expect(rb"counter=(\d+)", timeout=WAIT)
        assert m.group(1) == b"1234567890"
        m = s.expect_exact(b"more", timeout=WAIT)
        assert m.before == b"\r\n" and m.end() == len(text)


def test_expect_counter_at_a_quiet_end_matches_at_the_timeout(client):
    with _py(client, _quiet(b"counter=987")) as s:
        _transcript(s, 11)
        m = s.expect(rb"counter=(\d+)", timeout=1.0)
        assert m.group(1) == b"987"


def test_timeout_got_holds_every_byte(client):
    made = 'bytes(range(256)) * 1600 + b"MARK\\n"'
    data = eval(made)   # 400 KiB: more than a before holds
    with _py(client, _quiet(made)) as s:
        assert _transcript(s, len(data)) == data
        with pytest.raises(dbgctl.Timeout) as e:
            s.expect(b"NEVER", timeout=0.5)
        t = e.value
        assert t.kind == "timeout" and t.code == 5
        assert t.got == data and t.data["got"] == data
        assert (t.from_, t.got_offset, t.next) == (0, 0, len(data))
        assert s.cursor() == 0
        with pytest.raises(dbgctl.Timeout) as e:
            s.read_until(b"NEVER", timeout=0.5)
        assert e.value.got == data and e.value.data["got"] == data
        # read_until returns every byte up to the match, more than the
        # daemon's 256 KiB of before.
        assert s.read_until(b"MARK\n", timeout=WAIT) == data
        with pytest.raises(dbgctl.Timeout) as e:
            s.expect(b"x", timeout=0.2)
        assert e.value.got == b"" and e.value.from_ == len(data)


def test_read_until_timeout_carries_got(client):
    with _py(client, _quiet(b"partial")) as s:
        # Wait for the bytes with the protocol's logs itself.
        assert _transcript(s, 7) == b"partial"
        with pytest.raises(dbgctl.Timeout) as e:
            s.read_until(b"NEVER", timeout=1.0)
        assert e.value.data["got"] == b"partial"
        assert e.value.got == b"partial"


def test_eof_when_the_stream_ends(client):
    with _py(client, "import sys; sys.stdout.write('bye\\n')") as s:
        with pytest.raises(dbgctl.EOF) as e:
            s.expect(b"NEVER", timeout=WAIT)
        err = e.value
        assert isinstance(err, dbgctl.Error)
        assert not isinstance(err, dbgctl.Timeout)
        assert err.kind == "eof" and err.code == 13
        assert err.got == b"bye\n" and err.data["got"] == b"bye\n"
        assert (err.from_, err.got_offset, err.next) == (0, 0, 4)
        assert "ended with no match" in str(err)
        with pytest.raises(dbgctl.EOF):
            s.read_until(b"NEVER", timeout=WAIT)
        assert s.read_until(b"bye", timeout=WAIT) == b"bye"


def test_read_until_leaves_the_rest(client):
    with _py(client, _quiet(b"one\ntwo\nthree\nfour\n")) as s:
        assert s.read_until(b"one\n", timeout=WAIT) == b"one\n"
        assert s.read_until(b"three\n", timeout=WAIT) == b"two\nthree\n"
        assert s.expect(rb"\w+", timeout=WAIT).group() == b"four"
        # The read position is read's own: read_until took nothing of it.
        got = b""
        while not got.endswith(b"four\n"):
            chunk = s.read(timeout=WAIT)
            assert chunk, "the stream ended after %r" % got
            got += chunk
        assert got == b"one\ntwo\nthree\nfour\n"


def test_logs_of_a_stream_with_timestamps(client):
    with _py(client, _quiet(b"abc\n")) as s:
        assert _transcript(s, 4) == b"abc\n"
        res = s.logs(stream="target", timestamps=True)
        assert res["stream"] == "target" and res["data"] == b"abc\n"
        assert res["times"] and res["times"][0][0] == 0
        assert "times" not in s.logs(stream="target")
        with pytest.raises(dbgctl.Error) as e:
            s.logs(stream="server")
        assert e.value.kind == "not_supported"
    with client.launch(["/bin/echo", "console"], kind="exec") as s:
        assert s.expect(b"console", timeout=WAIT).stream == "console"
        assert b"console" in s.logs()["data"]
        with pytest.raises(dbgctl.Error) as e:
            s.expect(b"x", stream="target", timeout=WAIT)
        assert e.value.kind == "not_supported"


def test_two_sessions_on_two_clients_expect_independently(client, daemon,
                                                          fixtures):
    other = dbgctl.Client(socket=daemon, autostart=False)
    try:
        with client.launch([fixtures["echo"]], kind="exec",
                           transport=True) as a:
            banner = a.expect(rb"arg0=\[.*\]\n", timeout=WAIT)
            assert banner.start() == 0
            b = other.session(a.id)
            # Not launched by its client: it starts at the stream's end.
            assert b.cursor() == banner.end()
            a.write(b"x1\n")
            mb = b.expect(rb"x(\d)", timeout=WAIT)
            ma = a.expect(rb"x(\d)", timeout=WAIT)
            assert ma.group(1) == mb.group(1) == b"1"
            assert ma.span() == mb.span() and mb.before == b""
            with pytest.raises(dbgctl.Timeout):
                a.expect(rb"x(\d)", timeout=0.3)
            a.write(b"x2\n")
            assert b.expect(rb"x(\d)", timeout=WAIT).group(1) == b"2"
            end = banner.end() + len(b"x1\nx2\n")
            assert b.expect(rb"\n", timeout=WAIT).end() == end
            assert a.cursor() == ma.end()
            assert a.expect(rb"x(\d)", timeout=WAIT).group(1) == b"2"
            # A second Session on the same client has its own cursor too,
            # from the end.
            c = client.session(a.id)
            assert c.cursor() == end
    finally:
        other.close()


def test_launch_wait_false_starts_two_sessions_at_once(client, fixtures,
                                                       tmp_path):
    gate = tmp_path / "go"
    server = "sh -c %s" % shlex.quote(
        "while [ ! -e %s ]; do sleep 0.02; done; exec gdbserver "
        "127.0.0.1:{port} %s" % (shlex.quote(str(gate)),
                                 shlex.quote(fixtures["echo"])))
    boards = [client.launch([fixtures["echo"]], kind="gdbserver",
                            server=server, wait=False, name="board-%d" % i,
                            connect_timeout=120000)
              for i in range(2)]
    try:
        for s in boards:
            assert s.id is None and s.record["state"] == "starting"
        # Both are starting at the same time, neither answered.
        starting = [r for r in client.list()
                    if r.get("name") in ("board-0", "board-1")]
        assert sorted(r["state"] for r in starting) == ["starting"] * 2
        with pytest.raises(dbgctl.Timeout):
            boards[0].wait_ready(timeout=0.2)
        gate.write_text("")
        for s in boards:
            assert s.wait_ready(timeout=WAIT)["state"] == "running"
            assert isinstance(s.id, int)
            assert s.status()["state"] == "running"
        assert boards[0].id != boards[1].id
    finally:
        if not gate.exists():
            gate.write_text("")
        for s in boards:
            try:
                s.stop()
            except dbgctl.Error:
                pass


def test_launch_wait_false_that_fails(client, tmp_path):
    s = client.launch([str(tmp_path / "no-such-program")], kind="exec",
                      wait=False)
    with pytest.raises(dbgctl.Error) as e:
        s.wait_ready(timeout=WAIT)
    assert e.value.kind == "spawn_failed"
    assert "No such file or directory" in str(e.value)
    # The failed session's id still names its record.
    assert s.record["state"] == "failed" and isinstance(s.id, int)
    assert s.status()["state"] == "failed"
    assert s.wait_ready() == s.record


def test_patterns_as_sent():
    from dbgctl.match import expect_params, pattern_text
    assert pattern_text(b"a\xffb") == "a\\xffb"
    # An escaped non-ASCII byte is that byte; an escaped backslash stays.
    assert pattern_text(b"\\\xff") == "\\xff"
    assert pattern_text(b"\\\\\xff") == "\\\\\\xff"
    assert pattern_text("x\0y") == "x\\x00y"
    params, _ = expect_params(re.compile(b"A", re.I | re.M), flags=re.S)
    assert params == {"patterns": ["A"],
                      "flags": ["dotall", "caseless", "multiline"]}
    params, _ = expect_params([re.compile("a", re.I), "b"])
    assert params == {"patterns": ["(?i)a", "b"], "flags": None}
    params, _ = expect_params([b"\xff*", "ok"], exact=True)
    assert params["patterns"] == ["\\xff\\x2a", "ok"]


def test_expect_from_an_offset_of_the_callers(client):
    with _py(client, _quiet(b"a1 a2 a3\n"), lease=True) as s:
        first = s.expect(rb"a\d", timeout=WAIT)
        assert (first.group(0), first.start(), first.next) == (b"a1", 0, 2)
        # From an earlier offset: the same bytes again.
        again = s.expect(rb"a\d", timeout=WAIT, from_=0)
        assert again.group(0) == b"a1" and again.start() == 0
        # From a later one: what lies before it is skipped.
        later = s.expect_exact(b"a", timeout=WAIT, from_=4)
        assert later.start() == 6 and later.group(0) == b"a"
        # The cursor is past the furthest match, and goes on from there.
        assert s.cursor() == 7
        assert s.expect(rb"\d", timeout=WAIT).group(0) == b"3"


def test_an_expect_timeout_says_what_came(client):
    with _py(client, _quiet(b"uart said ping-42\n"), lease=True) as s:
        s.expect_exact(b"ping-42\n", timeout=WAIT)
        with pytest.raises(dbgctl.Timeout) as e:
            s.expect_exact(b"never-comes", timeout=0.5, from_=0)
    # The one line a report or a JUnit failure shows says what came.
    assert e.value.got == b"uart said ping-42\n"
    assert str(e.value) == e.value.message + \
        "; got b'uart said ping-42\\n'", str(e.value)
    assert "never-comes" in e.value.message
