"""The web inspector served under ``/ui`` by ``memcore serve``."""
