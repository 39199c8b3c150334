"""The memory store for coding agents: one SQLite database (SPEC section 5)."""
