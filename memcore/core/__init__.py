"""The pure core: data models, settings, scoring and text rules. Nothing here does I/O
or talks to Redis or a model; vector math is :mod:`memcore.index`, the consolidation
plan/reduce :mod:`memcore.consolidation`."""
