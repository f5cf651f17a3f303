"""One module per harness, and the registry of their names."""
