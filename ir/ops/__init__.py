"""Importing this package registers every op family in the registry."""
from . import (binary, complex, conv, index, linalg, nn, random, reduce, scatter,  # noqa: F401
               shape, sort, special, unary)
