"""The ported programs' reference runs: fixed weights, fixed data, the first few losses.

Each case builds a program's model from `_reference.reference_weights` (the same numbers in
both libraries) and returns its first losses.  `run_torch.py` prints them under torch;
tests/api/test_ported_*.py compare tracegrad's (eager and compiled) with those printed.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples"))
import actor_critic  # noqa: E402
from reference_cases import reference_weights as _set_weights  # noqa: E402


def reference_weights(seed: int, std: float = 0.1):
    """An `init(model)` giving every parameter the examples' NumPy-drawn reference values."""
    return lambda model: _set_weights(model, seed, std)


def actor_critic_case(episodes: int = 4):
    return actor_critic.train(episodes, fixed_actions=True, init=reference_weights(0))


CASES = {"actor_critic": actor_critic_case}


def style_case(steps: int = 4, compiled: bool = False, dtype: str = "float64"):
    import numpy as np
    import style_transformer
    rng = np.random.default_rng(3)
    images = rng.uniform(0, 255, (4, 2, 3, 12, 12)).astype(np.float32)   # steps <= 4
    style = rng.uniform(0, 255, (1, 3, 12, 12)).astype(np.float32)
    init = reference_weights(1, std=0.05)
    return style_transformer.train(images, style, steps, init=init, compiled=compiled,
                                   dtype=dtype)


CASES["style_transformer"] = style_case


def seq2seq_case(steps: int = 4, compiled: bool = False):
    """Pairs of random 'sentences' of 5 words + EOS; the target reverses the source."""
    import numpy as np
    import seq2seq_attention
    rng = np.random.default_rng(5)
    src = rng.integers(2, 12, (steps * 4, 6))
    src[:, -1] = seq2seq_attention.EOS_token
    tgt = src.copy()
    tgt[:, :-1] = src[:, -2::-1]
    losses, decoded, attn = seq2seq_attention.train((src, tgt), 12, steps,
                                                    init=reference_weights(2, std=0.2),
                                                    compiled=compiled)
    return losses + [float(attn)] + [float(v) for row in decoded for v in row]


CASES["seq2seq_attention"] = seq2seq_case


def vit_case(steps: int = 4, compiled: bool = False):
    import numpy as np
    import vit
    rng = np.random.default_rng(6)
    images = rng.standard_normal((steps * 4, 3, 16, 16)).astype(np.float32)
    labels = rng.integers(0, 5, steps * 4)
    losses, acc, prob, lr = vit.train(images, labels, steps, init=reference_weights(4),
                                      compiled=compiled)
    return losses + [acc, prob, lr]


CASES["vit"] = vit_case


def time_sequence_case(steps: int = 2, compiled: bool = False, max_iter: int = 6):
    """Sine waves of 24 points (8 of them: 5 train, 3 test), hidden 12, LBFGS max_iter 6:
    every closure's loss, each step's test loss and the sum of the last prediction."""
    import time_sequence
    return time_sequence.train(steps, hidden=12, L=24, N=8, future=6, max_iter=max_iter,
                               init=reference_weights(7, std=0.3), compiled=compiled,
                               log=lambda *a: None)


CASES["time_sequence"] = time_sequence_case


def vae_case(compiled: bool = False, epochs: int = 1):
    """8x8 images in [0, 1] (12 train, 8 test, batch 4), hidden 24, latent 3, eps drawn
    by NumPy: per-batch and mean train losses, the comparison grid's sum, the test loss
    and the sum of 64 decoded samples, per epoch."""
    import numpy as np
    import vae
    rng = np.random.default_rng(8)
    train = rng.uniform(0, 1, (12, 1, 8, 8)).astype(np.float32)
    test = rng.uniform(0, 1, (8, 1, 8, 8)).astype(np.float32)
    noise_rng = np.random.default_rng(9)
    return vae.main(train, test, lambda shape: noise_rng.standard_normal(shape, np.float32),
                    epochs=epochs, side=8, hidden=24, latent=3,
                    init=reference_weights(10, std=0.2), log=lambda *a: None,
                    compiled=compiled)


CASES["vae"] = vae_case


def gcn_case(epochs: int = 6):
    """A 40-node random graph (12 features, 3 classes), hidden 8, dropout off: per epoch
    train/val loss and accuracy, then test loss and accuracy; the model's repr last."""
    import gcn
    record, text = gcn.main(epochs=epochs, hidden=8, dropout=0.0, lr=0.1,
                            init=reference_weights(12, std=0.3), log=lambda *a: None)
    return record + [text]


CASES["gcn"] = gcn_case


WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "charlotte", "mia", "amelia",
         "harper", "evelyn", "abigail", "emily", "elizabeth", "mila", "ella", "avery",
         "sofia", "camila", "aria", "scarlett"]


def wavenet_case(steps: int = 4):
    """makemore's WaveNet on 20 names (block 8, emb 6, hidden 16, batch 8): 4 SGD steps'
    losses, the sum of their log10s, train/val losses in eval mode, a running mean's sum
    and two greedy samples."""
    import wavenet
    return wavenet.train(WORDS, steps=steps, init=reference_weights(13, std=0.3),
                         log=lambda *a: None)


CASES["wavenet"] = wavenet_case
