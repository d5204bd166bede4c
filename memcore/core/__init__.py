"""The pure core: data models, settings, scoring, text rules, vector math and the
consolidation plan/reduce. Nothing here does I/O or talks to Redis or a model."""
