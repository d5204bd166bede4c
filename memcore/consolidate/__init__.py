"""Consolidation pass orchestration (partition, fan out, reduce, commit) and scheduling."""
