"""Small pieces several test files share (tests/ is on sys.path through conftest.py)."""
import itertools
from html.parser import HTMLParser

import pytest

import tracegrad.nn.functional as F


def tiered(*axes, keep):
    """pytest params of every combination of `axes` (one tuple per combination, ids
    joined by "-"); the combinations not in `keep` are marked slow: `make test` runs `keep`,
    chosen so that each value of each axis still runs there, and `make test-all` runs all.

        @pytest.mark.parametrize("where,executor", tiered(WHERES, EXECUTORS, keep=...))
    """
    combos = list(itertools.product(*axes))
    unknown = [k for k in keep if k not in combos]
    assert not unknown, f"tiered: {unknown} is not a combination of the axes"
    return [pytest.param(*c, id="-".join(map(str, c)),
                         marks=[] if c in keep else [pytest.mark.slow]) for c in combos]


def classification_step(model, opt):
    """The canonical training step: zero_grad, cross-entropy of `model(x)` against class
    indices `y`, backward, optimizer step; returns the loss."""
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


class HTMLElements(HTMLParser):
    """Every start tag as (tag, attribute dict), in document order."""

    def __init__(self, text: str):
        super().__init__()
        self.items = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.items.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.items.append((tag, dict(attrs)))

    def with_class(self, cls: str) -> list:
        return [a for _, a in self.items if cls in (a.get("class") or "").split()]
