"""The command line (`cli`, click commands only) and what its commands other than build and validate compute:
`explain` (the placement matrix, provenance, a manifest through admission), `report` (the capacity picture for a
review) and `init` (a starter policy).
"""
