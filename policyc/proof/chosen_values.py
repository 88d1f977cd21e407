"""The node a provisioner makes for a pod: a pool's template with the labels whose values the provisioner chooses as it
makes the node (`Pool.chosen_labels`, e.g. a node-making provisioner's requirements and well-known labels) set for the
pod.

Such a provisioner makes a node for a pod that waits, choosing each such value among those its requirements allow and
the pod's node selector and required affinity accept. So a pod selecting zone a of a pool whose zones are a and b
lands there (a is chosen), and one whose affinity excludes both lands nowhere. Keys are independent: for each
nodeSelectorTerm (its expressions ANDed with the nodeSelector), a node exists if every chosen key the pod asks about
has a value meeting both sides; the pod then lands on it if the rest of the pool's template (its fixed labels, its
taints) admits it, which the caller decides as for any node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from policyc.ir import ChosenLabel
from policyc.k8s.scheduling import label_requirement_matches

ANY_VALUE = "<any value>"
"""The value of a chosen label no requirement narrows: not a label value, so no In matches it and every NotIn does."""

Said = tuple[str, str, tuple[str, ...]]
"""(how the pod says it, operator, values): one constraint of a pod on a label."""


def _value(label: ChosenLabel, said: Sequence[Said]) -> str | None:
    """The first value of the label the provisioner may choose that meets every constraint of `said`, or None: a
    value either side names, an integer next to a bound of a Gt or Lt, or a value neither names."""
    key, either = label.key, [*((op, values) for _, op, values in said), *label.requirements]
    candidates = [v for op, values in either if op in ("In", "NotIn") for v in values]
    candidates += [
        str(int(values[0]) + (1 if op == "Gt" else -1))
        for op, values in either
        if op in ("Gt", "Lt") and len(values) == 1 and values[0].lstrip("-").isdigit()
    ]
    candidates.append(ANY_VALUE)
    return next(
        (v for v in candidates
         if label.allows(v) and all(label_requirement_matches(key, op, vs, {key: v}) for _, op, vs in said)),
        None,
    )  # fmt: skip


def _asked(selector: Mapping[str, Any], expressions: Sequence[Any], chosen: Mapping[str, ChosenLabel]) -> dict:
    """Chosen key -> what the pod's nodeSelector and the term's expressions say of it (`Said`), in the pod's order."""
    out: dict[str, list[Said]] = {}
    for key, value in selector.items():
        if key in chosen:
            out.setdefault(key, []).append((f"nodeSelector {key}={value}", "In", (str(value),)))
    for expression in expressions:
        key = (expression or {}).get("key")
        if key in chosen:
            op, values = expression.get("operator") or "", tuple(str(v) for v in expression.get("values") or ())
            shown = "" if op in ("Exists", "DoesNotExist") else f" [{', '.join(values)}]"
            out.setdefault(key, []).append((f"expression {key} {op}{shown}", op, values))
    return out


def _made(node: Mapping[str, Any], asked: dict[str, list[Said]], chosen: Mapping[str, ChosenLabel], maker: str):
    """The node with a value for each asked key that meets the pod and the provisioner, or why there is none: the
    first of the pod's constraints that, with those before it, no allowed value meets."""
    labels = dict(node["metadata"]["labels"])
    for key, said in asked.items():
        value = _value(chosen[key], said)
        if value is None:
            first = next(s for i, s in enumerate(said) if _value(chosen[key], said[: i + 1]) is None)
            return f"{first[0]} does not match ({maker} makes the pool's nodes with {chosen[key]})"
        labels[key] = value
    return {**node, "metadata": {**node["metadata"], "labels": labels}}


def nodes_for(
    pod: Mapping[str, Any], node: Mapping[str, Any], chosen: Mapping[str, ChosenLabel], maker: str
) -> tuple[list[Mapping[str, Any]], str | None]:
    """The nodes `maker` (the pool's provisioner) can make for the pod from the pool's template `node`, whose labels
    `chosen` it sets as it makes one: one for each nodeSelectorTerm of the pod's required affinity (one for its
    nodeSelector alone when it has none) that the chosen labels can meet; when no term can, why not."""
    spec = pod.get("spec") or {}
    selector = spec.get("nodeSelector") or {}
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))  # fmt: skip
    terms = [(t or {}).get("matchExpressions") or () for t in (required or {}).get("nodeSelectorTerms") or ()]
    nodes, reasons = [], []
    for expressions in terms if required is not None and terms else [()]:
        asked = _asked(selector, expressions, chosen)
        made = _made(node, asked, chosen, maker) if asked else node
        if isinstance(made, str):
            reasons.append(made)
        else:
            nodes.append(made)
    if nodes or len(reasons) == 1:
        return nodes, None if nodes else reasons[0]
    terms_said = "; ".join(f"nodeSelectorTerms[{i}]: {r}" for i, r in enumerate(reasons))
    return nodes, f"no nodeSelectorTerm matches: {terms_said}"
