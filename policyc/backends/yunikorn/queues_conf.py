"""A strict model of YuniKorn's `queues.yaml` (the key `queues.yaml` of the ConfigMap `yunikorn-configs`), and the
core's own validation of it.

YuniKorn 1.9's core decodes the file with yaml.v3 and `KnownFields(true)`: an unknown key is an error, and every key
is its Go field's name in lower case (`placementrules`, `submitacl`, `maxapplications` ...). Facts from
`pkg/common/configs/config.go` and `configvalidator.go` (fact sheet §4.2 and §4.3): queue names match
`QUEUE_NAME`, unique per level; the top queue is `root` and sets no resources; a queue's guaranteed is within its
max; a child's max within its parent's; its children's guaranteed together within the parent's guaranteed and max.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from policyc.k8s.quantity import Quantity

QUEUE_NAME = re.compile(r"^[a-zA-Z0-9_:#/@-]{1,64}$")
"""A queue's name at its level (the core's `QueueNameRegExp`)."""
ROOT = "root"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _quantities(amounts: dict[str, str]) -> dict[str, str]:
    for name, amount in amounts.items():
        Quantity.parse(amount)  # raises ValueError on a malformed quantity
        if name == "cpu":
            raise ValueError("YuniKorn names cpu 'vcore'")
    return amounts


class Resources(_Strict):
    guaranteed: dict[str, str] = Field(default_factory=dict)
    max: dict[str, str] = Field(default_factory=dict)

    _amounts = field_validator("guaranteed", "max")(_quantities)


class Queue(_Strict):
    name: str
    parent: bool = False
    resources: Resources | None = None
    maxapplications: int = Field(0, ge=0)
    properties: dict[str, str] = Field(default_factory=dict)
    adminacl: str = ""
    submitacl: str = ""
    queues: list[Queue] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not QUEUE_NAME.match(name):
            raise ValueError(f"queue name {name!r} does not match {QUEUE_NAME.pattern}")
        return name


class Filter(_Strict):
    type: Literal["allow", "deny", ""] = ""
    users: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)


class PlacementRule(_Strict):
    name: Literal["provided", "user", "fixed", "tag"]
    create: bool = False
    filter: Filter | None = None
    parent: PlacementRule | None = None
    value: str = ""


class Preemption(_Strict):
    enabled: bool = True
    quotapreemptionenabled: bool = False


class NodeSortPolicy(_Strict):
    type: Literal["fair", "binpacking"] = "fair"
    resourceweights: dict[str, float] = Field(default_factory=dict)


class Partition(_Strict):
    name: str
    queues: list[Queue] = Field(min_length=1, max_length=1)
    placementrules: list[PlacementRule] = Field(default_factory=list)
    preemption: Preemption | None = None
    nodesortpolicy: NodeSortPolicy | None = None


class QueuesConfig(_Strict):
    partitions: list[Partition] = Field(min_length=1)


def _amount(text: str) -> Fraction:
    return Quantity.parse(text).value


def _within(inner: dict[str, str], outer: dict[str, str]) -> list[str]:
    """The resources `inner` has more of than `outer` bounds (a resource `outer` does not list is unbounded)."""
    return sorted(r for r, a in inner.items() if r in outer and _amount(a) > _amount(outer[r]))


def _tree_problems(queue: Queue, path: str, parent_max: dict[str, str]) -> list[str]:
    """The core's rules on a queue and its subtree: names unique per level, guaranteed within max, max within the
    parent's max, the children's guaranteed together within this queue's guaranteed and max."""
    out: list[str] = []
    own = queue.resources or Resources()
    for r in _within(own.guaranteed, own.max):
        out.append(f"{path}: guaranteed {r} above its max")
    for r in _within(own.max, parent_max):
        out.append(f"{path}: max {r} above its parent's max")
    names = [q.name.lower() for q in queue.queues]
    for name in sorted({n for n in names if names.count(n) > 1}):
        out.append(f"{path}: two child queues named {name!r}")
    summed: dict[str, Fraction] = {}
    for child in queue.queues:
        for r, a in (child.resources or Resources()).guaranteed.items():
            summed[r] = summed.get(r, Fraction(0)) + _amount(a)
        out += _tree_problems(child, f"{path}.{child.name}", {**parent_max, **own.max})
    for bound, limits in (("guaranteed", own.guaranteed), ("max", own.max)):
        for r in sorted(r for r in summed if r in limits and summed[r] > _amount(limits[r])):
            out.append(f"{path}: its children's guaranteed {r} together above its {bound}")
    return out


def _parse(conf: dict) -> tuple[QueuesConfig | None, list[str]]:
    try:
        parsed = QueuesConfig.model_validate(conf)
    except ValidationError as e:
        return None, [f"{'.'.join(map(str, err['loc'])) or '(root)'}: {err['msg']}" for err in e.errors()]
    out: list[str] = []
    for p in parsed.partitions:
        root = p.queues[0]
        if root.name.lower() != ROOT:
            out.append(f"partition {p.name}: the top queue is {root.name!r}, not root")
        if root.resources is not None:
            out.append(f"partition {p.name}: the root queue sets resources")
    return parsed, out


def schema_problems(conf: dict) -> list[str]:
    """What YuniKorn's parser would refuse the configuration for (unknown keys, types, names, quantities, the root
    queue), as 'where: what' (empty when nothing). The amounts down the tree are the policy's own rules' to check."""
    return _parse(conf)[1]


def problems(conf: dict) -> list[str]:
    """What YuniKorn's core would refuse the configuration for: its parser's problems, then its rules on the
    amounts down the queue tree."""
    parsed, out = _parse(conf)
    for p in parsed.partitions if parsed else ():
        out += _tree_problems(p.queues[0], p.queues[0].name, {})
    return out
