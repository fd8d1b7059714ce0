"""Small pieces several test files share (tests/ is on sys.path through conftest.py)."""
from html.parser import HTMLParser

import tracegrad.nn.functional as F


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
