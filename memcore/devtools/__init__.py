"""Conversation files for ``memcore ingest`` (``conversation_files``)."""
