"""Importing this package registers every op family in the registry."""
from . import binary, index, linalg, nn, random, reduce, shape, unary  # noqa: F401
