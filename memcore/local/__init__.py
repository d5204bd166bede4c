"""memcore on one machine without containers: the local stack of ``memcore up`` (Redis,
workers, beat, Flower, the HTTP API) and small local models on llama.cpp."""
