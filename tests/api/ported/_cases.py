"""The ported programs' reference runs: fixed weights, fixed data, the first few losses.

Each case builds a program's model from `_reference.reference_weights` (the same numbers in
both libraries) and returns its first losses.  `run_torch.py` prints them under torch;
tests/api/test_ported_*.py compare tracegrad's (eager and compiled) with those printed.
"""
import actor_critic
from _reference import reference_weights


def actor_critic_case(episodes: int = 4):
    return actor_critic.train(episodes, fixed_actions=True, init=reference_weights(0))


CASES = {"actor_critic": actor_critic_case}


def style_case(steps: int = 4, compiled: bool = False, dtype: str = "float64"):
    import numpy as np
    import style_transformer
    rng = np.random.default_rng(3)
    images = rng.uniform(0, 255, (steps, 2, 3, 16, 16)).astype(np.float32)
    style = rng.uniform(0, 255, (1, 3, 16, 16)).astype(np.float32)
    init = reference_weights(1, std=0.05)
    return style_transformer.train(images, style, steps, init=init, compiled=compiled,
                                   dtype=dtype)


CASES["style_transformer"] = style_case
