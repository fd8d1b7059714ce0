"""Parser of the IR text format (grammar in docs/ir.md): ``parse(print_graph(g)) == g``.

Recursive descent over one line at a time, with `parse_x` / `parse_optional_x`
pairs.  It never evaluates code: literals are read by hand.  Errors are
`IRParseError` with ``line:column``, the line, and a caret under the spot.
"""
from __future__ import annotations

import re

from . import types as T
from .errors import IRError
from .graph import Graph, Node, SourceLoc, Value
from .printer import LOC as _LOC
from .registry import REGISTRY


MAX_DEPTH = 32          # tuple nesting in one literal
MAX_INT_DIGITS = 19    # 2**62 (MAX_SIZE) has 19 digits; Python refuses int() past 4,300
MAX_SIZE = 2 ** 62
_UNESCAPE = {"n": "\n", "r": "\r", "t": "\t"}


class IRParseError(IRError):
    """Malformed IR text; the message gives line:column and shows the spot."""


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_VALUE = re.compile(r"%[0-9]+")
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?(?:[0-9]+\.[0-9]*(?:e[-+]?[0-9]+)?|[0-9]+e[-+]?[0-9]+|inf|nan)")


class _Line:
    """A cursor over one line of text."""

    def __init__(self, text: str, lineno: int):
        self.text, self.lineno, self.pos = text, lineno, 0

    def error(self, msg: str, pos: int | None = None) -> IRParseError:
        col = self.pos if pos is None else pos
        lo = max(0, col - 60)   # a window of a long line around the spot
        shown, caret = self.text[lo:col + 60], col - lo
        return IRParseError(f"{self.lineno}:{col + 1}: {msg}\n  {shown}\n  {' ' * caret}^")

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def parse_optional(self, token: str) -> bool:
        self.skip_ws()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def parse(self, token: str) -> None:
        if not self.parse_optional(token):
            raise self.error(f"expected {token!r}")

    def parse_optional_re(self, pattern: re.Pattern) -> str | None:
        self.skip_ws()
        m = pattern.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group(0)

    def parse_re(self, pattern: re.Pattern, what: str) -> str:
        got = self.parse_optional_re(pattern)
        if got is None:
            raise self.error(f"expected {what}")
        return got

    def at_end(self) -> bool:
        self.skip_ws()
        return self.pos >= len(self.text)

    # ---- grammar pieces ------------------------------------------------------------
    def parse_type(self) -> T.TensorType:
        start = self.pos
        name = self.parse_re(_NAME, "a type like f32[2,3]")
        try:
            dtype = T.from_name(name)
        except TypeError:
            raise self.error(f"unknown dtype {name!r}", start) from None
        self.parse("[")
        dims = []
        if not self.parse_optional("]"):
            while True:
                start = self.pos
                dims.append(self.parse_int("a dimension"))
                if not 0 <= dims[-1] <= MAX_SIZE:
                    raise self.error(f"a dimension is a size in [0, 2**62], got {dims[-1]}",
                                     start + 1)
                if self.parse_optional("]"):
                    break
                self.parse(",")
        return T.TensorType(tuple(dims), dtype)

    def parse_int(self, what: str) -> int:
        start = self.pos
        text = self.parse_re(_INT, what)
        if len(text.lstrip("-")) > MAX_INT_DIGITS:
            raise self.error(f"integer literal too large ({len(text)} digits; an attribute or "
                             f"size holds at most {MAX_INT_DIGITS})", start)
        return int(text)

    def parse_literal(self, depth: int = 0):
        self.skip_ws()
        if depth > MAX_DEPTH:
            raise self.error(f"nesting too deep (tuples nest at most {MAX_DEPTH} levels)")
        if self.parse_optional("("):
            items = []
            if self.parse_optional(")"):
                return ()
            while True:
                items.append(self.parse_literal(depth + 1))
                if self.parse_optional(")"):
                    return tuple(items)
                self.parse(",")
                if self.parse_optional(")"):
                    return tuple(items)
        if self.text.startswith('"', self.pos):
            return self.parse_string()
        for word, value in (("true", True), ("false", False), ("none", None)):
            if re.match(word + r"\b", self.text[self.pos:]):
                self.pos += len(word)
                return value
        if re.match(r"complex\(", self.text[self.pos:]):   # complex(re, im): two floats
            self.pos += len("complex")
            self.parse("(")
            real = float(self.parse_re(_FLOAT, "the real part of a complex literal"))
            self.parse(",")
            imag = float(self.parse_re(_FLOAT, "the imaginary part of a complex literal"))
            self.parse(")")
            return complex(real, imag)
        num = self.parse_optional_re(_FLOAT)
        if num is not None:
            return float(num)
        if _INT.match(self.text, self.pos):
            return self.parse_int("an integer")
        start = self.pos
        name = self.parse_optional_re(_NAME)
        if name is not None:
            try:
                return T.from_name(name)
            except TypeError:
                raise self.error(f"unknown literal {name!r}", start) from None
        raise self.error("expected a literal (number, complex(re, im), true/false/none, string, "
                         "dtype, tuple)")

    def parse_string(self) -> str:
        self.parse('"')
        out = []
        while True:
            if self.pos >= len(self.text):
                raise self.error("unterminated string")
            c = self.text[self.pos]
            self.pos += 1
            if c == '"':
                return "".join(out)
            if c == "\\":
                if self.pos >= len(self.text):
                    raise self.error("unterminated escape")
                c = self.text[self.pos]
                self.pos += 1
                if c == "u":   # \uXXXX: a character that would break the line
                    code = self.text[self.pos:self.pos + 4]
                    if not re.fullmatch(r"[0-9a-fA-F]{4}", code):
                        raise self.error("expected 4 hex digits after \\u")
                    self.pos += 4
                    c = chr(int(code, 16))
                else:
                    c = _UNESCAPE.get(c, c)
            out.append(c)

    def parse_attrs(self) -> dict:
        attrs = {}
        if not self.parse_optional("{"):
            return attrs
        while True:
            name = self.parse_re(_NAME, "an attribute name")
            self.parse("=")
            attrs[name] = self.parse_literal()
            if self.parse_optional("}"):
                return attrs
            self.parse(",")


