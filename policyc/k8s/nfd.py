"""Which node labels and taints Node Feature Discovery's master sets (its namespace rules), for the provisioners whose
NodeFeatureRules label and taint nodes.

Source: kubernetes-sigs/node-feature-discovery v0.19.0 `pkg/apis/nfd/validate/validate.go` (the shared fact sheet,
`node-provisioning.md` section 2).
"""

from __future__ import annotations

NFD_API_VERSION = "nfd.k8s-sigs.io/v1alpha1"
NODE_FEATURE_RULE = "NodeFeatureRule"
NFD_LABEL_NAMESPACES = ("feature.node.kubernetes.io", "profile.node.kubernetes.io")
"""The namespaces under kubernetes.io where NFD sets labels (and their subdomains); it sets none elsewhere under it."""
NFD_TAINT_NAMESPACE = "feature.node.kubernetes.io"
"""The namespace under kubernetes.io where NFD sets taints (and its subdomains)."""


def _prefix(key: str) -> str:
    return key.rpartition("/")[0]


def _within(prefix: str, namespace: str) -> bool:
    """Whether `prefix` is `namespace` or one of its subdomains."""
    return prefix == namespace or prefix.endswith("." + namespace)


def _kubernetes(prefix: str) -> bool:
    return _within(prefix, "kubernetes.io")


def nfd_refuses_label(key: str) -> str | None:
    """Why NFD's master does not set a label of this key as written (None: it does)."""
    prefix = _prefix(key)
    if not prefix:
        return "NFD puts a label without a prefix under feature.node.kubernetes.io/"
    if _kubernetes(prefix) and not any(_within(prefix, ns) for ns in NFD_LABEL_NAMESPACES):
        return f"NFD sets no label under kubernetes.io but in {' and '.join(NFD_LABEL_NAMESPACES)}"
    return None


def nfd_refuses_taint(key: str) -> str | None:
    """Why NFD's master does not set a taint of this key (None: it does, once its enableTaints is on)."""
    prefix = _prefix(key)
    if not prefix:
        return "NFD sets no taint without a prefix"
    if _kubernetes(prefix) and not _within(prefix, NFD_TAINT_NAMESPACE):
        return f"NFD sets no taint under kubernetes.io but in {NFD_TAINT_NAMESPACE}"
    return None


def nfd_refuses_domain(domain: str) -> str | None:
    """Why NFD's master sets neither the labels nor the taints policyc puts under the policy's `domain` (None: it
    sets both)."""
    key = f"{domain}/x"
    return nfd_refuses_label(key) or nfd_refuses_taint(key)


def pools_named(names: list[str]) -> str:
    """ "pool 'a'" or "pools 'a', 'b'", for a message."""
    return ("pool " if len(names) == 1 else "pools ") + ", ".join(repr(n) for n in names)


def own_key_hint(key: str, users: str) -> str:
    """The hint for a key NFD refuses: the same key under a prefix of the user's own (example.org), here and in
    `users` (the workloads that select or tolerate it)."""
    return (
        f"use a key with a prefix of your own outside kubernetes.io, e.g. 'example.org/{key.rpartition('/')[2]}', "
        f"here and in {users}"
    )
