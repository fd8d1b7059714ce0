"""tg.autograd.profiler: events, key_averages tables, Chrome traces, forward/backward seq.

The seed's example (seed 000, torch.autograd.profiler.profile) profiles 100
steps of ``y = x ** 2; y.backward()`` and prints a table with the rows mul
(200 calls), pow (200), PowBackward0 (100), torch::autograd::AccumulateGrad
(100) and torch::autograd::GraphRoot (100); our op events carry torch's
``aten::`` prefix, as torch's own profiler does today.  Times are never
asserted (only structure, counts, nesting and values).
"""
import json
import re
import threading

import numpy as np
import pytest

import tracegrad as tg
from tracegrad import _state
from tracegrad.autograd import profiler as P
from tracegrad.autograd.profiler_programs import _schedule
from tracegrad.autograd.profiler_util import chrome_trace
from tracegrad.ir import types as T
from tracegrad.ir.builder import Builder
from tracegrad.ir.graph import Graph


def counts(prof, **kw) -> dict:
    return {e.key: e.count for e in prof.key_averages(**kw)}


def rows(table: str) -> list[list[str]]:
    """The data rows of a table, split into cells (two or more spaces apart)."""
    lines = table.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("---")]
    return [re.split(r"\s{2,}", line.strip()) for line in lines[rules[1] + 1:rules[2]]]


def walk(events):
    for e in events:
        yield e
        yield from walk(e.cpu_children)


def test_seed_example_table_has_the_seed_rows():
    x = tg.randn((1, 1), requires_grad=True)
    with P.profile() as prof:
        for _ in range(100):  # any normal python code, really!
            y = x ** 2
            y.backward()
    table = prof.key_averages().table(sort_by="self_cpu_time_total")
    header = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
              "# of Calls"]
    assert re.split(r"\s{2,}", table.splitlines()[1].strip()) == header
    calls = {r[0]: int(r[-1]) for r in rows(table)}
    # forward pow 100 + the pow inside each PowBackward0 100; two muls per PowBackward0
    assert calls["aten::pow"] == 200
    assert calls["aten::mul"] == 200
    assert calls["PowBackward0"] == 100
    assert calls["torch::autograd::AccumulateGrad"] == 100
    assert calls["torch::autograd::GraphRoot"] == 100
    assert "Self CPU time total: " in table
    np.testing.assert_allclose(x.grad.numpy(), 200 * x.detach().numpy(), rtol=1e-5)
    # sorted by self time, largest first
    selfs = [e.self_cpu_time_total for e in
             sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)]
    assert [r[0] for r in rows(table)] == [
        e.key for e in sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)]
    assert selfs == sorted(selfs, reverse=True)


def test_key_averages_counts_equal_the_calls_and_times_add_up():
    a, b = tg.randn(2, 3), tg.randn(2, 3)
    with P.profile() as prof:
        for _ in range(3):
            c = a * b
        for _ in range(2):
            c = c.exp()
    assert counts(prof) == {"aten::mul": 3, "aten::exp": 2}
    avg = {e.key: e for e in prof.key_averages()}
    muls = [e for e in prof.function_events if e.name == "aten::mul"]
    assert avg["aten::mul"].cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in muls))
    assert avg["aten::mul"].cpu_time == pytest.approx(avg["aten::mul"].cpu_time_total / 3)
    assert prof.self_cpu_time_total == pytest.approx(
        sum(e.self_cpu_time_total for e in prof.function_events))
    # no grad recorded: no sequence numbers
    assert all(e.sequence_nr == -1 for e in prof.function_events)


