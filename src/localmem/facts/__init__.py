"""The facts store: markdown topic files about the user (SPEC section 3). Standard library only."""
