"""The contract between producers and workers: task names, payloads and the Celery
settings both sides share. Importing this package has no side effects."""
