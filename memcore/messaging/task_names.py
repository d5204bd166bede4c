"""Task names shared by producers and workers (producers never import ``workers``)."""

INGEST = "memcore.ingest"
CONSOLIDATE = "memcore.consolidate"
CONSOLIDATE_BATCH = "memcore.consolidate_batch"
CONSOLIDATE_REDUCE = "memcore.consolidate_reduce"
SCHEDULE = "memcore.schedule_due"
MAINTAIN = "memcore.maintain"
NOOP = "memcore.noop"

INGEST_QUEUE = "ingest"
"""The queue of the write path (INGEST, SCHEDULE): the ingest workers consume it."""
CONSOLIDATE_QUEUE = "consolidate"
"""The queue of passes and maintenance: the consolidate workers consume it."""
