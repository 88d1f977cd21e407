"""Kubernetes primitives owned by policyc: syntax validators, quantities, scheduling semantics, the API server's
admission of a pod, what each version serves, object dependencies, CEL literals (`cel`) and the schemas of the custom
resources policyc emits (`crd_schemas`).

Plain functions over Kubernetes JSON dicts; no Kubernetes client.
"""
