"""The program tests/api/test_swa_utils.py runs against torch 2.13: a small Linear +
BatchNorm1d + Linear model trained a few SGD steps under SWALR, averaged by
torch.optim.swa_utils.AveragedModel in four ways (default SWA, EMA through multi_avg_fn, a
custom avg_fn, use_buffers), then update_bn.  Written against a module `M` that is either
``torch`` or ``tracegrad``; tools/record_torch_swa.py prints torch's values.
"""
from __future__ import annotations

import numpy as np

R = np.random.default_rng(1616)
W1, B1 = np.round(R.uniform(-1, 1, (4, 3)), 2), np.round(R.uniform(-1, 1, 4), 2)
W2, B2 = np.round(R.uniform(-1, 1, (2, 4)), 2), np.round(R.uniform(-1, 1, 2), 2)
X = [np.round(R.uniform(-2, 2, (5, 3)), 2) for _ in range(4)]
Y = [np.round(R.uniform(-1, 1, (5, 2)), 2) for _ in range(4)]


def _model(M):
    nn = M.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    with M.no_grad():
        model[0].weight.copy_(M.tensor(W1, dtype=M.float32))
        model[0].bias.copy_(M.tensor(B1, dtype=M.float32))
        model[3].weight.copy_(M.tensor(W2, dtype=M.float32))
        model[3].bias.copy_(M.tensor(B2, dtype=M.float32))
    return model


def _values(model):
    return {k: v.detach().numpy().astype(np.float64).round(7).tolist()
            for k, v in model.state_dict().items()}


def run(M):
    """{name: values}: the lrs SWALR set, and each averaged model's state after training."""
    swa = M.optim.swa_utils
    model = _model(M)
    opt = M.optim.SGD([{"params": model[0].parameters()},
                       {"params": list(model[1].parameters()) + list(model[3].parameters()),
                        "lr": 0.2}], lr=0.1, momentum=0.5)
    sched = swa.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=3, anneal_strategy="cos")
    averaged = {
        "swa": swa.AveragedModel(model),
        "ema": swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.8)),
        "ema_avg_fn": swa.AveragedModel(model, avg_fn=swa.get_ema_avg_fn(0.7)),
        "custom": swa.AveragedModel(model, avg_fn=lambda a, p, n: 0.25 * a + 0.75 * p),
        "buffers": swa.AveragedModel(model, use_buffers=True),
    }
    lrs = []
    for x, y in zip(X, Y):
        opt.zero_grad()
        out = model(M.tensor(x, dtype=M.float32))
        M.nn.functional.mse_loss(out, M.tensor(y, dtype=M.float32)).backward()
        opt.step()
        sched.step()
        lrs.append([g["lr"] for g in opt.param_groups])
        for avg in averaged.values():
            avg.update_parameters(model)
    result = {"lrs": lrs, "model": _values(model)}
    for name, avg in averaged.items():
        result[name] = _values(avg)
        result[name + "_n"] = int(avg.n_averaged)
    loader = [(M.tensor(x, dtype=M.float32), 0) for x in X[:3]]
    swa.update_bn(loader, averaged["swa"])
    result["swa_after_update_bn"] = _values(averaged["swa"])
    result["swa_training_kept"] = averaged["swa"].training
    averaged["swa"].eval()
    result["swa_eval_out"] = averaged["swa"](M.tensor(X[0], dtype=M.float32)
                                             ).detach().numpy().astype(np.float64
                                                                       ).round(6).tolist()
    # SWALR alone: linear anneal, anneal_epochs 0, a scalar swa_lr
    lin_opt = M.optim.SGD([M.nn.Parameter(M.zeros(1))], lr=1.0)
    lin = swa.SWALR(lin_opt, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    zero_opt = M.optim.SGD([M.nn.Parameter(M.zeros(1))], lr=1.0)
    zero = swa.SWALR(zero_opt, swa_lr=0.3, anneal_epochs=0)
    seq_lin, seq_zero = [lin.get_last_lr()[0]], [zero.get_last_lr()[0]]
    for _ in range(6):
        lin_opt.step()
        lin.step()
        zero_opt.step()
        zero.step()
        seq_lin.append(lin.get_last_lr()[0])
        seq_zero.append(zero.get_last_lr()[0])
    result["swalr_linear"] = [round(v, 12) for v in seq_lin]
    result["swalr_zero_epochs"] = [round(v, 12) for v in seq_zero]
    return result
