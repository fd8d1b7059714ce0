"""The dispatch core: how an op call on Tensors runs.

    frontend.py   DISPATCHER (`TensorFrontend`): the one entry point (bind, plan cache)
    modes.py      the thread's mode: eager kernels, tg.compile's trace, the profiler
    kernels.py    running a NumPy kernel (fp errors ignored, errors with context)
    constants.py  scalar operands as shared constant tensors
    record.py     the tape record (and forward-AD propagation through `hooks`)
    tape.py       the tape's TapeNode / AccumulateGrad (tg.autograd.graph re-exports them)
    grad_mode.py  no_grad / enable_grad / inference_mode (tg.autograd re-exports them)
    hooks.py      slots the autograd layer fills (forward AD, record-time extras)

It sits below tracegrad.autograd and imports nothing of it
(tests/test_layers.py).  This file imports nothing itself, so that tensor.py,
which the dispatcher is built on, can use `hooks` without a cycle: import the
entry point from `frontend` (``from tracegrad.dispatch.frontend import DISPATCHER``).
"""
