"""The eval harness (`localmem eval`, SPEC section 10) and its bundled fixtures."""