def _split_comment(text: str) -> tuple[str, str | None]:
    """Code and trailing comment; a '#' inside a string literal does not start one."""
    in_str = esc = False
    for i, c in enumerate(text):
        if esc:
            esc = False
        elif c == "\\":
            esc = in_str
        elif c == '"':
            in_str = not in_str
        elif c == "#" and not in_str:
            return text[:i].rstrip(), text[i + 1:].strip()
    return text.rstrip(), None


def _parse_provenance(comment: str | None, line: _Line):
    node_id = fwd_id = loc = None
    rest = comment or ""
    m = re.match(r"#([0-9]{1,19})(?:, |$)", rest)
    if m:
        node_id, rest = int(m.group(1)), rest[m.end():]
    m = re.match(r"bwd of #([0-9]{1,19})(?:, |$)", rest)
    if m:
        fwd_id, rest = int(m.group(1)), rest[m.end():]
    if rest.startswith("loc("):   # loc("file", line, "func"): names the plain form cannot hold
        cur = _Line(rest, line.lineno)
        cur.parse("loc(")
        file = cur.parse_string() if cur.text.startswith('"', cur.pos) else None
        cur.parse(",")
        lineno = cur.parse_int("a line number")
        cur.parse(",")
        cur.skip_ws()
        func = cur.parse_string() if cur.text.startswith('"', cur.pos) else None
        cur.parse(")")
        if file is None or func is None or not cur.at_end():
            raise line.error(f"malformed source location {rest!r} (expected "
                             'loc("file", line, "func"))')
        return node_id, fwd_id, SourceLoc(file, lineno, func)
    if rest:
        m = _LOC.match(rest)
        if m is None:
            raise line.error(f"malformed source location {rest!r} (expected file:line (func))")
        loc = SourceLoc(m.group("file"), int(m.group("line")), m.group("func"))
    return node_id, fwd_id, loc


def parse(text: str) -> Graph:
    """Rebuild the Graph that `print_graph` printed.

    Raises:
        IRParseError: malformed text, with line:column and a caret.
    """
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if ln.strip()]
    if not lines:
        raise IRParseError("1:1: empty program text")
    values: dict[str, Value] = {}
    lineno, head = lines[0]
    cur = _Line(head, lineno)
    cur.parse("graph")
    cur.parse("@")
    cur.skip_ws()
    g = Graph(cur.parse_string() if cur.text.startswith('"', cur.pos)
              else cur.parse_re(_NAME, "a graph name"))
    cur.parse("(")
    if not cur.parse_optional(")"):
        while True:
            name = cur.parse_re(_VALUE, "a value name like %0")
            cur.parse(":")
            v = g.add_input(cur.parse_type())
            if cur.parse_optional("{saved}"):
                g.saved.add(id(v))
            _define(values, name, v, cur)
            if cur.parse_optional(")"):
                break
            cur.parse(",")
    cur.parse("{")
    if not cur.at_end():
        raise cur.error("unexpected text after '{'")
    ended = False
    for lineno, raw in lines[1:]:
        if ended:
            raise _Line(raw, lineno).error("text after the closing '}'")
        code, comment = _split_comment(raw)
        cur = _Line(code, lineno)
        if cur.parse_optional("}"):
            ended = True
            continue
        if cur.parse_optional("return"):
            outs = []
            if not cur.at_end():
                while True:
                    outs.append(_use(values, cur.parse_re(_VALUE, "a value name"), cur))
                    if cur.at_end():
                        break
                    cur.parse(",")
            g.outputs = outs
            continue
        names, types = [], []
        while True:
            names.append(cur.parse_re(_VALUE, "a value name like %3"))
            cur.parse(":")
            types.append(cur.parse_type())
            if cur.parse_optional("="):
                break
            cur.parse(",")
        start = cur.pos
        op = cur.parse_re(_NAME, "an op name")
        if op not in REGISTRY:
            raise cur.error(f"unknown op {op!r}", start + 1)
        cur.parse("(")
        ins = []
        if not cur.parse_optional(")"):
            while True:
                ins.append(_use(values, cur.parse_re(_VALUE, "a value name"), cur))
                if cur.parse_optional(")"):
                    break
                cur.parse(",")
        attrs = cur.parse_attrs()
        if not cur.at_end():
            raise cur.error("unexpected text after the node")
        region = attrs.pop("fusion", None)
        node_id, fwd_id, loc = _parse_provenance(comment, cur)
        n = Node(op, ins, attrs, types, loc, fwd_id, node_id)
        n.region = region
        for name, v in zip(names, n.outputs):
            _define(values, name, v, cur)
        g.nodes.append(n)
    if not ended:
        raise IRParseError(f"{lines[-1][0]}:1: missing the closing '}}'")
    return g


def _define(values: dict, name: str, v: Value, line: _Line) -> None:
    if name in values:
        raise line.error(f"{name} is defined twice")
    values[name] = v


def _use(values: dict, name: str, line: _Line) -> Value:
    try:
        return values[name]
    except KeyError:
        raise line.error(f"{name} is used before it is defined") from None
