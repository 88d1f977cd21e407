"""A strict model of YuniKorn's `queues.yaml` (the key `queues.yaml` of the ConfigMap `yunikorn-configs`), and the
core's own validation of it.

YuniKorn 1.9's core decodes the file with yaml.v3 and `KnownFields(true)`: an unknown key is an error, and every key
is its Go field's name in lower case (`placementrules`, `submitacl`, `maxapplications` ...). Facts from
`pkg/common/configs/config.go` and `configvalidator.go` (fact sheet §4.2 and §4.3): partition names unique (an empty
one is `default`); a top level that is not one queue named root gets a root inserted above it; root sets no
resources; child queue names match `QUEUE_NAME`, unique per level regardless of case; an ACL has at most two fields
(users, groups); a queue's guaranteed is within its max, its max within its ancestors', its children's guaranteed
together within its guaranteed and its max (a resource a bound does not name is unbounded there; a queue that
guarantees nothing passes its children's sum up); a child's maxapplications within its parent's, when that is set.
User and group `limits` are modelled as keys only (policyc writes none).
"""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from policyc.k8s.quantity import Quantity

QUEUE_NAME = re.compile(r"^[a-zA-Z0-9_:#/@-]{1,64}$")
"""A child queue's name (the core's `QueueNameRegExp`, 1.9)."""
ROOT = "root"
DEFAULT_PARTITION = "default"
RULES = ("provided", "user", "fixed", "tag")
"""Placement rule names a configuration may use (any case)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _amounts(amounts: dict[str, str] | None) -> dict[str, str] | None:
    for name, amount in (amounts or {}).items():
        Quantity.parse(amount)  # a ValueError on a malformed quantity
        if name == "cpu":  # YuniKorn takes it as a resource no pod has: a policyc bug
            raise ValueError("YuniKorn names cpu 'vcore'")
    return amounts


def _acl(acl: str) -> str:
    if len(acl.split()) > 2:
        raise ValueError(f"an ACL is 'users groups': {acl!r} has more than one space")
    return acl


class Resources(_Strict):
    guaranteed: dict[str, str] | None = None
    max: dict[str, str] | None = None

    _quantities = field_validator("guaranteed", "max")(_amounts)


class Limit(_Strict):
    limit: str = ""
    users: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)
    maxresources: dict[str, str] = Field(default_factory=dict)
    maxapplications: int = Field(0, ge=0)


class ChildTemplate(_Strict):
    maxapplications: int = Field(0, ge=0)
    properties: dict[str, str] = Field(default_factory=dict)
    resources: Resources = Resources()


class Queue(_Strict):
    name: str
    parent: bool = False
    resources: Resources | None = None
    maxapplications: int = Field(0, ge=0)
    properties: dict[str, str] = Field(default_factory=dict)
    adminacl: str = ""
    submitacl: str = ""
    childtemplate: ChildTemplate | None = None
    queues: list[Queue] = Field(default_factory=list)
    limits: list[Limit] = Field(default_factory=list)

    _acls = field_validator("adminacl", "submitacl")(_acl)


class Filter(_Strict):
    type: str = ""
    users: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)

    @field_validator("type")
    @classmethod
    def _type(cls, kind: str) -> str:
        if kind.lower() not in ("", "allow", "deny"):
            raise ValueError(f"a filter type is allow, deny or empty, not {kind!r}")
        return kind


class PlacementRule(_Strict):
    name: str
    create: bool = False
    filter: Filter | None = None
    parent: PlacementRule | None = None
    value: str = ""

    @field_validator("name")
    @classmethod
    def _rule(cls, name: str) -> str:
        if name.lower() not in RULES:
            raise ValueError(f"unknown placement rule {name!r}: one of {', '.join(RULES)}")
        return name


class Preemption(_Strict):
    enabled: bool = True
    quotapreemptionenabled: bool = False


class NodeSortPolicy(_Strict):
    type: Literal["fair", "binpacking"] = "fair"
    resourceweights: dict[str, float] = Field(default_factory=dict)

    @field_validator("resourceweights")
    @classmethod
    def _weights(cls, weights: dict[str, float]) -> dict[str, float]:
        if any(w < 0 for w in weights.values()):
            raise ValueError("a resource weight is 0 or more")
        return weights


class UserGroupResolver(_Strict):
    type: Literal["os", "ldap", ""] = ""


class Partition(_Strict):
    name: str = ""
    queues: list[Queue] = Field(default_factory=list)
    placementrules: list[PlacementRule] = Field(default_factory=list)
    limits: list[Limit] = Field(default_factory=list)
    preemption: Preemption | None = None
    nodesortpolicy: NodeSortPolicy | None = None
    usergroupresolver: UserGroupResolver | None = None


class QueuesConfig(_Strict):
    partitions: list[Partition] = Field(min_length=1)
    checksum: str = ""


def _amount(text: str) -> Fraction:
    return Quantity.parse(text).value


def _over(amounts: dict[str, Fraction], bound: dict[str, Fraction]) -> list[str]:
    """The resources of `amounts` above `bound`, where `bound` names them (elsewhere it is unbounded)."""
    return sorted(r for r, a in amounts.items() if r in bound and a > bound[r])


def _names(queue: Queue, path: str) -> list[str]:
    """The core's rules on the names and ACLs below a queue: names match QUEUE_NAME, unique per level in any case."""
    out = [f"{path}.{q.name}: the name does not match {QUEUE_NAME.pattern}" for q in queue.queues
           if not QUEUE_NAME.match(q.name)]  # fmt: skip
    counts = Counter(q.name.lower() for q in queue.queues)
    out += [f"{path}: two child queues named {n!r}" for n in sorted(n for n, k in counts.items() if k > 1)]
    for child in queue.queues:
        out += _names(child, f"{path}.{child.name}")
    return out