def test_group_by_input_shape_splits_by_shape():
    with P.profile(record_shapes=True) as prof:
        for shape in [(2, 3), (2, 3), (4,)]:
            tg.ones(*shape) * 2.0
    muls = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "aten::mul"]
    assert sorted((str(e.input_shapes), e.count) for e in muls) == [
        ("[[2, 3], []]", 2), ("[[4], []]", 1)]
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="count")
    assert "Input Shapes" in table
    mul_rows = [r for r in rows(table) if r[0] == "aten::mul"]
    assert [(r[-2], r[-1]) for r in mul_rows] == [("2", "[[2, 3], []]"), ("1", "[[4], []]")]
    assert counts(prof)["aten::mul"] == 3      # ungrouped: one row
    assert "Input Shapes" not in prof.key_averages().table()


def test_group_by_input_shape_needs_record_shapes():
    with P.profile() as prof:
        tg.ones(2) * 2
    with pytest.raises(ValueError, match="record_shapes=True"):
        prof.key_averages(group_by_input_shape=True)


def test_sort_by_and_row_limit():
    a = tg.randn(3)
    with P.profile() as prof:
        for _ in range(4):
            a = a + 1
        for _ in range(2):
            a = a.exp()
        a.sin()
    table = prof.key_averages().table(sort_by="count", row_limit=2)
    assert [(r[0], r[-1]) for r in rows(table)] == [("aten::add", "4"), ("aten::exp", "2")]
    assert len(rows(prof.key_averages().table(row_limit=0))) == 3
    # no sort_by: first-occurrence order
    assert [r[0] for r in rows(prof.key_averages().table())] == [
        "aten::add", "aten::exp", "aten::sin"]
    for key in ("cpu_time_total", "self_cpu_time_total", "cpu_time"):
        got = [getattr(e, key) for e in prof.key_averages()]
        order = [r[0] for r in rows(prof.key_averages().table(sort_by=key))]
        expect = [e.key for _, e in sorted(zip(got, prof.key_averages()),
                                           key=lambda p: -p[0])]
        assert order == expect
    with pytest.raises(ValueError, match="sort_by='cuda_time_total' is not supported"):
        prof.key_averages().table(sort_by="cuda_time_total")
    # the per-event table: one row per event
    assert len(rows(prof.table(row_limit=100))) == 7


def test_backward_events_carry_the_forward_seq():
    x = tg.randn(2, 3, requires_grad=True)
    with P.profile() as prof:
        h = x * x
        e = h.exp()
        s = e.sum()
        s.backward()
    fwd = {ev.name: ev.sequence_nr for ev in prof.function_events if ev.kind == "cpu_op"
           and ev.sequence_nr >= 0}
    assert fwd == {"aten::mul": h.grad_fn.seq, "aten::exp": e.grad_fn.seq,
                   "aten::sum": s.grad_fn.seq}
    bwd = {ev.name: ev.sequence_nr for ev in prof.function_events if ev.kind == "backward"}
    assert bwd == {"MulBackward0": h.grad_fn.seq, "ExpBackward0": e.grad_fn.seq,
                   "SumBackward0": s.grad_fn.seq}
    # nesting: program -> backward nodes (last forward op first) -> their ops
    (program,) = [ev for ev in prof.function_events if ev.name == P.PROGRAM]
    assert [c.name for c in program.cpu_children] == ["SumBackward0", "ExpBackward0",
                                                     "MulBackward0"]
    mul_bwd = program.cpu_children[2]
    assert mul_bwd.cpu_children and all(c.name.startswith("aten::")
                                        for c in mul_bwd.cpu_children)
    for parent in walk([program]):
        for c in parent.cpu_children:
            assert parent.time_range.start <= c.time_range.start <= c.time_range.end \
                <= parent.time_range.end
    np.testing.assert_allclose(x.grad.numpy(), (np.exp(x.detach().numpy() ** 2) * 2
                                                * x.detach().numpy()), rtol=1e-5)


