"""The deterministic hashing embedder."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from memcore.adapters.hashing import HashingEmbedder
from memcore.core.interfaces import Embedder


def test_deterministic_unit_rows_of_the_right_shape() -> None:
    embedder = HashingEmbedder(dim=128)
    assert isinstance(embedder, Embedder) and embedder.name == "hash"
    texts = ["Caroline loves hiking.", "", "the and of", "Caroline loves hiking."]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, 128) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(vectors[0], vectors[3])
    np.testing.assert_array_equal(vectors, HashingEmbedder(dim=128).embed(texts))
    assert embedder.embed([]).shape == (0, 128)


def test_stable_across_processes() -> None:
    """blake2b, not the salted hash(): another interpreter gives the same vector."""
    code = ("from memcore.adapters.hashing import HashingEmbedder;"
            "print(HashingEmbedder(64).embed(['Caroline loves hiking'])[0].tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONHASHSEED": "123"}).stdout
    here = HashingEmbedder(64).embed(["Caroline loves hiking"])[0]
    np.testing.assert_allclose(np.array(eval(out)), here, atol=1e-7)


@pytest.mark.parametrize(("text", "paraphrase", "unrelated"), [
    ("Caroline loves hiking in the mountains", "Caroline enjoys going on hikes in mountains",
     "Melanie bought a new car"),
    ("I am revising for my exam in May", "revising for the May exams",
     "the cat sleeps on the sofa"),
    ("Caroline lives in Paris", "Caroline moved to Berlin", "Caroline painted a sunrise"),
])
def test_paraphrase_closer_than_unrelated(text: str, paraphrase: str, unrelated: str) -> None:
    a, b, c = HashingEmbedder().embed([text, paraphrase, unrelated])
    assert float(a @ b) > float(a @ c) + 0.2


def test_rejects_tiny_dim() -> None:
    with pytest.raises(ValueError, match="dim"):
        HashingEmbedder(dim=2)
