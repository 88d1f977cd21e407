"""policyc: a policy-as-code compiler for shared GPU Kubernetes clusters."""

__version__ = "0.1.0"