def test_profiled_backward_matches_unprofiled_gradients():
    rng = np.random.default_rng(0)
    w1 = tg.tensor(rng.standard_normal((3, 4)), dtype=tg.float32, requires_grad=True)
    w2 = tg.tensor(rng.standard_normal((4, 2)), dtype=tg.float32, requires_grad=True)
    xs = tg.tensor(rng.standard_normal((5, 3)), dtype=tg.float32)

    def loss():
        h = (xs @ w1).tanh()
        return ((h @ w2) * h.sum(1, keepdim=True)).pow(2).mean() + (h * h).sum()

    loss().backward()
    expect = [w1.grad.numpy().copy(), w2.grad.numpy().copy()]
    w1.grad = w2.grad = None
    with P.profile() as prof:
        loss().backward()
    for got, want in zip([w1.grad.numpy(), w2.grad.numpy()], expect):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # each backward node shows once (its program nodes regrouped), under the program event;
    # AddBackward0 passes its cotangent through and emits no program node, so no event
    (program,) = [ev for ev in prof.function_events if ev.name == P.PROGRAM]
    marks = [(c.name, c.sequence_nr) for c in program.cpu_children if c.kind == "backward"]
    assert len(marks) == len(set(marks)) == 10
    assert all(c.count == 1 for c in program.cpu_children)
    assert {"TanhBackward0", "PowBackward0", "MeanBackward0", "MmBackward0"} <= {n for n, _ in marks}
    assert [s for _, s in marks] == sorted((s for _, s in marks), reverse=True)


