"""memcore's Celery workers: the app, its configuration, tasks and beat schedule."""
