"""`policyc import`: a starting ClusterPolicy from a running cluster (a kubectl dump, a live API server) or from a
directory of hand-written manifests. Every value it guessed carries a comment saying from what; every object it
could not express is listed at the top of the policy, never dropped."""
