"""Workload 5: memory held for backward, and XLA's scratch memory of the compiled step.

- ``tracegrad min_bytes`` / ``tracegrad save_all``: bytes of the forward values
  the backward program reads under each partition policy (`tg.explain`;
  program inputs, i.e. parameters and the batch, cost nothing).  Eager
  ``backward()`` uses save_all restricted to the tape (docs/architecture.md).
- ``torch eager``: the same count for PyTorch, with ``saved_tensors_hooks``
  (each storage once, parameters and the batch left out).
- ``torch.compile``: the same hooks around a call of the compiled loss (after the
  call that compiled it): they see what AOTAutograd's partitioned forward saves.
- ``tg.compile`` / ``jax.jit``: ``memory_analysis()`` of the whole compiled
  training step: ``xla_temp_bytes`` is XLA's scratch (temporaries) size.
"""
from __future__ import annotations

import tracegrad as tg

from . import jax_models, torch_models
from .harness import JAX, record
from .training import SPECS, _jax_step, _tg_step


def run(names: tuple[str, ...], *, use_torch: bool, xla: bool = True,
        batch: int | None = None) -> list[dict]:
    """Records of ``memory:<name>`` for each model; `batch` overrides the batch size."""
    out = []
    for name in names:
        spec = SPECS[name]
        tg.manual_seed(0)
        model = spec["model"]()
        params = jax_models.params_of(model)
        data = spec["batch"]() if batch is None else spec["batch"](batch=batch)
        w = f"memory:{name}"
        fn = (lambda *b: spec["loss"](model, *b))
        fn.__name__ = f"{name}_loss"
        for policy in ("min_bytes", "save_all"):
            r = tg.explain(fn, *data, policy=policy)
            out.append(record(w, f"tracegrad {policy}", saved_bytes=r.saved_bytes))
        if use_torch:
            tm = spec["torch_model"]()
            torch_models.load_params(tm, params)
            tbatch = torch_models.as_torch([t.numpy() for t in data])
            out.append(record(w, "torch eager",
                              saved_bytes=torch_models.saved_bytes(tm, spec["torch_loss"], tbatch)))
            out.append(record(w, "torch.compile", saved_bytes=torch_models.compiled_saved_bytes(
                tm, spec["torch_loss"], tbatch)))
        if xla:
            compiled = tg.compile(_tg_step(spec, params))
            compiled(*data)   # traces with .grad None; the next call's guards see tensors
            compiled(*data)
            out.append(_xla(w, "tg.compile", compiled.memory_analysis(*data)))
            _, jfn, state, jbatch = _jax_step(spec, params, data)
            out.append(_xla(w, JAX, jfn.lower(state["p"], *jbatch).compile().memory_analysis()))
    return out


def _xla(workload: str, impl: str, m) -> dict:
    return record(workload, impl, xla_temp_bytes=int(m.temp_size_in_bytes),
                  xla_argument_bytes=int(m.argument_size_in_bytes),
                  xla_output_bytes=int(m.output_size_in_bytes),
                  xla_alias_bytes=int(m.alias_size_in_bytes))