def _amounts_down(queue: Queue, path: str, ancestors_max: dict[str, Fraction]) -> tuple[dict[str, Fraction], list[str]]:
    """(what the queue guarantees to its parent's sum, the core's problems with its amounts and its subtree's)."""
    own = queue.resources or Resources()
    guaranteed = {r: _amount(a) for r, a in (own.guaranteed or {}).items()}
    maximum = {r: _amount(a) for r, a in (own.max or {}).items()}
    out = [f"{path}: guaranteed {r} above its max" for r in _over(guaranteed, maximum)]
    out += [f"{path}: max {r} above its parent's max" for r in _over(maximum, ancestors_max)]
    bound = {**ancestors_max, **{r: min(a, ancestors_max.get(r, a)) for r, a in maximum.items()}}
    summed: dict[str, Fraction] = {}
    for child in queue.queues:
        child_guaranteed, problems = _amounts_down(child, f"{path}.{child.name}", bound)
        out += problems
        for r, a in child_guaranteed.items():
            summed[r] = summed.get(r, Fraction(0)) + a
        if queue.maxapplications and not 0 < child.maxapplications <= queue.maxapplications:
            out.append(f"{path}.{child.name}: maxapplications not within its parent's {queue.maxapplications}")
    out += [f"{path}: its children's guaranteed {r} together above its guaranteed" for r in _over(summed, guaranteed)]
    out += [f"{path}: its children's guaranteed {r} together above its max" for r in _over(summed, bound)]
    return (guaranteed if any(guaranteed.values()) else summed), out


def _root(p: Partition) -> Queue:
    """The partition's root queue, as the core makes it: the one top queue named root, else one inserted above."""
    if len(p.queues) == 1 and p.queues[0].name.lower() == ROOT:
        return p.queues[0]
    return Queue(name=ROOT, parent=True, queues=p.queues)


def _parse(conf: dict) -> tuple[QueuesConfig | None, list[str]]:
    try:
        parsed = QueuesConfig.model_validate(conf)
    except ValidationError as e:
        return None, [f"{'.'.join(map(str, err['loc'])) or '(root)'}: {err['msg']}" for err in e.errors()]
    out: list[str] = []
    counts = Counter((p.name or DEFAULT_PARTITION).lower() for p in parsed.partitions)
    out += [f"two partitions named {n!r}" for n in sorted(n for n, k in counts.items() if k > 1)]
    for p in parsed.partitions:
        root = _root(p)
        if root.resources is not None and (root.resources.guaranteed, root.resources.max) != (None, None):
            out.append(f"partition {p.name or DEFAULT_PARTITION}: the root queue sets resources")
        out += _names(root, root.name)
    return parsed, out


def schema_problems(conf: dict) -> list[str]:
    """What YuniKorn's parser and its structural checks would refuse the configuration for (unknown keys, types,
    quantities, names, ACLs, the root queue), as 'where: what' (empty when nothing). The amounts down the tree are
    the policy's own rules' to check."""
    return _parse(conf)[1]


def problems(conf: dict) -> list[str]:
    """What YuniKorn's core would refuse the configuration for: `schema_problems`, then its rules on the amounts
    down the queue tree."""
    parsed, out = _parse(conf)
    for p in parsed.partitions if parsed else ():
        root = _root(p)
        out += _amounts_down(root, root.name, {})[1]
    return out
