"""Small interfaces between memcore's logic and the models behind it.

Each production implementation is one model call per *batch* (a turn's facts,
a cluster of memories), never one per fact. The offline implementations are
deterministic rules; the OpenAI-compatible ones speak to any chat endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memcore.core.models import Episode, Frame, Kind, Relation


class ExtractedFact(BaseModel):
    """A short, self-contained statement extracted from one turn."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=2000)
    kind: Kind = Kind.KNOWLEDGE
    importance: int = Field(default=5, ge=1, le=10, description="rated once, 1-10")
    explicit: bool = False
    source: str = Field(description="id of the episode the fact came from")
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    expires_at: datetime | None = None
    relation: Relation | None = None
    frame: Frame | None = None
    frame_read: bool = False  # a language pack read it (frame None: it found no attribute)


class Op(StrEnum):
    """The write path's decision for one fact (Mem0's vocabulary)."""

    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NOOP = "NOOP"


@dataclass(frozen=True)
class Neighbour:
    """A memory shown to the decider under a short integer id."""

    memory_id: str
    text: str
    similarity: float
    frame: Frame | None = None  # the memory's structure, when its language pack read one


@dataclass(frozen=True)
class DecisionRequest:
    """One fact with the neighbours the decider may touch (and nothing else)."""

    fact: str
    neighbours: Sequence[Neighbour]


@dataclass(frozen=True)
class Decision:
    """The decider's verdict for one fact. ``target`` indexes the shown neighbours."""

    op: Op
    target: int | None = None
    text: str | None = None
    reason: str = ""
    # An ADD the decider could not vouch for (its answer was unusable): the fact is kept,
    # but as a candidate that needs more support, whatever its explicitness.
    candidate: bool = False


class Verdict(StrEnum):
    """How two near-identical memories relate."""

    SAME = "same"
    CONTRADICTS = "contradicts"
    DISTINCT = "distinct"


@dataclass(frozen=True)
class ClusterRequest:
    """A neighbourhood sent to the merger in one call.

    ``texts`` are the *original* fact texts of the members to merge (never an
    earlier merged text); ``pairs`` are borderline pairs (indices into
    ``pair_texts``) whose relation the model must judge.
    """

    texts: Sequence[str]
    pair_texts: Sequence[tuple[str, str]] = ()


@dataclass
class ClusterOutcome:
    """The merger's answer for one cluster."""

    merged_text: str | None
    verdicts: list[Verdict] = field(default_factory=list)
    reason: str = ""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit float32 vectors in one batched call."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array of unit rows."""
        ...


@runtime_checkable
class Extractor(Protocol):
    """Extracts candidate facts from a batch of turns in one call."""

    def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
        """Facts of all ``episodes``; each fact names its source episode."""
        ...


@runtime_checkable
class Decider(Protocol):
    """Chooses ADD / UPDATE / DELETE / NOOP for a batch of facts in one call."""

    def decide(self, requests: Sequence[DecisionRequest]) -> list[Decision]:
        """One decision per request, in order."""
        ...


@runtime_checkable
class Merger(Protocol):
    """Writes merged texts and judges borderline pairs, one call per batch of clusters."""

    def merge(self, clusters: Sequence[ClusterRequest]) -> list[ClusterOutcome]:
        """One outcome per cluster, in order."""
        ...

    def summarize(self, groups: Sequence[Sequence[str]]) -> list[str]:
        """One summary per group of original texts."""
        ...
