"""Profiler results: events, their averages, the text table and the Chrome trace.

The recorder (profiler.py) produces `FunctionEvent`s already linked to their
parent and children (it keeps a stack of open events); everything here is
read-only arithmetic and formatting over them, shaped like
``torch.autograd.profiler_util``: `EventList` with ``table``,
``key_averages``, ``export_chrome_trace``, ``self_cpu_time_total``.

Times are kept in nanoseconds (``time.perf_counter_ns``) and shown in
microseconds, as torch shows them; memory in bytes.
"""
from __future__ import annotations

import json
import os
from collections import OrderedDict

# sort_by keys of `EventList.table` (an attribute of the events, largest first)
SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "count",
             "cpu_memory_usage", "self_cpu_memory_usage")


class Interval:
    """``time_range`` of an event: ``start`` / ``end`` in µs since the profiler started."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float):
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start

    def __repr__(self) -> str:
        return f"Interval(start={self.start:.3f}, end={self.end:.3f})"


class FunctionEvent:
    """One timed range: an op, a backward node, a `record_function` block, a program.

    Attributes:
        id: recording order (1, 2, ...).
        name: e.g. ``"aten::mul"``, ``"PowBackward0"``, ``"my_block"``.
        kind: ``"cpu_op"`` (an op kernel), ``"backward"`` (a backward node),
            ``"user_annotation"`` (`record_function`), ``"engine"`` (autograd
            engine work and whole programs), ``"compile"`` (``tg.compile``,
            jax compilation), ``"memory"`` (a free outside any event).
        sequence_nr: torch's sequence number: for a forward op, the ``seq`` of
            the tape node it recorded; for a backward node, the ``seq`` of the
            forward op that created it; -1 otherwise.
        input_shapes: per input, its shape as a list (``[]`` for a scalar);
            filled only under ``record_shapes``.
        stack: user source frames ``"file(line): function"``, innermost first
            (``with_stack``).
        cpu_parent / cpu_children: the enclosing event and the direct children.
        count: 1; 0 for the continuation of a backward node whose program
            nodes are not contiguous (averages then count the node once).
        args: extra fields for the Chrome trace (executor, program size ...).
    """

    __slots__ = ("id", "name", "kind", "sequence_nr", "input_shapes", "stack", "thread",
                 "start_ns", "end_ns", "cpu_parent", "cpu_children", "count", "args",
                 "self_mem", "_origin")

    def __init__(self, id: int, name: str, kind: str, start_ns: int, thread: int, origin: int,
                 sequence_nr: int = -1, input_shapes=None, stack=None, args=None):
        self.id = id
        self.name = name
        self.kind = kind
        self.sequence_nr = sequence_nr
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.thread = thread
        self.start_ns = start_ns
        self.end_ns = start_ns
        self.cpu_parent = None
        self.cpu_children: list[FunctionEvent] = []
        self.count = 1
        self.args = args
        self.self_mem = 0
        self._origin = origin

    @property
    def key(self) -> str:
        return self.name

    @property
    def time_range(self) -> Interval:
        return Interval((self.start_ns - self._origin) / 1e3, (self.end_ns - self._origin) / 1e3)

    @property
    def cpu_time_total(self) -> float:
        """Wall time of the range in µs, children included."""
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self) -> float:
        """`cpu_time_total` minus the direct children's."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    @property
    def cpu_memory_usage(self) -> int:
        """Bytes allocated minus bytes freed inside the range, children included."""
        return self.self_mem + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.self_mem

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} seq={self.sequence_nr} "
                f"cpu_time={_format_time(self.cpu_time_total)} "
                f"children={[c.name for c in self.cpu_children]}>")


