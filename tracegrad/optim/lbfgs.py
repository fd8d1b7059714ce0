"""L-BFGS (torch.optim.LBFGS; Nocedal 1980, after minFunc), with torch's optional
strong-Wolfe line search (Nocedal & Wright, Algorithms 3.5 and 3.6).

Eager only: each iteration branches on values (curvature ``y.s``, the stopping tests, the
line search's bracket), so `step` refuses to run inside `tg.compile` with a TraceError;
compile the closure's forward and backward instead (``closure = tg.compile(closure)``
works: `step` only calls it and reads ``.grad``).

The flat vectors are NumPy arrays of the parameters' dtype and the scalars NumPy scalars of
that dtype mixed with Python floats, which follow the same promotion as torch's 0-d tensors
and Python numbers (NumPy 2's weak Python scalars), so the float32 iterates follow torch's
float32 arithmetic; only the reduction order of dot products may differ.
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir.errors import TraceError

from .. import _state
from ..autograd.grad_mode import enable_grad, no_grad
from ..tensor import Tensor
from .optimizer import Optimizer, check_hyper


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to
    `bounds` (default: the interval between the points); their midpoint when the cubic
    has no real minimiser."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 ** 2 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = np.sqrt(disc)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, lo), hi)


class _Point:
    """One trial of the line search: step t, loss f, flat gradient g, slope gtd = g.d."""
    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """torch's strong-Wolfe search along d from loss f, gradient g (slope gtd) with first
    trial step t.  `evaluate(t)` returns (loss, flat gradient) at x + t d.  Returns
    (loss, gradient, t, evaluations)."""
    d_norm = np.abs(d).max()
    f_new, g_new = evaluate(t)
    evals, it = 1, 0
    new = _Point(t, f_new, g_new, g_new.dot(d))
    prev = _Point(0, f, g.copy(), gtd)
    done = False
    bracket = None
    while it < max_ls:      # bracketing: grow t until an interval holds a Wolfe point
        if new.f > f + c1 * new.t * gtd or (it > 1 and new.f >= prev.f):
            bracket = [prev, new]
            break
        if abs(new.gtd) <= -c2 * gtd:
            bracket, done = [new], True
            break
        if new.gtd >= 0:
            bracket = [prev, new]
            break
        t_next = _cubic_min(prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd,
                            bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10))
        prev = new
        f_new, g_new = evaluate(t_next)
        evals += 1
        new = _Point(t_next, f_new, g_new, g_new.dot(d))
        it += 1
    if it == max_ls:
        bracket = [_Point(0, f, g, None), new]
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    insufficient = False
    while not done and it < max_ls:     # zoom: shrink the bracket around a Wolfe point
        a, b = bracket[0], bracket[1]
        if abs(b.t - a.t) * d_norm < tolerance_change:
            break
        t_try = _cubic_min(a.t, a.f, a.gtd, b.t, b.f, b.gtd)
        top, bottom = max(a.t, b.t), min(a.t, b.t)
        eps = 0.1 * (top - bottom)
        if min(top - t_try, t_try - bottom) < eps:   # too close to an end: move inside
            if insufficient or t_try >= top or t_try <= bottom:
                t_try = top - eps if abs(t_try - top) < abs(t_try - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t_try)
        evals += 1
        it += 1
        new = _Point(t_try, f_new, g_new, g_new.dot(d))
        if new.f > f + c1 * new.t * gtd or new.f >= bracket[low].f:
            bracket[high] = new
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if abs(new.gtd) <= -c2 * gtd:
                done = True
            elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = new
    best = bracket[low]
    return best.f, best.g, best.t, evals


class LBFGS(Optimizer):
    """torch.optim.LBFGS: limited-memory BFGS over all parameters as one flat vector.

    ``step(closure)`` runs up to `max_iter` iterations (at most `max_eval` closure calls);
    each builds a direction from the last `history_size` curvature pairs (two-loop
    recursion) and moves along it by `lr` (the first iteration by
    ``min(1, 1 / |g|_1) * lr``), or by the step the strong-Wolfe line search finds when
    ``line_search_fn="strong_wolfe"``.  It stops early when ``max|g| <= tolerance_grad``
    or the step or the loss change falls below `tolerance_change`.

    Args:
        params: the parameters (one param group only, as torch).  Complex parameters are
            optimised as their real views.
        lr, max_iter, max_eval (default ``max_iter * 5 // 4``), tolerance_grad,
            tolerance_change, history_size, line_search_fn: as torch.
    State (on the first parameter, as torch): ``func_evals``, ``n_iter``, ``d``, ``t``,
    ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``,
    ``al``.
    Raises:
        ValueError: lr < 0, or more than one param group (torch's message).
        RuntimeError: a line_search_fn other than None or "strong_wolfe" (at step, as torch).
        TypeError: step() without a closure.
        TraceError: step() inside `tg.compile` (see the module docstring).
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None):
        check_hyper("LBFGS", lr=lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ---- the flat vector ---------------------------------------------------------------
    @staticmethod
    def _real(arr: np.ndarray) -> np.ndarray:
        return arr.view(arr.real.dtype) if np.iscomplexobj(arr) else arr

    def _flat_grad(self) -> np.ndarray:
        parts = []
        for p in self._params:
            g = (np.zeros(p.shape, p.dtype.numpy) if p.grad is None
                 else np.asarray(p.grad._concrete("LBFGS.step")))
            parts.append(self._real(np.ascontiguousarray(g)).reshape(-1))
        return np.concatenate(parts)

    def _flat_params(self) -> list:
        return [np.array(p._concrete("LBFGS.step")) for p in self._params]

    def _move(self, t, d: np.ndarray) -> None:
        """p += t * d (the slice of d for each parameter), in place as torch's add_."""
        offset = 0
        for p in self._params:
            arr = np.asarray(p._concrete("LBFGS.step"))
            real = self._real(arr)
            n = real.size
            new = (real + (d[offset:offset + n] * t).reshape(real.shape).astype(real.dtype))
            p.copy_(Tensor(new.view(arr.dtype) if np.iscomplexobj(arr) else new))
            offset += n

    def _restore(self, saved: list) -> None:
        for p, arr in zip(self._params, saved):
            p.copy_(Tensor(arr))

    # ---- step --------------------------------------------------------------------------
    def step(self, closure=None):
        """Run the L-BFGS iterations (torch's LBFGS.step); returns the closure's first loss.

        Args:
            closure: re-evaluates the model, calls ``backward()`` and returns the loss
                (required; run with grad enabled).
        """
        if closure is None:
            raise TypeError("LBFGS.step() requires a closure that re-evaluates the model and "
                            "returns the loss (as torch.optim.LBFGS)")
        if _state.local.tracer is not None:
            raise TraceError(
                "LBFGS.step cannot run inside tg.compile: its iterations and line search "
                "branch on loss and gradient values. Call opt.step(closure) eagerly; the "
                "closure itself may be a tg.compile'd function")
        group = self.param_groups[0]
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")

        def evaluate():
            with enable_grad():
                value = closure()
            return value

        with no_grad():
            return self._run(group, evaluate)

    def _run(self, group: dict, evaluate):
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if np.abs(g).max() <= tol_grad:
            return orig_loss
        arr = lambda key: None if state.get(key) is None else state[key].numpy().copy()  # noqa
        d, t = arr("d"), state.get("t")
        dirs = [x.numpy().copy() for x in state.get("old_dirs", [])]
        stps = [x.numpy().copy() for x in state.get("old_stps", [])]
        ro, h_diag = list(state.get("ro", [])), state.get("H_diag")
        prev_g, prev_loss = arr("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, dirs, stps, ro, h_diag = -g, [], [], [], 1
            else:
                d, h_diag = self._direction(state, g, prev_g, d, t, dirs, stps, ro, h_diag,
                                            history)
            prev_g = g.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / np.abs(g).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = g.dot(d)
            if gtd > -tol_change:        # not a descent direction
                break
            used = 0
            if group["line_search_fn"] is not None:
                start = self._flat_params()

                def along(step_t):
                    self._move(step_t, d)
                    value = float(evaluate())
                    grad = self._flat_grad()
                    self._restore(start)
                    return value, grad
                loss, g, t, used = _strong_wolfe(along, t, d, loss, g, gtd,
                                                 max_ls=max_eval - evals)
                self._move(t, d)
                converged = np.abs(g).max() <= tol_grad
            else:
                self._move(t, d)
                converged = False
                if n_iter != max_iter:   # the last iteration's loss is never re-evaluated
                    loss = float(evaluate())
                    g = self._flat_grad()
                    converged = np.abs(g).max() <= tol_grad
                    used = 1
            evals += used
            state["func_evals"] += used
            if (n_iter == max_iter or evals >= max_eval or converged
                    or np.abs(d * t).max() <= tol_change or abs(loss - prev_loss) < tol_change):
                break
        state.update(d=Tensor(d), t=t, old_dirs=[Tensor(x) for x in dirs],
                     old_stps=[Tensor(x) for x in stps], ro=ro, H_diag=h_diag,
                     prev_flat_grad=Tensor(prev_g), prev_loss=prev_loss)
        return orig_loss

    @staticmethod
    def _direction(state, g, prev_g, d, t, dirs, stps, ro, h_diag, history):
        """Record the curvature pair of the last step (when y.s > 1e-10) and return the
        two-loop-recursion direction -H g and the new initial scaling H_diag."""
        y = g - prev_g
        s = d * t
        ys = y.dot(s)
        if ys > 1e-10:
            if len(dirs) == history:
                dirs.pop(0), stps.pop(0), ro.pop(0)
            dirs.append(y)
            stps.append(s)
            ro.append(1.0 / ys)
            h_diag = ys / y.dot(y)
        al = state.setdefault("al", [None] * history)
        q = -g
        for i in range(len(dirs) - 1, -1, -1):
            al[i] = stps[i].dot(q) * ro[i]
            q = q - dirs[i] * al[i]
        r = q * h_diag
        for i in range(len(dirs)):
            be_i = dirs[i].dot(r) * ro[i]
            r = r + stps[i] * (al[i] - be_i)
        return r, h_diag
