"""Keeping the store healthy: audit, gc, and the near-duplicate queue (dedupe)."""
