"""memcore's dev tooling, outside the runtime package (the ``bench`` extra): the benchmarks
(``memcore bench ...``: each writes JSON, a Markdown table and a PNG plot), the demo, the
phrasing tool, load generators, private Redis servers for tests and benchmarks, and the
benchmarks' Celery app. It imports memcore; memcore never imports it
(docs/architecture.md)."""