def test_record_function_nests_its_ops_in_the_chrome_trace(tmp_path):
    x = tg.randn(2, 2, requires_grad=True)
    with P.profile(record_shapes=True) as prof:
        with P.record_function("my_block", args="extra"):
            y = (x * 2).exp()
        y.sum().backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    trace = json.loads(path.read_text())
    assert set(trace) >= {"traceEvents"}
    events = trace["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == len(prof.function_events)
    for e in complete:
        assert {"name", "cat", "ts", "dur", "pid", "tid", "args"} <= set(e)
        assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0
    (block,) = [e for e in complete if e["name"] == "my_block"]
    assert block["cat"] == "user_annotation" and block["args"]["args"] == "extra"
    inside = [e for e in complete if e["cat"] == "cpu_op" and block["ts"] <= e["ts"]
              and e["ts"] + e["dur"] <= block["ts"] + block["dur"] + 1e-3]
    assert [e["name"] for e in inside] == ["aten::mul", "aten::exp"]
    assert inside[0]["args"]["Input Dims"] == [[2, 2], []]
    # the block's event tree agrees
    (ev,) = [e for e in prof.function_events if e.name == "my_block"]
    assert [c.name for c in ev.cpu_children] == ["aten::mul", "aten::exp"]
    # forward op -> backward node flow arrows, matched by seq
    seq = {e["args"].get("Sequence number") for e in complete if e["cat"] == "backward"}
    assert seq == {ev.cpu_children[0].sequence_nr, ev.cpu_children[1].sequence_nr,
                   next(e.sequence_nr for e in prof.function_events if e.name == "aten::sum")}
    starts = [e for e in events if e["ph"] == "s"]
    finishes = [e for e in events if e["ph"] == "f"]
    assert len(starts) == len(finishes) == 3
    assert {e["id"] for e in starts} == {e["id"] for e in finishes}
    assert all(e["cat"] == "fwdbwd" for e in starts + finishes)
    assert any(e["ph"] == "M" and e["name"] == "process_name" for e in events)
    assert chrome_trace(prof.function_events)["displayTimeUnit"] == "ms"


def test_record_function_as_decorator_and_outside_a_profiler():
    @P.record_function("double")
    def double(t):
        return t * 2

    with P.record_function("not profiled") as rf:   # no profiler: nothing happens
        double(tg.ones(2))
    assert rf._event is None
    with P.profile() as prof:
        for _ in range(3):
            double(tg.ones(2))
    assert counts(prof)["double"] == 3
    for ev in prof.function_events:
        if ev.name == "double":
            assert [c.name for c in ev.cpu_children] == ["aten::mul"]
    with pytest.raises(TypeError, match="name must be a str"):
        P.record_function(3)


def test_profiler_off_records_nothing_and_takes_no_profiler_path(monkeypatch):
    calls = []
    monkeypatch.setattr(P.profile, "op", lambda *a: calls.append(a))
    monkeypatch.setattr(P.profile, "run_backward", lambda *a: calls.append(a))
    monkeypatch.setattr(P.profile, "span", lambda *a: calls.append(a))
    assert _state.local.profiler is None
    x = tg.randn(2, requires_grad=True)
    (x * x).sum().backward()
    tg.compile(lambda t: (t * 3).sum())(tg.ones(2))
    assert calls == [] and x.grad is not None
    with P.profile(enabled=False) as prof:
        assert _state.local.profiler is None
        (x * x).sum().backward()
    assert calls == [] and len(prof.function_events) == 0
    assert prof.key_averages().table().count("\n") == 5   # header rules and the total only


def test_profiler_state_and_errors():
    with P.profile() as prof:
        assert _state.local.profiler is prof
        with pytest.raises(RuntimeError, match="already enabled on this thread"):
            with P.profile():
                pass
        with pytest.raises(RuntimeError, match="didn't finish running"):
            prof.key_averages()
    assert _state.local.profiler is None
    with pytest.raises(RuntimeError, match="already used"):
        with prof:
            pass
    for kwargs in ({"use_cuda": True}, {"with_flops": True}, {"with_modules": True},
                   {"use_cpu": False}, {"use_device": "cuda"}):
        with pytest.raises(NotImplementedError, match="profile: "):
            P.profile(**kwargs)


def test_an_exception_inside_the_profiler_closes_its_events():
    with pytest.raises(ValueError, match="boom"):
        with P.profile() as prof:
            with P.record_function("outer"):
                tg.ones(2) + 1
                raise ValueError("boom")
    assert _state.local.profiler is None
    (outer,) = [e for e in prof.function_events if e.name == "outer"]
    assert outer.time_range.end >= outer.cpu_children[0].time_range.end


def test_other_threads_are_not_recorded():
    def work():
        tg.ones(3).exp()

    with P.profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        tg.ones(3).sin()
    assert counts(prof) == {"aten::full": 1, "aten::sin": 1}   # not the thread's full + exp


def test_profile_memory_charges_allocations_and_frees():
    a, b = tg.ones(2, 3), tg.ones(2, 3)
    with P.profile(profile_memory=True) as prof:
        c = a * b                 # 6 float32 = 24 bytes
        v = c.reshape(3, 2)       # a view: no new buffer
        with P.record_function("free"):
            del c, v              # the buffer dies inside the block
    mul = next(e for e in prof.function_events if e.name == "aten::mul")
    view = next(e for e in prof.function_events if e.name == "aten::reshape")
    free = next(e for e in prof.function_events if e.name == "free")
    assert (mul.cpu_memory_usage, view.cpu_memory_usage, free.self_cpu_memory_usage) == (24, 0, -24)
    table = prof.key_averages().table()
    assert "CPU Mem" in table and "Self CPU Mem" in table and "24 B" in table


def test_with_stack_records_the_user_line():
    with P.profile(with_stack=True) as prof:
        tg.ones(2) * 3
    mul = next(e for e in prof.function_events if e.name == "aten::mul")
    assert mul.stack and mul.stack[0].startswith(__file__) and "test_with_stack" in mul.stack[0]
    table = prof.key_averages(group_by_stack_n=1).table(max_src_column_width=1000)
    assert "Source Location" in table and "test_with_stack_records_the_user_line" in table
    with P.profile() as plain:
        tg.ones(2) * 3
    with pytest.raises(ValueError, match="with_stack=True"):
        plain.key_averages(group_by_stack_n=1)


def test_backward_nodes_false_times_whole_programs_with_marker_events():
    x = tg.randn(2, 2, requires_grad=True)
    with P.profile(backward_nodes=False) as prof:
        (x * x).exp().sum().backward()
    (program,) = [e for e in prof.function_events if e.name == P.PROGRAM]
    assert program.args["executor"] in ("interpreter", "jax")
    marks = [c for c in program.cpu_children if c.kind == "backward"]
    assert [m.name for m in marks] == ["SumBackward0", "ExpBackward0", "MulBackward0"]
    assert all(m.cpu_time_total == 0 and m.sequence_nr >= 0 for m in marks)
    assert not any(c.name.startswith("aten::") for m in marks for c in m.cpu_children)
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy() ** 2) * 2
                               * x.detach().numpy(), rtol=1e-5)


