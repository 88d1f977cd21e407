"""Kubernetes primitives owned by policyc: syntax validators, quantities and scheduling semantics.

Plain functions over Kubernetes JSON dicts; no Kubernetes client.
"""
