"""The HTTP routes, one module per job."""