class FunctionEventAvg:
    """Events with one key summed (what `EventList.key_averages` returns)."""

    def __init__(self, key: str, input_shapes=None, stack=None, cpu_parent=None):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.cpu_parent = cpu_parent

    @property
    def cpu_time(self) -> float:
        """Average µs per call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def add(self, e) -> "FunctionEventAvg":
        self.count += e.count
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.cpu_memory_usage += e.cpu_memory_usage
        self.self_cpu_memory_usage += e.self_cpu_memory_usage
        return self

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={_format_time(self.cpu_time_total)}>")


class EventList(list):
    """A list of `FunctionEvent` (or `FunctionEventAvg`) with torch's report methods."""

    def __init__(self, events=(), *, profile_memory: bool = False, record_shapes: bool = False,
                 stack_n: int = 0):
        super().__init__(events)
        self._profile_memory = profile_memory
        self._record_shapes = record_shapes
        self._stack_n = stack_n

    @property
    def self_cpu_time_total(self) -> float:
        """Sum of every event's self time in µs: the wall time the events cover."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> "EventList":
        """One `FunctionEventAvg` per name (and input shapes / top stack frames).

        Args:
            group_by_input_shape: split each name by its inputs' shapes (needs
                ``record_shapes=True``; adds an "Input Shapes" column).
            group_by_stack_n: split by the `n` innermost source frames (needs
                ``with_stack=True``; adds a "Source Location" column).
            group_by_overload_name: accepted for torch's signature; our ops
                have no overloads, so it changes nothing.
        Follows ``torch.autograd.profiler_util.EventList.key_averages``.
        """
        if group_by_stack_n < 0:
            raise ValueError(f"key_averages: group_by_stack_n must be >= 0, got {group_by_stack_n}")
        groups: OrderedDict = OrderedDict()
        for e in self:
            key = (e.key,)
            if group_by_input_shape:
                key += (str(e.input_shapes),)
            if group_by_stack_n:
                key += (tuple(e.stack[:group_by_stack_n]),)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None,
                    e.stack[:group_by_stack_n] if group_by_stack_n else None, e.cpu_parent)
            avg.add(e)
        return EventList(groups.values(), profile_memory=self._profile_memory,
                         record_shapes=group_by_input_shape, stack_n=group_by_stack_n)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55, max_shapes_column_width: int = 80,
              header: str | None = None, top_level_events_only: bool = False,
              time_unit: str | None = None) -> str:
        """The events as torch's text table.

        Columns: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time
        avg, CPU Mem and Self CPU Mem (``profile_memory``), # of Calls, Input
        Shapes (grouped by shape, or raw events with ``record_shapes``),
        Source Location (``group_by_stack_n``).  Percentages are of the sum of
        all self times, which is printed below the table.

        Args:
            sort_by: one of ``SORT_KEYS`` (largest first); None keeps the order
                of first occurrence.
            row_limit: show at most this many rows (<= 0: all).
            top_level_events_only: only events with no enclosing event.
            time_unit: ``"s"``, ``"ms"`` or ``"us"`` for every time (default:
                per value, as torch).
        Raises:
            ValueError: unknown `sort_by` or `time_unit`.
        Follows ``torch.autograd.profiler_util.EventList.table``.
        """
        return build_table(self, sort_by=sort_by, row_limit=row_limit,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path) -> None:
        """Write the events as Chrome trace JSON (see `chrome_trace`) to `path`."""
        write_chrome_trace(self, path)


# ---- the table ------------------------------------------------------------------------------

def _format_time(us: float, unit: str | None = None) -> str:
    if unit == "s" or (unit is None and abs(us) >= 1e6):
        return f"{us / 1e6:.3f}s"
    if unit == "ms" or (unit is None and abs(us) >= 1e3):
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(nbytes: int) -> str:
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} Gb"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} Mb"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} Kb"
    return f"{nbytes} B"


def _percent(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.2f}%" if whole > 0 else "0.00%"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def build_table(events: EventList, *, sort_by, row_limit, max_src_column_width,
                max_name_column_width, max_shapes_column_width, header, top_level_events_only,
                time_unit) -> str:
    if sort_by is not None and sort_by not in SORT_KEYS:
        raise ValueError(f"table: sort_by={sort_by!r} is not supported; use one of {SORT_KEYS} "
                         "(no device columns: tracegrad times host work only)")
    if time_unit not in (None, "s", "ms", "us"):
        raise ValueError(f"table: time_unit={time_unit!r} is not one of 's', 'ms', 'us'")
    total = events.self_cpu_time_total
    rows = list(events)
    if sort_by is not None:
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
    if top_level_events_only:
        rows = [e for e in rows if e.cpu_parent is None]
    if row_limit is not None and row_limit > 0:
        rows = rows[:row_limit]
    with_mem = events._profile_memory
    with_shapes = events._record_shapes
    stack_n = events._stack_n

    name_w = min(max([len(e.key) for e in rows] + [len("Name")]) + 4, max_name_column_width)
    columns = [("Name", name_w)] + [(h, 12) for h in (
        "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg")]
    if with_mem:
        columns += [("CPU Mem", 12), ("Self CPU Mem", 12)]
    columns.append(("# of Calls", 12))
    if with_shapes:
        shapes_w = min(max([len(str(e.input_shapes)) for e in rows] + [12]) + 4,
                       max_shapes_column_width)
        columns.append(("Input Shapes", shapes_w))
    if stack_n:
        src_w = min(max([len(s) for e in rows for s in e.stack] + [15]) + 4, max_src_column_width)
        columns.append(("Source Location", src_w))
    widths = [w for _, w in columns]

    def line(cells) -> str:
        return "".join(str(c).rjust(w) + "  " for c, w in zip(cells, widths))

    rule = "".join("-" * w + "  " for w in widths)
    out = []
    if header is not None:
        out += ["=" * len(rule), header]
    out += [rule, line([h for h, _ in columns]), rule]
    for e in rows:
        cells = [_clip(e.key, name_w),
                 _percent(e.self_cpu_time_total, total),
                 _format_time(e.self_cpu_time_total, time_unit),
                 _percent(e.cpu_time_total, total),
                 _format_time(e.cpu_time_total, time_unit),
                 _format_time(e.cpu_time_total / e.count if e.count else 0.0, time_unit)]
        if with_mem:
            cells += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        cells.append(e.count)
        if with_shapes:
            cells.append(_clip(str(e.input_shapes), shapes_w))
        if stack_n:
            frames = e.stack[:stack_n] or [""]
            cells.append(_clip(frames[0], src_w))
            out.append(line(cells))
            for f in frames[1:]:   # further frames on lines of their own, as torch
                out.append(line([""] * (len(cells) - 1) + [_clip(f, src_w)]))
            continue
        out.append(line(cells))
    out += [rule, f"Self CPU time total: {_format_time(total, time_unit)}", ""]
    return "\n".join(out)


# ---- Chrome trace -------------------------------------------------------------------------

def _walk(events):
    """Every event once, parents before children (an EventList may hold only some)."""
    seen = set()
    for e in events:
        stack = [e]
        while stack:
            x = stack.pop()
            if id(x) in seen:
                continue
            seen.add(id(x))
            yield x
            stack.extend(reversed(x.cpu_children))


def chrome_trace(events) -> dict:
    """Events as the Chrome trace format (``{"traceEvents": [...]}``), for chrome://tracing
    and https://ui.perfetto.dev: one complete event (``"ph": "X"``) per range, ``ts`` and
    ``dur`` in µs since the profiler started, ``args`` with "Sequence number", "Input
    Dims" and "Source Location" where known, and a flow arrow (``"cat": "fwdbwd"``) from
    each forward op to the backward node it created, as torch's trace draws them.
    """
    pid = os.getpid()
    trace: list[dict] = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
                          "args": {"name": "tracegrad"}}]
    forward: dict[int, FunctionEvent] = {}
    flows = []
    threads = set()
    for e in sorted(_walk(events), key=lambda x: (x.start_ns, -x.end_ns, x.id)):
        threads.add(e.thread)
        args: dict = {"External id": e.id}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Source Location"] = e.stack
        if e.self_mem:
            args["Self CPU Mem (bytes)"] = e.self_mem
        if e.args:
            args.update(e.args)
        r = e.time_range
        trace.append({"ph": "X", "cat": e.kind, "name": e.name, "pid": pid, "tid": e.thread,
                      "ts": round(r.start, 3), "dur": round(r.end - r.start, 3), "args": args})
        if e.sequence_nr >= 0:
            if e.kind == "cpu_op":
                forward.setdefault(e.sequence_nr, e)
            elif e.kind == "backward":
                flows.append(e)
    for k, b in enumerate(flows):   # forward op -> the backward node it created
        f = forward.get(b.sequence_nr)
        if f is None:
            continue
        common = {"cat": "fwdbwd", "name": "fwdbwd", "id": k, "pid": pid}
        trace.append(dict(common, ph="s", tid=f.thread, ts=round(f.time_range.start, 3)))
        trace.append(dict(common, ph="f", bp="e", tid=b.thread, ts=round(b.time_range.start, 3)))
    for t in sorted(threads):
        trace.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": t, "ts": 0,
                      "args": {"name": f"thread {t}"}})
    return {"traceEvents": trace, "displayTimeUnit": "ms"}


def write_chrome_trace(events, path) -> None:
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(chrome_trace(events), f)
    os.replace(tmp, path)
