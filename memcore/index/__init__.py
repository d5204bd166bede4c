"""Vector math and the column table, pure (no I/O): neighbour search (FAISS or an exact
scan), the pass's similar-pair partition, the BM25 text index with rank fusion, and a
namespace's memories as numpy columns. Built on :mod:`memcore.core`'s models; the
consolidation algorithm (:mod:`memcore.consolidation`) builds on it."""
