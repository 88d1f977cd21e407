"""Value types of the policy language: Kubernetes names, label keys and values, resource names, quantities.

Each is an annotated type whose validator applies Kubernetes' own syntax rules (`policyc.k8s.names`,
`policyc.k8s.quantity`) and whose JSON Schema carries the matching pattern, so editors flag mistakes
as the compiler would. Validation failures raise `PydanticCustomError`s of type ``policyc`` whose
context names the diagnostic rule and a fix-it hint; `policyc.language.parse` turns them into located diagnostics.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, PlainSerializer, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from policyc.diagnostics import describe_value, did_you_mean
from policyc.k8s import names
from policyc.k8s.quantity import Quantity as _Quantity
from policyc.k8s.quantity import QuantityError
from policyc.k8s.validation import HIGHEST_USER_DEFINABLE_PRIORITY
from policyc.language.noderanges import NodeRangeError, check

DNS1123_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
QUALIFIED_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
KUBERNETES_VERSION = r"^1\.[0-9]+$"

GPU = "gpu"
"""Shorthand resource name for the policy's `gpuResource`."""
STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage", "storage", GPU)


@dataclass(frozen=True, slots=True)
class Why:
    """What a field's pydantic constraints stand for, in the policy's own terms: `policyc.language.parse` words a
    value they refuse with these, never with pydantic's ("Input should be greater than or equal to 2"). Each is (why
    the value is wrong, what to write instead): `low` for a number below its minimum, or an empty list or text;
    `high` for a number above its maximum, or too long a text; `shape` for a text its pattern refuses, whose fix
    `suggest` may propose (a corrected value, or None)."""

    low: tuple[str, str] | None = None
    high: tuple[str, str] | None = None
    shape: tuple[str, str] | None = None
    suggest: Callable[[str], str | None] | None = None


def policy_error(rule: str, message: str, hint: str | None = None) -> PydanticCustomError:
    """A validation error that `policyc.language.parse` reports under diagnostic rule `rule`."""
    return PydanticCustomError("policyc", "{message}", {"rule": rule, "message": message, "hint": hint})


def _syntax(
    check: Callable[[str], list[str]], rule: str, what: str, fix: Callable[[str], str] | None = None
) -> Callable[[str], str]:
    """A validator applying a Kubernetes syntax check; `fix` proposes a corrected value for the hint."""

    def validate(value: str) -> str:
        problems = check(value)
        if problems:
            fixed = fix(value) if fix else None
            hint = f"did you mean '{fixed}'?" if fixed and fixed != value and not check(fixed) else None
            raise policy_error(rule, f"{what} '{value}' is invalid: {'; '.join(problems)}", hint)
        return value

    return validate


def user_priority(value: int) -> int:
    if value > HIGHEST_USER_DEFINABLE_PRIORITY:
        raise policy_error(
            "priority-value-out-of-range",
            f"{value:,} is above the highest a user class may have ({HIGHEST_USER_DEFINABLE_PRIORITY:,})",
            f"write at most {HIGHEST_USER_DEFINABLE_PRIORITY}: values above 10^9 are reserved for "
            "system-cluster-critical and system-node-critical",
        )
    return value


