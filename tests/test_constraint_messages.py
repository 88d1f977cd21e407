"""pydantic's own words never reach a user (issue 23, point 8).

Every bound, length and pattern of the policy model (and of the scheduler backends' settings) carries a `Why`:
what the constraint stands for in the policy's terms and what to write. The walk below finds every constraint of
the model, breaks it in a document, and checks what `render_text` prints for it.
"""

from __future__ import annotations

import re
import typing
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from policyc.compiler import compile_text
from policyc.diagnostics import Report
from policyc.language.model import policy_model
from policyc.language.parse import _peel, _tags, parse
from policyc.output.formats import render_text
from tests.conftest import REPO

RAW = re.compile(r"[Ss]hould|Input|greater than|less than|>=|<=|pattern|\^|\$|it must be|not a value it takes")
"""pydantic's phrases ("Input should be greater than or equal to 2", "String should match pattern '^...$'"), the
old "must be >= 2", and parse's plain words for a constraint without a `Why`."""


def _constraints(metadata: list[Any]) -> list[tuple[str, Any]]:
    """(kind, bound) of the constraints among pydantic metadata: ge, gt, le, lt, min_length, max_length, pattern."""
    out = []
    for m in metadata:
        if isinstance(m, FieldInfo):  # Field(...) inside Annotated[...]
            out += _constraints(m.metadata)
            continue
        for kind in ("ge", "gt", "le", "lt", "min_length", "max_length", "pattern"):
            bound = getattr(m, kind, None)
            if bound is not None:
                out.append((kind, bound))
    return out


def walk(tp: Any, path: tuple, metadata: list[Any], seen: frozenset = frozenset()) -> list[tuple[tuple, str, Any, Any]]:
    """(document path, kind, bound, the type constrained) of every constraint reachable from `tp`; a path's parts
    are field names, 0 for a list item, "k" for a dict value, ("key",) for a dict key, and ("tag", name) for the
    member of a tagged union."""
    tp, more = _peel(tp)
    metadata = metadata + more
    found = [(path, kind, bound, tp) for kind, bound in _constraints(metadata)]
    members = _tags(tp)
    if members:
        for tag, member in members.items():
            found += walk(member, (*path, ("tag", tag)), [], seen)
        return found
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if tp in seen:
            return found
        for name, field in tp.model_fields.items():
            found += walk(field.annotation, (*path, field.alias or name), list(field.metadata), seen | {tp})
    elif origin is list:
        found += walk(args[0], (*path, 0), [], seen)
    elif origin is dict:
        found += walk(args[0], (*path, ("key",)), [], seen)
        found += walk(args[1], (*path, "k"), [], seen)
    return found


CONSTRAINTS = walk(policy_model(), (), [])


def _breaking(kind: str, bound: Any, tp: Any) -> Any:
    """A value of type `tp` that breaks the constraint."""
    if kind in ("ge", "gt", "le", "lt"):
        step = {"ge": -1, "gt": 0, "le": 1, "lt": 0}[kind]
        return bound + step if tp is int else float(bound + step)
    if kind == "min_length":
        return {list: [], dict: {}}.get(typing.get_origin(tp) or tp, "")
    if kind == "max_length":
        return "a" * (bound + 1)
    value = "Not Valid!"
    assert not re.fullmatch(bound, value)
    return value


def _document(path: tuple, value: Any, tp: Any) -> tuple[dict, tuple]:
    """A policy document holding `value` at `path`, and the path of the value (or key) in it."""
    if path and path[-1] == ("key",):  # a dict key: any valid value beside it
        inner: Any = {value: "gauge"}
        path, where = path[:-1], value
    else:
        inner, where = value, None
    doc_path: list = []
    for part in reversed(path):
        if isinstance(part, tuple):  # a tagged union's member: `backend` names it (others tell theirs by shape)
            inner = {"backend": part[1], **inner}
        elif part == 0:
            inner = [inner]
        else:
            inner = {part: inner}
    for part in path:
        if not isinstance(part, tuple):
            doc_path.append(part)
    if where is not None:
        doc_path.append(where)
    return inner, tuple(doc_path)


@pytest.mark.parametrize(
    ("path", "kind", "bound", "tp"),
    CONSTRAINTS,
    ids=[f"{'.'.join(str(p if not isinstance(p, tuple) else p[-1]) for p in c[0])}-{c[1]}" for c in CONSTRAINTS],
)
def test_every_constraint_is_told_in_the_policy_terms(path, kind, bound, tp) -> None:
    value = _breaking(kind, bound, tp)
    doc, at = _document(path, value, tp)
    parsed = parse(doc)
    mine = [d for d in parsed.diagnostics if d.path == at]
    assert mine, f"no diagnostic at {at}: {[(d.path, d.message) for d in parsed.diagnostics]}"
    report = Report("policy.yaml")
    report.extend(mine)
    text = render_text(report)
    assert not RAW.search(text), text
    assert all(d.hint for d in mine), text


def test_the_walk_finds_the_constraints() -> None:
    # A few by hand, so that a walk finding nothing cannot pass: (field, kind, bound).
    found = {(c[0][-1], c[1], c[2]) for c in CONSTRAINTS}
    assert {("replicas", "ge", 2), ("minMember", "ge", 1), ("migProfile", "pattern", r"^[0-9]+g\.[0-9]+gb$")} <= found
    assert (("key",), "pattern", r"^DCGM_(FI|EXP)_[A-Z0-9_]+$") in found
    assert len(CONSTRAINTS) >= 50


MINIMAL = (REPO / "policies" / "minimal.yaml").read_text()


def built(old: str, new: str) -> str:
    assert old in MINIMAL
    return render_text(compile_text(MINIMAL.replace(old, new), "policy.yaml").report)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            "gpus: 8",
            "gpus: 8\n      migProfile: 1g-10gb",
            "'workloads[0].migProfile' is '1g-10gb': a MIG profile is <compute slices>g.<memory>gb, as nvidia-smi "
            "mig -lgip names it; did you mean '1g.10gb'?",
            id="mig-profile",
        ),
        pytest.param(
            "count: 8}",
            "count: 8, sharing: {strategy: mps, replicas: 1}}",
            "'nodePools[0].gpu.sharing.replicas' is 1: replicas is how many pods share one card, and one pod alone is "
            "not sharing; write 2 or more, or remove sharing to give pods whole cards",
            id="sharing-of-one",
        ),
        pytest.param(
            "gpus: 8",
            "gpus: 0",
            "'workloads[0].gpus' is 0: a pod of a GPU workload takes at least one GPU; write 1 or more, or remove gpus "
            "and gpuTier for CPU-only work",
            id="no-gpus",
        ),
        pytest.param(
            "gpus: 8",
            "gpus: 8.0",  # the hint's whole number is one the field takes, or says why not
            "'workloads[0].gpus' must be an integer, not the number 8.0; write 8",
            id="whole-number",
        ),
        pytest.param(
            "gpus: 8",
            "gpus: 0.0",
            "'workloads[0].gpus' must be an integer, not the number 0.0; write a whole number, but not 0: a pod of a "
            "GPU workload takes at least one GPU",
            id="whole-number-out-of-range",
        ),
        pytest.param(
            "namespaces: [ml]",
            "namespaces: []",
            "'tenants[0].namespaces' is empty: a tenant owns at least one namespace, where its pods and quotas live; "
            "list them, e.g. [ml]",
            id="no-namespace",
        ),
    ],
)
def test_the_worst_constraint_messages(old, new, expected) -> None:
    text = built(old, new)
    assert len(text.splitlines()) == 1, text  # one diagnostic
    assert expected in text, text
