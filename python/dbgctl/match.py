"""The matches of :meth:`Session.expect`, and the patterns it sends.

The daemon matches PCRE2 regular expressions on a stream's bytes (see
``expect`` in dbgctl-protocol(7)); this module turns what a caller gives
(str, bytes, compiled ``re.Pattern``, a list of them, ``re`` flags) into
the request's ``patterns``, ``exact`` and ``flags``, and the result into a
:class:`Match` whose values are bytes, as ``re`` gives for a bytes subject.
"""

import base64
import re

__all__ = ["Match", "text_bytes"]

#: The flags of ``re`` the daemon has, by their protocol names.
_FLAGS = ((re.IGNORECASE, "caseless"), (re.MULTILINE, "multiline"),
          (re.DOTALL, "dotall"), (re.VERBOSE, "extended"))

#: Flags of ``re`` that change nothing on bytes matched as the daemon does.
_NO_OPS = re.ASCII | re.UNICODE

#: The inline form of each flag the daemon has, for a pattern of its own.
_INLINE = {"caseless": "i", "multiline": "m", "dotall": "s", "extended": "x"}


def text_bytes(value):
    """The bytes of one of the daemon's text values: a JSON string (its
    UTF-8) or ``{"base64": ...}``; ``None`` stays ``None``."""
    if value is None:
        return None
    if isinstance(value, dict):
        return base64.b64decode(value.get("base64") or "")
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return bytes(value)


def flag_names(flags):
    """The protocol's names of ``flags``: an ``re`` flags integer, or a list
    of names; ValueError for a flag the daemon has not, named."""
    if flags is None:
        return []
    if isinstance(flags, (list, tuple)):
        names = [str(f) for f in flags]
        for name in names:
            if name not in _INLINE:
                raise ValueError("unknown expect flag %r (caseless, "
                                 "multiline, dotall, extended)" % name)
        return names
    flags = int(flags)
    names = [name for bit, name in _FLAGS if flags & bit]
    rest = flags & ~(_NO_OPS | sum(bit for bit, _ in _FLAGS))
    if rest:
        raise ValueError("the daemon's expect has no %s: only re.I, re.M, "
                         "re.S and re.X (re.A and re.U change nothing)"
                         % _flag_text(rest))
    return names


def _flag_text(bits):
    """``re.LOCALE|re.DEBUG`` for the bits of ``re`` flags ``bits``."""
    named = [f for f in re.RegexFlag if f.value & bits]
    if not named:
        return "flag 0x%x" % bits
    return "|".join("re." + f.name for f in named)


