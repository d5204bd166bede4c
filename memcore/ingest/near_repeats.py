"""MinHash signatures (datasketch's) for near-verbatim repeats on the write path.

Its own module so that only the write path imports datasketch (and scipy under it):
the client and the CLI, which import ``memcore.core.text``, do not pay for it.
"""

from __future__ import annotations

import numpy as np
from datasketch import MinHash

from memcore.core.text import shingles


class MinHasher:
    """MinHash signatures estimating Jaccard similarity of word shingles."""

    def __init__(self, num_perm: int = 64, seed: int = 7) -> None:
        # The permutations are drawn once here, not for every signature.
        self.permutations = MinHash(num_perm=num_perm, seed=seed).permutations
        self.num_perm = num_perm

    def signature(self, text: str) -> np.ndarray:
        """The MinHash signature of ``text`` (over its word 3-grams)."""
        sketch = MinHash(num_perm=self.num_perm, permutations=self.permutations,
                         scheme="affine32")
        sketch.update_batch([gram.encode("utf-8") for gram in shingles(text)])
        return np.asarray(sketch.hashvalues)

    @staticmethod
    def jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> float:
        """Estimated Jaccard similarity of two signatures."""
        return float(np.mean(sig_a == sig_b))
