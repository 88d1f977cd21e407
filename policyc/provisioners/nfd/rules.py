"""The nfd provisioner's rules on a policy: what Node Feature Discovery's master refuses though its CRD accepts it
(PCI IDs in another form than NFD reports, a further term's feature name, an expression's values, labels and taints
NFD does not set), and pools whose matches nothing tells apart.

A label or taint NFD does not set is an error here, not a warning as for a static pool: no script sets it, so a node
of the pool never has the label, and never loses its registration taint (`nodes/release.sh` waits for every taint).
Taint effects and label values NFD also refuses never get this far: the language takes only valid ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import combinations

from policyc.checks.label_domains import outside_kubernetes
from policyc.diagnostics import Diagnostic, Path, diag
from policyc.ir import Cluster, Pool
from policyc.k8s.nfd import (
    nfd_refuses_domain,
    nfd_refuses_label,
    nfd_refuses_taint,
    own_key_hint,
    pools_named,
)
from policyc.provisioners.nfd.backend import NAME, PCI_VENDORS, Hardware, hardware, matched, settings_of
from policyc.provisioners.nfd.settings import MatchExpression

PCI_ID = re.compile(r"[0-9a-f]{4}")
"""A PCI vendor, device or class ID as NFD reports it (its `pci.device` attributes)."""
PCI_EXAMPLES = {"vendor": "10de", "device": "2330", "class": "0302"}
"""An ID of each kind as lspci -nn prints it, for a hint."""
FEATURE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+")
"""A feature's name: <domain>.<feature>."""
KNOWN_FEATURES = ("pci.device", "usb.device", "kernel.version", "kernel.loadedmodule", "system.dmiid",
                  "system.osrelease", "system.name")  # fmt: skip
"""Features NFD's worker reports (the shared fact sheet), for the hint of a misspelt one."""
INTEGER = re.compile(r"[+-]?[0-9]+")
"""An integer as NFD reads one (Go's strconv.Atoi)."""
NO_VALUE = frozenset({"Exists", "DoesNotExist", "IsTrue", "IsFalse"})
ONE_INTEGER = frozenset({"Gt", "Ge", "Lt", "Le"})
TWO_INTEGERS = frozenset({"GtLt", "GeLe"})


def _pools(cluster: Cluster) -> list[Pool]:
    return [p for p in cluster.pools if p.provisioning == NAME]


def _at(pool: Pool, *rest: str | int) -> Path:
    """A path into the pool's block `nfd`."""
    return (*pool.path, NAME, *rest)


