"""Developer tooling: the local stack, the demo, embedded Redis, plots and benchmarks."""
