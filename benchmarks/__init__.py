"""Side-by-side benchmarks (python -m benchmarks); models in models.py."""
