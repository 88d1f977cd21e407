"""A cluster as policyc reads it back: the objects of a kubectl dump, or of a live API server, by kind."""
