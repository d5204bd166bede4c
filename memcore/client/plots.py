"""Pictures of a namespace (``memcore plot``): matplotlib, an optional extra.

matplotlib is imported lazily with the Agg backend (no display needed); without
it :func:`require_matplotlib` raises :class:`PlotsUnavailable` with the install hint.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcore.core.config import ConsolidationConfig
from memcore.core.scoring import decayed_confidence, half_life_days, memory_score, retention

if TYPE_CHECKING:
    from memcore.core.models import Memory
    from memcore.store import MemoryStore, VersionInfo

INSTALL_HINT = "matplotlib is not installed: pip install 'memcore[plot]'"


class PlotsUnavailable(RuntimeError):
    """matplotlib is missing."""


def require_matplotlib() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, or PlotsUnavailable."""
    try:
        import matplotlib
    except ImportError as exc:
        raise PlotsUnavailable(INSTALL_HINT) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def retention_curves(config: ConsolidationConfig, out: Path, days: int = 400) -> Path:
    """Two panels: confidence decay per kind (half-lives, with min_confidence)
    and Ebbinghaus retention per strength (with the floor)."""
    plt = require_matplotlib()
    xs = list(range(days + 1))
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for kind in config.half_lives_days:
        hl = half_life_days(kind, config)
        left.plot(xs, [decayed_confidence(1.0, d, hl) for d in xs], label=f"{kind} ({hl:g} d)")
    left.axhline(config.min_confidence, color="red", linestyle="--",
                 label=f"min_confidence {config.min_confidence:g}")
    left.set(title="Confidence by kind (from 1.0 at last support)", xlabel="days since support",
             ylabel="confidence", ylim=(0, 1.02))
    left.legend(fontsize=8)
    strengths = sorted({1.0, 2.0, 5.0, config.strength_cap})
    for s in strengths:
        right.plot(xs, [retention(1.0, d * 24.0, s, config.tau_hours) for d in xs],
                   label=f"strength {s:g}")
    right.axhline(config.floor, color="red", linestyle="--", label=f"floor {config.floor:g}")
    right.set(title=f"Retention, importance 1 (tau {config.tau_hours / 24:g} d)",
              xlabel="days since use", ylabel="retention", yscale="log")
    right.legend(fontsize=8)
    return _save(plt, fig, out)


def score_distribution(scores: Sequence[float], floor: float, out: Path,
                       title: str = "Retention scores") -> Path:
    """Histogram of retention scores with the tombstone floor marked."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if scores:
        ax.hist(list(scores), bins=min(50, max(5, len(scores) // 4)), color="steelblue")
    else:
        ax.text(0.5, 0.5, "no live memories", ha="center", transform=ax.transAxes)
    ax.axvline(floor, color="red", linestyle="--", label=f"floor {floor:g}")
    below = sum(1 for s in scores if s < floor)
    ax.set(title=f"{title} ({len(scores)} memories, {below} below the floor)",
           xlabel="score", ylabel="memories")
    ax.legend()
    return _save(plt, fig, out)


def store_sizes(versions: Sequence[VersionInfo], current: int, out: Path) -> Path:
    """Memories per committed snapshot version (the current one highlighted)."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if versions:
        labels = [f"v{v.version}" for v in versions]
        colors = ["darkorange" if v.version == current else "steelblue" for v in versions]
        ax.bar(labels, [v.memories for v in versions], color=colors)
    else:
        ax.text(0.5, 0.5, "no snapshot yet (no consolidation pass)", ha="center",
                transform=ax.transAxes)
    ax.set(title=f"Store size per snapshot version (current v{current})", xlabel="version",
           ylabel="memories")
    return _save(plt, fig, out)


def live_scores(memories: Sequence[Memory], now: datetime,
                config: ConsolidationConfig) -> list[float]:
    """Retention scores of the live memories at ``now``."""
    return [memory_score(m, now, config) for m in memories if m.live]


def plot_namespace(store: MemoryStore, namespace: str, out_dir: Path, now: datetime,
                   config: ConsolidationConfig) -> list[Path]:
    """Write retention.png, scores.png and versions.png for ``namespace`` into ``out_dir``."""
    require_matplotlib()
    out_dir.mkdir(parents=True, exist_ok=True)
    memories = list(store.records.iter_memories(namespace))
    return [
        retention_curves(config, out_dir / "retention.png"),
        score_distribution(live_scores(memories, now, config), config.floor,
                           out_dir / "scores.png", title=f"Retention scores of {namespace}"),
        store_sizes(store.snapshots.versions(namespace), store.current_version(namespace),
                    out_dir / "versions.png"),
    ]


def _save(plt: Any, fig: Any, out: Path) -> Path:
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