def pci_ids(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in _pools(cluster):
        s = settings_of(pool)
        stated: list[tuple[str, Path, str]] = (
            [("vendor", _at(pool, "vendor"), s.vendor)] if s.vendor is not None else []
        )
        stated += [("device", _at(pool, "devices", j), d) for j, d in enumerate(s.devices)]
        stated += [("class", _at(pool, "classes", j), c) for j, c in enumerate(s.classes or ())]
        for what, path, value in stated:
            if not PCI_ID.fullmatch(value):
                yield diag(
                    "pci-id-form",
                    f"PCI {what} ID '{value}' of pool '{pool.name}' is not 4 lower-case hex digits, as NFD reports "
                    "it: it would match no node",
                    path,
                    hint=_pci_hint(what, value),
                )


def _pci_hint(what: str, value: str) -> str:
    bare = value.lower().removeprefix("0x")
    if PCI_ID.fullmatch(bare):
        return f"write '{bare}'"
    vendor, colon, device = bare.partition(":")
    if colon and PCI_ID.fullmatch(vendor) and PCI_ID.fullmatch(device):
        if what == "device":
            return f"write the device ID alone, '{device}' (lspci -nn prints [vendor:device]; the vendor is nfd.vendor)"
        return f"write the vendor ID alone, '{vendor}' (lspci -nn prints [vendor:device]; the device goes in devices)"
    if what == "class" and re.fullmatch(r"[0-9a-f]{2}", bare):  # a base class alone: NFD reports class and subclass
        return f"write the class with its subclass, 4 hex digits, e.g. '{bare}00' (and '{bare}02' for a 3D controller)"
    return f"write the {what} ID as lspci -nn prints it on a node, 4 hex digits such as {PCI_EXAMPLES[what]}"


def hardware_stated(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in _pools(cluster):
        s, hw = settings_of(pool), hardware(pool)
        if hw.vendor is None and (s.devices or s.classes):
            yield diag(
                "hardware-unstated",
                f"pool '{pool.name}' states PCI devices or classes but no PCI vendor: a device ID means nothing "
                "without its vendor",
                _at(pool),
                at_key=True,
                hint="add the vendor ID lspci -nn prints before the colon, nfd: {vendor: <4 hex digits>}",
            )
        elif hw.vendor is None and not hw.features:
            yield diag(
                "hardware-unstated",
                f"pool '{pool.name}' gives Node Feature Discovery nothing to recognise its nodes by: "
                + (f"policyc knows no PCI vendor ID of {pool.vendor}" if pool.vendor else "it has no GPU"),
                pool.path,
                hint=_unstated_hint(pool),
            )


def _unstated_hint(pool: Pool) -> str:
    if pool.vendor:
        return (
            "state its accelerators' PCI vendor and device IDs as lspci -nn prints them on a node ([vendor:device]), "
            "nfd: {vendor: <4 hex digits>, devices: [<4 hex digits>]}"
        )
    return (
        "state a further term only its nodes match, e.g. nfd: {features: [{feature: system.dmiid, matchExpressions: "
        "{product_name: {op: In, value: [<server model>]}}}]}, or the PCI vendor and device IDs of a device they have"
    )


def feature_names(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in _pools(cluster):
        for k, term in enumerate(settings_of(pool).features):
            if not FEATURE.fullmatch(term.feature):
                meant = [f for f in KNOWN_FEATURES if term.feature.lower() in (f, f.partition(".")[2])]
                yield diag(
                    "feature-form",
                    f"feature '{term.feature}' of pool '{pool.name}' is not <domain>.<feature>: nfd-master refuses "
                    "the rule",
                    _at(pool, "features", k, "feature"),
                    hint=f"write '{meant[0]}'"
                    if meant
                    else f"write a feature as NFD names it, one of {', '.join(KNOWN_FEATURES)}",
                )


def expression_values(cluster: Cluster) -> Iterator[Diagnostic]:
    for pool in _pools(cluster):
        for k, term in enumerate(settings_of(pool).features):
            for element, expression in term.match_expressions.items():
                wrong = _wrong_values(expression)
                if wrong is not None:
                    why, hint = wrong
                    yield diag(
                        "expression-values",
                        f"the expression on '{element}' of feature '{term.feature}' of pool '{pool.name}' {why}: "
                        "nfd-master refuses the rule",
                        _at(pool, "features", k, "matchExpressions", element, "value"),
                        hint=hint,
                    )


def _wrong_values(e: MatchExpression) -> tuple[str, str] | None:
    """(what is wrong, the hint) of an expression whose values its operator does not take (NFD's validation of a
    match expression), else None."""
    values = e.value
    if e.op in NO_VALUE:
        return (f"has values, which {e.op} takes none of", "remove value") if values else None
    if e.op in ONE_INTEGER:
        if len(values) != 1 or not INTEGER.fullmatch(values[0]):
            return f"{e.op} takes one integer, not {values}", "give one integer, e.g. value: ['8']"
        return None
    if e.op in TWO_INTEGERS:
        if len(values) != 2 or not all(INTEGER.fullmatch(v) for v in values) or int(values[0]) >= int(values[1]):
            return f"{e.op} takes two integers, the lower first, not {values}", "give the bounds, e.g. ['1', '8']"
        return None
    return (f"has no value, which {e.op} needs", "give one value or more, or use op Exists") if not values else None


def domain_refused(cluster: Cluster) -> Iterator[Diagnostic]:
    """The policy's domain NFD refuses (one under node-restriction.kubernetes.io, for Cluster API's label sync): said
    once, at the domain; `nfd_labels_and_taints` leaves its keys to this rule."""
    pools = _pools(cluster)
    why = nfd_refuses_domain(cluster.keys.domain)
    if pools and why is not None:
        yield diag(
            "domain-nfd-refuses",
            f"the policy's domain '{cluster.keys.domain}' is one NFD sets nothing under ({why}): no node of "
            f"{pools_named([p.name for p in pools])} would have their usage, tier and pool labels or their usage "
            "taint, and each would keep its registration taint for ever",
            ("spec", "domain"),
            hint=f"use a domain of your own outside kubernetes.io, e.g. {outside_kubernetes(cluster.keys.domain)}",
        )


def nfd_labels_and_taints(cluster: Cluster) -> Iterator[Diagnostic]:
    """The labels and taints of pools matched by hardware that NFD does not set, but those under the policy's domain
    (`domain_refused`)."""
    domain = cluster.keys.domain + "/"
    for pool in _pools(cluster):
        for key in pool.labels:
            why = None if key.startswith(domain) else nfd_refuses_label(key)
            if why is not None:
                yield diag(
                    "label-nfd-refuses",
                    f"label '{key}' of pool '{pool.name}' is not one NFD sets ({why}): no node of the pool would have "
                    "it",
                    (*pool.path, "labels", key),
                    at_key=True,
                    hint=own_key_hint(key, "the workloads that select it"),
                )
        for t in pool.taints:
            why = None if t.key.startswith(domain) else nfd_refuses_taint(t.key)
            if why is not None:
                yield diag(
                    "taint-nfd-refuses",
                    f"taint '{t.key}' of pool '{pool.name}' is not one NFD sets ({why}): a node of the pool would keep "
                    "its registration taint for ever",
                    (*pool.path, "taints"),
                    hint=own_key_hint(t.key, "the tolerations of the workloads that run on the pool"),
                )


def overlaps(cluster: Cluster) -> Iterator[Diagnostic]:
    """Two pools overlap unless their matches provably exclude each other (`apart`): a node would get both rules'
    labels, two values of one pool label among them, and nothing says which wins. A pool with nothing to match is
    `hardware_stated`'s."""
    pools = [(p, hw) for p in _pools(cluster) if (hw := hardware(p)).vendor is not None or hw.features]
    for (a, hw_a), (b, hw_b) in combinations(pools, 2):
        if not apart(hw_a, hw_b):
            yield diag(
                "hardware-overlap",
                f"pools '{a.name}' and '{b.name}' are matched by the same hardware ({matched(hw_b)}): a node that has "
                "it would get the labels and taints of both",
                _at(b) if b.provisioning_settings is not None else b.path,
                related=a.path,
                hint=f"tell them apart: the PCI device IDs of each pool's GPU in nfd.devices (lspci -nn on a node), or "
                f"a further term in nfd.features that only one matches; or merge '{b.name}' into '{a.name}'",
            )


def others_nodes(cluster: Cluster) -> Iterator[Diagnostic]:
    """A pool matched by its PCI device alone whose rule the nodes of a pool of another provisioner match too: any
    device of their GPU vendor, or the same GPU product. NFD applies a rule to every node, named or not."""
    others = [p for p in cluster.pools if p.provisioning != NAME and p.vendor in PCI_VENDORS]
    for pool in _pools(cluster):
        hw = hardware(pool)
        if hw.vendor is None or hw.features:
            continue
        for other in others:
            if PCI_VENDORS[other.vendor] != hw.vendor or (hw.devices and other.product != pool.product):
                continue
            yield diag(
                "hardware-overlap",
                f"the nodes of {other.provisioning} pool '{other.name}' ({other.product}) match pool '{pool.name}' "
                f"({matched(hw)}): they would get the labels and taints of both",
                _at(pool) if pool.provisioning_settings is not None else pool.path,
                related=other.path,
                hint=f"give '{pool.name}' a further term in nfd.features that the nodes of '{other.name}' do not "
                f"match"
                + ("" if hw.devices else ", or the PCI device IDs of its GPU in nfd.devices (lspci -nn on a node)")
                + f"; or move '{other.name}' to nfd too",
            )


def apart(a: Hardware, b: Hardware) -> bool:
    """Whether no node matches both: different PCI vendors, device IDs or classes (a node's accelerators all of one
    model), or a further term on the same feature whose expressions on one element exclude each other."""
    if (
        a.vendor is not None
        and b.vendor is not None
        and (a.vendor != b.vendor or _disjoint(a.devices, b.devices) or _disjoint(a.classes, b.classes))
    ):
        return True
    return any(
        ta.feature == tb.feature and _excluding(ta.match_expressions, tb.match_expressions)
        for ta in a.features
        for tb in b.features
    )


def _disjoint(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two value lists, each empty for any value, share no value."""
    return bool(a) and bool(b) and not set(a) & set(b)


EXCLUSIVE = {("Exists", "DoesNotExist"), ("IsTrue", "IsFalse")}
"""Operators without values that no one value meets both of (either way round)."""


def _excluding(a: dict[str, MatchExpression], b: dict[str, MatchExpression]) -> bool:
    """Whether an element has expressions in both that no one value meets: In with disjoint values, or In with
    values all of which the other's NotIn names, or Exists with DoesNotExist, IsTrue with IsFalse."""
    for element in a.keys() & b.keys():
        x, y = a[element], b[element]
        if (x.op, y.op) in EXCLUSIVE or (y.op, x.op) in EXCLUSIVE:
            return True
        if x.op == y.op == "In" and _disjoint(tuple(x.value), tuple(y.value)):
            return True
        for i, n in ((x, y), (y, x)):
            if i.op == "In" and n.op == "NotIn" and set(i.value) <= set(n.value):
                return True
    return False


CHECKS = (pci_ids, hardware_stated, feature_names, expression_values, domain_refused, nfd_labels_and_taints, overlaps,
          others_nodes)  # fmt: skip