def _escape_text(text, special):
    """``text`` with each character in ``special`` (a function of the
    character) as ``\\xHH``; an escaped one loses its backslash, which
    only made it literal, as ``\\xHH`` is."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append("\\x%02x" % ord(nxt) if special(nxt) else c + nxt)
            i += 2
            continue
        out.append("\\x%02x" % ord(c) if special(c) else c)
        i += 1
    return "".join(out)


def pattern_text(pattern):
    """A regular expression, str or bytes, as the daemon's string: a bytes
    one's non-ASCII bytes (and a NUL in either, which no JSON string may
    carry to the daemon) as ``\\xHH`` escapes, so that it matches the same
    bytes."""
    if isinstance(pattern, (bytes, bytearray, memoryview)):
        text = bytes(pattern).decode("latin-1")
        return _escape_text(text, lambda c: c == "\0" or ord(c) > 0x7f)
    if isinstance(pattern, str):
        return _escape_text(pattern, lambda c: c == "\0")
    raise TypeError("a pattern is str, bytes or re.Pattern, not %s"
                    % type(pattern).__name__)


def _literal_text(literal):
    """A literal as the daemon's exact string, or None when it cannot be
    one (bytes that are not UTF-8, or a NUL)."""
    if isinstance(literal, (bytes, bytearray, memoryview)):
        try:
            literal = bytes(literal).decode("utf-8")
        except UnicodeDecodeError:
            return None
    elif not isinstance(literal, str):
        raise TypeError("a literal is str or bytes, not %s"
                        % type(literal).__name__)
    return None if "\0" in literal else literal


def _literal_pattern(literal):
    """A literal as a regular expression matching exactly its bytes."""
    if isinstance(literal, str):
        literal = literal.encode("utf-8")
    return "".join("\\x%02x" % b if b > 0x7f or b == 0 or
                   not chr(b).isalnum() else chr(b) for b in bytes(literal))


def _as_list(what):
    """One pattern or literal, or a list of them, as a list."""
    if isinstance(what, (list, tuple)):
        if not what:
            raise ValueError("expect needs at least one pattern")
        return list(what)
    return [what]


def _group_index(pattern):
    """The numbers of a pattern's named groups, as ``re`` counts them,
    which is as PCRE2 does; ``{}`` for one ``re`` cannot compile."""
    if isinstance(pattern, re.Pattern):
        return dict(pattern.groupindex)
    try:
        return dict(re.compile(pattern).groupindex)
    except (re.error, TypeError, ValueError, OverflowError):
        return {}


def expect_params(what, exact=False, flags=0):
    """The ``patterns`` or ``exact``, and ``flags``, of an expect request
    for ``what``: a pattern or literal or a list of them (see
    :meth:`Session.expect`); and the numbers of each pattern's named
    groups, for :class:`Match`."""
    items = _as_list(what)
    common = flag_names(flags)
    if exact:
        for item in items:
            if isinstance(item, re.Pattern):
                raise TypeError("expect_exact takes literals, not a "
                                "compiled pattern")
        texts = [_literal_text(item) for item in items]
        none = [{} for _ in items]
        if None not in texts:
            return {"exact": texts, "flags": common or None}, none
        # Bytes no JSON string carries: the same literals as patterns.
        return {"patterns": [_literal_pattern(item) for item in items],
                "flags": common or None}, none
    texts, own = [], []
    index = [_group_index(item) for item in items]
    for item in items:
        if isinstance(item, re.Pattern):
            texts.append(pattern_text(item.pattern))
            own.append(flag_names(item.flags))
        else:
            texts.append(pattern_text(item))
            own.append([])
    if all(set(o) == set(own[0]) for o in own):
        # One set for all: the request's flags.
        names = list(common)
        names += [n for n in own[0] if n not in names]
        return {"patterns": texts, "flags": names or None}, index
    # Compiled patterns of different flags: each its own, inline.
    texts = ["(?%s)%s" % ("".join(_INLINE[n] for n in o), t) if o else t
             for o, t in zip(own, texts)]
    return {"patterns": texts, "flags": common or None}, index


class Match:
    """A match of :meth:`Session.expect`, in the manner of ``re.Match``.

    Its values are bytes and its positions offsets in the stream:
    ``group(n=0)`` (also by a group's name; ``m[n]`` too), ``groups()``,
    ``groupdict()``, ``start(n=0)``, ``end(n=0)``, ``span(n=0)`` (-1 for
    a group that took no part, as ``re`` says).  ``before`` is the bytes
    from ``before_offset`` to the match: from where matching began
    (``from_``) unless more than 256 KiB lay between, then the last
    256 KiB.  ``index`` is which pattern of the list matched (``pattern``
    is it, as given), ``next`` the offset just past the match (where the
    Session's cursor now is), ``stream`` the stream's name and ``raw`` the
    daemon's result as it came.
    """

    def __init__(self, result, group_index=None, pattern=None):
        self.raw = result
        self.pattern = pattern
        self._index = dict(group_index or {})
        self.stream = result.get("stream")
        self.index = result.get("index", 0)
        self.from_ = result.get("from")
        self.next = result.get("next")
        self.before = text_bytes(result.get("before")) or b""
        self.before_offset = result.get("before_offset", self.from_)
        self._text = text_bytes(result.get("text")) or b""
        self._groups = [text_bytes(g) for g in result.get("groups") or []]
        self._spans = list(result.get("spans") or [])
        self._named = {k: text_bytes(v)
                       for k, v in (result.get("named") or {}).items()}
        self._span0 = (result.get("offset"), result.get("end"))

    def _number(self, group):
        """The number of ``group`` (a number or a name); IndexError when
        the pattern has no such group, as ``re`` raises."""
        if isinstance(group, str):
            if group not in self._named:
                raise IndexError("no such group %r" % group)
            return None
        if not isinstance(group, int) or not 0 <= group <= len(self._groups):
            raise IndexError("no such group %r" % (group,))
        return group

    def group(self, *groups):
        """The bytes of a group (0, the default, is the whole match), or a
        tuple of several; ``None`` for one that took no part."""
        if not groups:
            groups = (0,)
        found = []
        for g in groups:
            n = self._number(g)
            if n is None:
                found.append(self._named[g])
            else:
                found.append(self._text if n == 0 else self._groups[n - 1])
        return found[0] if len(found) == 1 else tuple(found)

    def __getitem__(self, group):
        return self.group(group)

    def groups(self, default=None):
        """Every numbered group's bytes, ``default`` for one that took no
        part."""
        return tuple(default if g is None else g for g in self._groups)

    def groupdict(self, default=None):
        """The named groups, name to bytes, ``default`` for one that took
        no part."""
        return {k: default if v is None else v
                for k, v in self._named.items()}

    def span(self, group=0):
        """``(start, end)`` of a group, in stream offsets; ``(-1, -1)``
        for one that took no part."""
        n = self._number(group)
        if n is None:
            n = self._name_number(group)
        if n == 0:
            return tuple(self._span0)
        span = self._spans[n - 1] if n - 1 < len(self._spans) else None
        return (-1, -1) if span is None else (span[0], span[1])

    def _name_number(self, name):
        """The number of the named group ``name``: as the pattern numbers
        it, else the first group of its bytes (the result names groups by
        name, not number)."""
        n = self._index.get(name)
        if isinstance(n, int) and 0 < n <= len(self._groups):
            return n
        value = self._named[name]
        if value is None:
            return len(self._groups) + 1
        for i, g in enumerate(self._groups):
            if g == value and i < len(self._spans) and self._spans[i]:
                return i + 1
        return len(self._groups) + 1

    def start(self, group=0):
        """Where a group begins in the stream (-1 if it took no part)."""
        return self.span(group)[0]

    def end(self, group=0):
        """Where a group ends in the stream (-1 if it took no part)."""
        return self.span(group)[1]

    def __bool__(self):
        return True

    def __repr__(self):
        return "<dbgctl.Match stream=%s span=(%s, %s) match=%r>" % (
            self.stream, self._span0[0], self._span0[1], self._text)
