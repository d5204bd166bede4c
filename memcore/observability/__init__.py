"""Cross-cutting instrumentation: Prometheus metrics (and the model-call wrappers)."""
