"""Performance harnesses, run from a checkout as ``python -m benchmarks.bench_<name>``; the real
servers they share with the tests are in ``harness``."""
