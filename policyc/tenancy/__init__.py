"""Tenant admission: each tenant held to its placement contract when its pods and workloads are created.

- `grant`: what the policy grants each workload class (pools, so tolerations), the ground of the contract;
- `contract`: a tenant's contract as admission rules, in CEL and in Python side by side, and what the tenant's
  policies do with an object (`admit`);
- `injection`: what the mutating policy injects into a pod that names a workload class;
- `policies`: the ValidatingAdmissionPolicy and MutatingAdmissionPolicy objects, with their bindings;
- `proof`: the policies admit the tenant's own templates and refuse pods that break its contract.

The scheduler backend, which says how pods join a tenant's queue, is passed in by the pipeline.
"""
