"""Executors for IR graphs: the NumPy interpreter and the JAX lowering."""