def _as_dns_label(value: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")


def _as_dns_subdomain(value: str) -> str:
    """A name with its dots kept, and a URL's scheme, port and path dropped (https://ai.example.com/x ->
    ai.example.com)."""
    host = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://", "", value).split("/", 1)[0].split(":", 1)[0]
    return ".".join(part for part in (_as_dns_label(p) for p in host.split(".")) if part)


def _as_gfd_product(value: str) -> str:
    """GPU Feature Discovery's product label: characters outside [A-Za-z0-9-_. ] dropped, spaces as '-'."""
    return re.sub(r"[^A-Za-z0-9\-_. ]", "", value).strip().replace(" ", "-")


def _as_label_value(value: str) -> str:
    """A label value (or a key's name part) with each run of other characters as '-' ('ml research' -> ml-research)."""
    return re.sub(r"[^A-Za-z0-9\-_.]+", "-", value).strip("-_.")


def _as_label_key(value: str) -> str:
    """A label key with its prefix as a DNS subdomain and its name as a label value (example.org/team/ml ->
    example.org/team-ml)."""
    if "/" not in value:
        return _as_label_value(value)
    prefix, name = value.split("/", 1)
    return f"{_as_dns_subdomain(prefix)}/{_as_label_value(name)}"


def _non_empty_label_value(value: str) -> list[str]:
    return names.is_valid_label_value(value) if value else ["must not be empty"]


def _resource_name(value: str) -> str:
    if value in STANDARD_RESOURCES:
        return value
    if "/" not in value:
        hint = did_you_mean(value, STANDARD_RESOURCES)
        if hint is None or not hint.startswith("did you mean"):
            hint = "use cpu, memory, ephemeral-storage, storage, gpu, or an extended resource such as example.com/foo"
        raise policy_error("invalid-resource-name", f"unknown resource '{value}'", hint)
    problems = names.is_qualified_name(value)
    if problems:
        raise policy_error("invalid-resource-name", f"resource name '{value}' is invalid: {'; '.join(problems)}")
    return value


_MAX_QUANTITY_DIGITS = 19
"""Digits of the integer part beyond which no quantity fits Kubernetes' int64 (about 9.2e18)."""

_BYTE_SUFFIX = re.compile(r"^([0-9.]+)\s*([kKmMgGtTpPeE])(i?)[bB]?$")
_OTHER_SUFFIX = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*[^0-9\s.][^0-9]*$")


def _quantity_hint(text: str) -> str | None:
    """A fix-it for the usual unit mistakes: 40GB, 40gb, 40gi, 8 Gi; and the number alone for a suffix Kubernetes
    does not know (12x, 4 cores)."""
    match = _BYTE_SUFFIX.match(text.strip())
    if not match:
        other = _OTHER_SUFFIX.match(text.strip())
        suffixes = "m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei"
        return f"did you mean '{other.group(1)}'? (a quantity's suffix is one of {suffixes})" if other else None
    number, prefix, binary = match.groups()
    decimal = "k" if prefix in "kK" else prefix.upper()
    if binary:
        return f"did you mean '{number}{prefix.upper()}i'?"
    return f"did you mean '{number}{decimal}' (10^n bytes) or '{number}{prefix.upper()}i' (2^n bytes)?"


def _quantity(value: Any) -> _Quantity:
    if isinstance(value, _Quantity):
        return value
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise policy_error("wrong-type", f"must be a quantity such as 8, 500m or 64Gi, not {describe_value(value)}")
    try:
        quantity = _Quantity.from_json(value)
    except QuantityError as e:
        raise policy_error("invalid-quantity", str(e), _quantity_hint(str(value))) from None
    if quantity.exceeds(_MAX_QUANTITY_DIGITS):
        raise policy_error("invalid-quantity", f"{value} is too large; Kubernetes quantities stop below 2^63")
    if quantity.is_negative():
        raise policy_error("invalid-value", f"{value} is negative; quantities in a policy are never below zero")
    return quantity


def _node_pattern(value: str) -> str:
    try:
        check(value)
    except NodeRangeError as e:
        raise policy_error("invalid-node-pattern", str(e), e.hint) from None
    return value


def _kubernetes_version(value: str) -> str:
    if not re.fullmatch(KUBERNETES_VERSION.strip("^$"), value):
        match = re.match(r"^v?(1\.[0-9]+)(\.[0-9]+)?$", value.strip())
        raise policy_error(
            "invalid-value",
            f"'{value}' is not a Kubernetes minor version such as \"1.33\"",
            f'did you mean "{match.group(1)}"?' if match else None,
        )
    return value


Name = Annotated[
    str,
    WithJsonSchema({"type": "string", "pattern": DNS1123_LABEL, "maxLength": 63}),
    AfterValidator(_syntax(names.is_dns1123_label, "invalid-name", "name", _as_dns_label)),
]
"""A DNS-1123 label: pool, tier, tenant, workload and namespace names."""

SubdomainName = Annotated[
    str,
    WithJsonSchema({"type": "string", "pattern": DNS1123_SUBDOMAIN, "maxLength": 253}),
    AfterValidator(_syntax(names.is_dns1123_subdomain, "invalid-name", "name", _as_dns_subdomain)),
]
"""A DNS-1123 subdomain: PriorityClass names and the label domain."""

LabelKey = Annotated[
    str,
    WithJsonSchema({"type": "string", "pattern": QUALIFIED_NAME, "maxLength": 317}),
    AfterValidator(_syntax(names.is_qualified_name, "invalid-label-key", "key", _as_label_key)),
]

LabelValue = Annotated[
    str,
    WithJsonSchema({"type": "string", "pattern": LABEL_VALUE, "maxLength": 63}),
    AfterValidator(_syntax(names.is_valid_label_value, "invalid-label-value", "value", _as_label_value)),
]

_GFD_RENAMED = re.compile(r"(-MIG-[0-9]+g\.[0-9]+gb[a-z.]*)?(-SHARED)?$")
"""What GPU Feature Discovery appends to a card's product on its nodes: `-MIG-<profile>` under the MIG strategy
single, `-SHARED` when the device plugin shares the cards (unless it renames the resource instead)."""


def _card_product(value: str) -> str:
    """A product as policyc takes it: the card's name, never one GPU Feature Discovery renamed on a node."""
    renamed = _GFD_RENAMED.search(value)
    if renamed is not None and renamed.group():  # never the whole value: a label value does not start with '-'
        card = value[: renamed.start()]
        node, field, how = (
            ("a MIG node", "gpu.mig", "partitions")
            if renamed.group(1)
            else ("a node of shared cards", "gpu.sharing", "shares")
        )
        raise policy_error(
            "gfd-renamed-product",
            f"'{value}' is how GPU Feature Discovery labels the product of {node}, not a card",
            f"did you mean '{card}'? ({field} {how} the cards)",
        )
    return value


GpuProduct = Annotated[
    str,
    WithJsonSchema({"type": "string", "pattern": LABEL_VALUE, "minLength": 1, "maxLength": 63}),
    AfterValidator(_syntax(_non_empty_label_value, "invalid-label-value", "GPU product", _as_gfd_product)),
    AfterValidator(_card_product),
]
"""A GPU product as GPU Feature Discovery writes it into `nvidia.com/gpu.product` (e.g. NVIDIA-H100-80GB)."""

KubernetesVersion = Annotated[
    str,
    WithJsonSchema({"type": "string", "pattern": KUBERNETES_VERSION}),
    AfterValidator(_kubernetes_version),
]

ResourceName = Annotated[
    str,
    AfterValidator(_resource_name),
    WithJsonSchema(
        {
            "type": "string",
            "description": "cpu, memory, ephemeral-storage, storage, gpu (the policy's gpuResource), or an "
            "extended resource name such as example.com/foo",
            "anyOf": [{"enum": list(STANDARD_RESOURCES)}, {"pattern": QUALIFIED_NAME}],
        }
    ),
]

Quantity = Annotated[
    _Quantity,
    PlainValidator(_quantity),
    PlainSerializer(str, return_type=str),
    WithJsonSchema(
        {
            "anyOf": [{"type": "string", "pattern": QUANTITY}, {"type": "number", "minimum": 0}],
            "description": "A Kubernetes quantity, such as 8, 500m, 1.5 or 64Gi.",
        }
    ),
]

NodePattern = Annotated[
    str,
    AfterValidator(_node_pattern),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": r"^[a-z0-9.\[\]-]+$",
            "description": "A node name, or a pattern with ranges such as gpu-node-[01-16].",
        }
    ),
]

ResourceMap = dict[ResourceName, Quantity]