class Square(tg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return 2 * a * g


def test_custom_function_and_hooks_run_inside_their_backward_events():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with P.profile() as prof:
        y = Square.apply(x)
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 40.0])
    by_name = {e.name: e for e in prof.function_events if e.kind == "backward"}
    assert by_name["SquareBackward"].sequence_nr == y.grad_fn.seq
    assert [c.name for c in by_name["SquareBackward"].cpu_children] == ["aten::mul", "aten::mul"]
    assert [c.name for c in by_name["autograd::tensor_hooks"].cpu_children] == ["aten::mul"]


def test_create_graph_backward_ops_get_seq_numbers_a_double_backward_reads():
    x = tg.tensor([1.5, -0.5], requires_grad=True)
    with P.profile() as prof:
        (g,) = tg.autograd.grad((x * x).sum(), x, create_graph=True)
        g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    programs = [e for e in prof.function_events if e.name == P.PROGRAM]
    first_ops = {c.sequence_nr for c in programs[0].cpu_children if c.sequence_nr >= 0}
    second = {c.sequence_nr for c in programs[1].cpu_children if c.kind == "backward"}
    assert first_ops and first_ops <= second   # torch's double-backward correlation


def test_compiled_function_events():
    def scaled_sum(t):
        return (t * 3).sin().sum()

    step = tg.compile(scaled_sum)
    with P.profile() as prof:
        for _ in range(3):
            out = step(tg.ones(2))
    np.testing.assert_allclose(out.numpy(), 2 * np.sin(3.0), rtol=1e-6)
    calls = [e for e in prof.function_events if e.name == "tg.compile: scaled_sum"]
    assert len(calls) == 3 and all(e.cpu_parent is None for e in calls)
    assert [c.name for c in calls[0].cpu_children] == ["tg.compile::trace", "tg.compile::run"]
    assert [[c.name for c in e.cpu_children] for e in calls[1:]] == [["tg.compile::run"]] * 2
    # ops are traced, not run: no op events; jax's compilation shows under the first run
    assert not any(e.kind == "cpu_op" for e in walk(calls))
    compile_phases = {c.name for c in calls[0].cpu_children[1].cpu_children}
    assert "jax::backend_compile" in compile_phases
    assert not any(c.name.startswith("jax::") for e in calls[1:] for c in walk(e.cpu_children))


def test_aten_names_and_renames():
    assert P.aten_name("mul") == "aten::mul"
    assert P.aten_name("convert") == "aten::_to_copy"
    with P.profile() as prof:
        tg.ones(2).to(tg.float64)
    assert "aten::_to_copy" in counts(prof)


class _Prog:
    """Just what `_schedule` reads of a BackwardProgram."""

    def __init__(self, graph):
        self.graph = graph


def test_schedule_regroups_interleaved_backward_nodes():
    f = T.TensorType((2,), T.float32)
    g = Graph(name="bwd")
    a = g.add_input(f)
    b = Builder(g)
    b.fwd_id = 2
    p = b.exp(a)
    b.fwd_id = 1
    q = b.sin(a)          # independent of p: may move after the rest of group 2
    b.fwd_id = 2
    r = b.mul(p, p)
    b.fwd_id = 1
    s = b.mul(q, r)
    g.outputs = [s]
    order, last_use, groups = _schedule(_Prog(g))
    assert [n.fwd_id for n in order] == [2, 2, 1, 1]
    assert groups == (2, 1)
    assert last_use[id(s)] is None and last_use[id(r)] is order[3]
