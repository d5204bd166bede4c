"""Benchmarks (`memcore bench ...`): each writes JSON, a Markdown table and a PNG plot."""
