"""Importing this package registers every op family in the registry (a decomposition names
the ops it uses only when it runs, so the order of these imports does not matter)."""
from . import (binary, complex, conv, index, rnn,  # noqa: F401
               products, linalg, norms,          # matrix products, torch.linalg, norms
               nn, losses, normalization,        # torch.nn.functional
               random, reduce, scans, scatter, host,  # host: hooks and autograd.Function nodes
               shape, rearrange, diagonal, pad, creation,
               sort, special, strided, unary,  # strided: as_strided
               division, closeness,               # floor_divide; isclose, allclose, equal
               combine, bucket,                   # hstack, meshgrid, addmm, cdist ...; searchsorted, histc
               combine_more,                      # gcd, lcm, cov, corrcoef, rot90, take, tensor_split, block_diag
               math_more, index_more,             # deg2rad, ldexp, float_power, nextafter, renorm, addr; index_copy, put, hsplit
               bitcast)                           # view_dtype: Tensor.view(dtype)
