"""The tenants' admission policies: per tenant, a ValidatingAdmissionPolicy holding its pods and workloads to its
placement contract (`contract`), and its binding, whose validation actions follow the tenant's mode; and, where the
API server has MutatingAdmissionPolicy, one injecting a workload class's placement into the tenant's pods that name
it (`injection`).

The contract's values are written into the CEL as literals, one policy per tenant, rather than read from
parameter objects: a ConfigMap holds strings only (a list would need `split`, which CEL libraries outside the API
server lack), and a parameter object in the tenant's reach could widen its own policy. The binding selects the
tenant's namespaces by `kubernetes.io/metadata.name`, which the API server sets and no one can change.
"""

from __future__ import annotations

from policyc.artifacts import Manifest
from policyc.backends.interface import SchedulerBackend
from policyc.ir import Cluster, Tenant
from policyc.k8s.cel import literal
from policyc.k8s.objects import metadata
from policyc.tenancy import contract, injection

API_VERSION = "admissionregistration.k8s.io/v1"
NAMESPACE_NAME = "kubernetes.io/metadata.name"
ACTIONS = {"deny": ["Deny", "Audit"], "warn": ["Warn", "Audit"], "audit": ["Audit"]}
"""validationActions per admission mode (Deny and Warn may not be combined)."""


def policy_name(tenant: str) -> str:
    return f"policyc-tenant-{tenant}"


def emit(cluster: Cluster, backend: SchedulerBackend) -> dict[str, tuple[Manifest, ...]]:
    """Tenant -> its policies and bindings, for each tenant whose admission mode is not off (they go in the tenant's
    own file, `policyc.backends.kubernetes`); `backend` is the cluster's scheduler backend."""
    contracts, rules = contract.contracts(cluster, backend), contract.tenant_rules(cluster, backend)
    return {
        t.name: _objects(cluster, t, contracts[t.name], rules[t.name]) for t in cluster.tenants if t.name in contracts
    }


def _objects(
    cluster: Cluster, tenant: Tenant, c: contract.Contract, rules: list[contract.Rule]
) -> tuple[Manifest, ...]:
    name = policy_name(tenant.name)
    policy = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": metadata(name, cluster.name, labels={cluster.keys.tenant: tenant.name}),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": list(contract.matched_resources(c))},
            "variables": contract.variables(c),
            "validations": [{"expression": r.cel, "message": r.message, "reason": "Forbidden"} for r in rules],
        },
    }
    binding = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": metadata(name, cluster.name, labels={cluster.keys.tenant: tenant.name}),
        "spec": {
            "policyName": name,
            "validationActions": ACTIONS[c.mode],
            "matchResources": _namespaces(c.namespaces),
        },
    }
    return (
        Manifest(policy, (tenant.path,)),
        Manifest(binding, (tenant.path,)),
        *_injection(cluster, tenant, c),
    )


def _injection(cluster: Cluster, tenant: Tenant, c: contract.Contract) -> tuple[Manifest, ...]:
    api, classes = injection.api_version(cluster), c.injections
    if api is None or not classes:
        return ()
    name = f"policyc-inject-{tenant.name}"
    class_of = injection.class_of_cel(c.class_label, c.defaults)
    names = literal([i.workload for i in classes])
    policy = {
        "apiVersion": api,
        "kind": "MutatingAdmissionPolicy",
        "metadata": metadata(name, cluster.name, labels={cluster.keys.tenant: tenant.name}),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
                ]
            },
            "matchConditions": [{"name": "names-a-workload-class", "expression": f"({class_of}) in {names}"}],
            "variables": [{"name": "workloadClass", "expression": class_of}],
            "mutations": [
                {
                    "patchType": "JSONPatch",
                    "jsonPatch": {
                        "expression": f"variables.workloadClass != {literal(i.workload)} ? [] : "
                        + injection.mutation_cel(i)
                    },
                }
                for i in classes
            ],
            "reinvocationPolicy": "Never",
        },
    }
    binding = {
        "apiVersion": api,
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": metadata(name, cluster.name, labels={cluster.keys.tenant: tenant.name}),
        "spec": {"policyName": name, "matchResources": _namespaces(c.namespaces)},
    }
    return Manifest(policy, (tenant.path,)), Manifest(binding, (tenant.path,))


def _namespaces(namespaces: tuple[str, ...]) -> dict:
    """A selector of exactly these namespaces, by the label only the API server sets."""
    return {"namespaceSelector": {"matchExpressions": [{"key": NAMESPACE_NAME, "operator": "In",
                                                        "values": list(namespaces)}]}}  # fmt: skip
