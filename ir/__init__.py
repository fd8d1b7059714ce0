"""tracegrad.ir: typed SSA graphs, the op registry, text printer and verifier."""
from . import ops as _ops  # noqa: F401  (registers every op)
from .builder import Builder
from .errors import DTypeError, IRError, ShapeError, TraceError, TracegradError
from .export import dump, to_dot, to_json
from .graph import Graph, Node, SourceLoc, Value
from .parser import IRParseError, parse
from .printer import print_graph
from .registry import REGISTRY, OpDef, defop, get
from .types import DType, TensorType
from .verifier import verify

__all__ = ["IRParseError", "parse", "Builder", "DType", "DTypeError", "Graph", "IRError", "Node", "OpDef", "REGISTRY",
           "ShapeError", "SourceLoc", "TensorType", "TraceError", "TracegradError", "Value",
           "defop", "dump", "get", "print_graph", "to_dot", "to_json", "verify"]
