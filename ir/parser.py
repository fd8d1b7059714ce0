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
from .registry import REGISTRY


class IRParseError(IRError):
    """Malformed IR text; the message gives line:column and shows the spot."""


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_VALUE = re.compile(r"%[0-9]+")
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?(?:[0-9]+\.[0-9]*(?:e[-+]?[0-9]+)?|[0-9]+e[-+]?[0-9]+|inf|nan)")
_LOC = re.compile(r"^(?P<file>.*):(?P<line>[0-9]+) \((?P<func>[^()]*)\)$")


class _Line:
    """A cursor over one line of text."""

    def __init__(self, text: str, lineno: int):
        self.text, self.lineno, self.pos = text, lineno, 0

    def error(self, msg: str, pos: int | None = None) -> IRParseError:
        col = self.pos if pos is None else pos
        return IRParseError(f"{self.lineno}:{col + 1}: {msg}\n  {self.text}\n  {' ' * col}^")

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
                dims.append(int(self.parse_re(_INT, "a dimension")))
                if self.parse_optional("]"):
                    break
                self.parse(",")
        return T.TensorType(tuple(dims), dtype)

    def parse_literal(self):
        self.skip_ws()
        if self.parse_optional("("):
            items = []
            if self.parse_optional(")"):
                return ()
            while True:
                items.append(self.parse_literal())
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
        num = self.parse_optional_re(_INT)
        if num is not None:
            return int(num)
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
    m = re.match(r"#([0-9]+)(?:, |$)", rest)
    if m:
        node_id, rest = int(m.group(1)), rest[m.end():]
    m = re.match(r"bwd of #([0-9]+)(?:, |$)", rest)
    if m:
        fwd_id, rest = int(m.group(1)), rest[m.end():]
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
