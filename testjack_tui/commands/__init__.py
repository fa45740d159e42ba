"""One module per CLI command group; each has register(app)."""
