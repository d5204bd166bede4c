"""Task payloads: validated on entry, so a bad message fails at once and writes nothing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memcore.core.models import Episode, Identifier, Namespace


class IngestPayload(BaseModel):
    """A batch of turns of one namespace."""

    model_config = ConfigDict(extra="forbid")

    namespace: Namespace
    episodes: list[Episode] = Field(min_length=1, max_length=256)
    infer: bool = Field(default=True, description="False: store each trusted turn verbatim")
    erase_fence: int = Field(
        default=0, ge=0,
        description="the namespace's erase count when the turns were accepted "
                    "(store.fences.current): a worker drops them if an erase of the "
                    "namespace has run since (0: accepted before any erase)")
    erasures: int = Field(
        default=0, ge=0,
        description="the namespace's single-erase count when the turns were accepted "
                    "(store.erased.count): a worker leaves out the turns and facts a "
                    "memory, turn or forget erase after it removed (0: before any)")
    charge_to: Identifier | None = Field(
        default=None,
        description="the API key whose model-call budget the task's model calls are "
                    "charged to (memcore.api.rate_limits); None: no one's")

    def wire(self) -> dict[str, Any]:
        """The JSON-ready task argument. A turn without an expiry is sent without the
        ``expires_at`` key, so workers of the release before it (whose Episode rejects
        unknown keys) still take such turns during a rolling upgrade."""
        data = self.model_dump(mode="json")
        if data.get("charge_to") is None:  # likewise: older workers reject the key
            data.pop("charge_to", None)
        if not data.get("erasures"):
            data.pop("erasures", None)
        for episode in data["episodes"]:
            if episode.get("expires_at") is None:
                episode.pop("expires_at", None)
        return data

    @model_validator(mode="after")
    def _one_namespace(self) -> IngestPayload:
        for i, ep in enumerate(self.episodes):
            if ep.namespace != self.namespace:
                raise ValueError(
                    f"episodes.{i}.namespace: {ep.namespace!r} differs from {self.namespace!r}")
        return self


class ConsolidatePayload(BaseModel):
    """Run one consolidation pass of a namespace."""

    model_config = ConfigDict(extra="forbid")

    namespace: Namespace
    now: datetime | None = None
    full: bool = False
    pass_id: Identifier | None = None
