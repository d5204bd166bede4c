"""The HTTP service (``memcore serve``): FastAPI app, API-key auth, routes under ``/v1``."""

from memcore.api.app import create_app

__all__ = ["create_app"]
