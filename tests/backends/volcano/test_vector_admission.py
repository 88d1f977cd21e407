"""The Volcano webhooks' verdicts (`tests.backends.volcano.vectors`, admission cases) against policyc's own checks.

Each submitted object is put in policy terms (`Adapter`): a Queue becomes a tenant's queue, a Volcano Job or a
PodGroup a workload of the queue's tenant, next to the queues that existed when it was submitted (the cluster the
webhook looked things up in). policyc then judges that policy:

- where the webhook refused, policyc refuses with a rule of the same meaning (`REASONS`, read from the webhook's
  message), its message carrying the names and figures of the webhook's; or the refused construct is one policyc
  never writes (a task-level minAvailable, a queue without deserved for a guaranteed resource ...), which the test
  checks on everything policyc emits for the shipped policies and the vectors' trees;
- where the webhook admitted, policyc accepts, or refuses only a value the webhook did not keep (a weight of 0
  stored as 1, a misspelt field dropped): policyc says so instead of letting the cluster differ from the policy;
- where policyc emitted the object (the trees' queues), what the webhook stored keeps every value policyc wrote,
  and adds only fields outside lists, which Argo CD's three-way diff leaves alone.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pytest

from policyc.compiler import Compilation, compile_text
from policyc.k8s.quantity import Quantity, QuantityError
from tests.backends.volcano import vectors
from tests.conftest import example_policies, missing_shared_data

QUEUE_FIELDS_WITHOUT_POLICY = ("dequeueStrategy", "type", "extendClusters", "affinity")
"""Volcano queue fields the policy language has no word for (policyc never writes them)."""
BUILT_IN_QUEUES = ("root", "default")

SKELETON = {
    "apiVersion": "policyc.io/v1alpha1",
    "kind": "ClusterPolicy",
    "metadata": {"name": "webhook-adapter"},
    "spec": {
        "kubernetesVersion": "1.36",
        "domain": "adapter.example.com",
        "gpuTiers": [{"name": "any", "products": ["NVIDIA-H100-80GB"]}],
        "nodePools": [
            {
                "name": "pool",
                "usage": "hybrid",
                "nodes": ["n-[001-500]"],
                "gpu": {"product": "NVIDIA-H100-80GB", "count": 8},
                "allocatable": {"cpu": "2000", "memory": "20000Gi"},
            }
        ],
        "scheduler": {"backend": "volcano", "queuePlugin": "capacity"},
    },
}
"""A cluster large enough that no queue figure of a case exceeds it: only the queues and workloads are judged."""


# ---------------------------------------------------------------------------------------------------------------
# Objects in policy terms


@dataclass
class Adapted:
    """A policy made of submitted objects, and what of them the policy language cannot say."""

    tenants: dict[str, dict[str, Any]] = field(default_factory=dict)
    workloads: list[dict[str, Any]] = field(default_factory=list)
    unsaid: list[str] = field(default_factory=list)

    def text(self) -> str:
        spec = {**SKELETON["spec"], "tenants": list(self.tenants.values())}
        if self.workloads:
            spec["workloads"] = self.workloads
        return json.dumps({**SKELETON, "spec": spec})


def tenant(queue: Mapping[str, Any], unsaid: list[str]) -> dict[str, Any]:
    """A Queue as a tenant's queue: guarantee.resource is the guarantee, parent root is no parent; a field Volcano
    does not have passes through (policyc judges it as the policy's own)."""
    name = queue["metadata"]["name"]
    out: dict[str, Any] = {}
    for key, value in (queue.get("spec") or {}).items():
        if key == "guarantee":
            out["guarantee"] = (value or {}).get("resource") or {}
        elif key == "parent":
            if value != "root":
                out["parent"] = value
        elif key in QUEUE_FIELDS_WITHOUT_POLICY:
            unsaid.append(f"Queue {name}: spec.{key}")
        else:
            out[key] = value
    for key in queue["metadata"].get("annotations") or {}:
        if key.startswith("volcano.sh/"):
            unsaid.append(f"Queue {name}: annotation {key}")
    return {"name": name, "namespaces": [f"ns-{name}"], "queue": out}


def _requests(template: Mapping[str, Any]) -> dict[str, str]:
    containers = (template.get("spec") or {}).get("containers") or [{}]
    return {
        **(containers[0].get("resources") or {}).get("limits", {}),
        **(containers[0].get("resources") or {}).get("requests", {}),
    }


def workload(obj: Mapping[str, Any], unsaid: list[str]) -> dict[str, Any] | None:
    """A Volcano Job as a VolcanoJob workload (one task of `replicas` workers, its minAvailable the gang), a PodGroup as
    the pods of a Deployment in its queue (the controller gives them one); None when it has no single task."""
    name, spec = obj["metadata"]["name"], obj.get("spec") or {}
    base = {"name": name, "type": "training", "tenant": spec.get("queue", "default"), "gpuTier": "any"}
    if obj["kind"] == "PodGroup":
        return {**base, "type": "inference", "kind": "Deployment", "replicas": spec.get("minMember", 1), "gpus": 1}
    for key in ("plugins", "policies"):
        if key in spec:
            unsaid.append(f"Job {name}: spec.{key}")
    tasks = spec.get("tasks") or []
    for t in tasks:
        if "minAvailable" in t:
            unsaid.append(f"Job {name}: task {t.get('name')} minAvailable")
    if len(tasks) != 1:
        unsaid.append(f"Job {name}: {len(tasks)} tasks")
        return None
    requests = _requests(tasks[0].get("template") or {})
    out = {
        **base,
        "kind": "VolcanoJob",
        "replicas": tasks[0].get("replicas", 1),
        "gpus": int(Quantity.from_json(requests.get("nvidia.com/gpu", 1)).value),
    }
    for key in ("cpu", "memory"):
        if key in requests:
            out[key] = requests[key]
    if "minAvailable" in spec:
        out["minMember"] = spec["minAvailable"]
    return out


# ---------------------------------------------------------------------------------------------------------------
# The cluster the webhook looked things up in


def _admitted_queue_cases(tree: str | None) -> list[Mapping[str, Any]]:
    return [
        c
        for c in vectors.cases("admission")
        if c["tree"] == tree
        and c["observed"]["verdict"] == "admitted"
        and _subject(c)["kind"] == "Queue"
        and c["input"].get("operation", "CREATE") != "DELETE"
    ]


def _subject(case: Mapping[str, Any]) -> Mapping[str, Any]:
    return case["input"]["object"]


@functools.cache
def _recorded(tree: str | None) -> dict[str, Mapping[str, Any]]:
    """The queues whose spec the record holds: a tree's as policyc emits them; for hand-made objects, the last one of
    each name a case had admitted."""
    if tree is not None:
        return {q["metadata"]["name"]: q for q in vectors.emitted(tree, "Queue")}
    return {_subject(c)["metadata"]["name"]: _subject(c) for c in _admitted_queue_cases(None)}


@functools.cache
def _fixtures() -> frozenset[str]:
    """Queues the hand-made cases use without creating them: those an admitted Job or PodGroup names."""
    return frozenset(
        c["input"]["object"]["spec"].get("queue")
        for c in vectors.cases("admission")
        if c["tree"] is None and c["observed"]["verdict"] == "admitted" and _subject(c)["kind"] in ("Job", "PodGroup")
    )


def existing_queues(case: Mapping[str, Any]) -> tuple[dict[str, Mapping[str, Any]], list[str]]:
    """The queues that existed when the case's object was submitted (built-in ones aside), and the names among them
    whose spec no case records (taken as plain queues under root).

    The case names them (`existing`, `existingQueuesBefore`); a hand-made Job or PodGroup also had the fixture queues;
    and a queue the record shows created under an existing one existed with it."""
    listed = case["input"].get("existing") or case["input"].get("existingQueuesBefore") or []
    names = {n.removeprefix("Queue/") for n in listed} - set(BUILT_IN_QUEUES)
    if case["tree"] is None and _subject(case)["kind"] in ("Job", "PodGroup"):
        names |= _fixtures()
    recorded = _recorded(case["tree"])
    while True:
        children = {n for n, q in recorded.items() if (q.get("spec") or {}).get("parent") in names} - names
        if not children:
            break
        names |= children
    name = _subject(case)["metadata"]["name"]
    if _subject(case)["kind"] == "Queue":
        names.discard(name)
    unknown = sorted(n for n in names if n not in recorded)
    store = {n: recorded.get(n, {"metadata": {"name": n}, "spec": {}}) for n in sorted(names)}
    if len(unknown) == 1 and (sibling := _sibling_from_sum(case, store)) is not None:
        store[unknown[0]], unknown = {"metadata": {"name": unknown[0]}, "spec": sibling}, []
    return store, unknown


SUM = re.compile(
    r"parent queue (?P<parent>\S+) validation failed: sum of children's (?P<field>deserved|guarantee) "
    r"\((?P<total>[^)]*)\)"
)


def _sibling_from_sum(case: Mapping[str, Any], store: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The spec of the one unrecorded child of a parent, as the webhook's refusal states it: its share of the sum of
    the children's deserved or guarantee that the message prints (in thousandths), beside the submitted queue and the
    recorded siblings; None when the message states no such sum."""
    m = SUM.search(case["observed"].get("message") or "")
    if m is None:
        return None
    field, parent = m["field"], m["parent"]
    children = [q for q in (*store.values(), _subject(case)) if (q.get("spec") or {}).get("parent") == parent]

    def figure(q: Mapping[str, Any], r: str) -> Fraction:
        values = (q.get("spec") or {}).get(field) or {}
        values = values.get("resource") or {} if field == "guarantee" else values
        return Quantity.parse(str(values[r])).value if r in values else Fraction(0)

    total = {r: Fraction(v) / 1000 for r, v in re.findall(r"([\w./-]+) ([\d.]+)", m["total"])}
    rest = {r: t - sum(figure(q, r) for q in children) for r, t in total.items()}
    amounts = {r: str(int(v)) for r, v in sorted(rest.items()) if v > 0}
    return {"parent": parent, field: {"resource": amounts} if field == "guarantee" else amounts}


def adapted(case: Mapping[str, Any]) -> list[Adapted]:
    """The policies that put the case's submission in policy terms: the existing queues with the object (CREATE,
    UPDATE); for a DELETE, the policy that owned the queue and the one without it (both must hold)."""
    store, _ = existing_queues(case)
    obj = _subject(case)
    operation = case["input"].get("operation", "CREATE")
    with_object = Adapted()
    for q in store.values():
        with_object.tenants[q["metadata"]["name"]] = tenant(q, with_object.unsaid)
    if obj["kind"] == "Queue":
        with_object.tenants[obj["metadata"]["name"]] = tenant(obj, with_object.unsaid)
    else:
        w = workload(obj, with_object.unsaid)
        if w is not None:
            with_object.workloads.append(w)
    if operation != "DELETE":
        return [with_object]
    without = Adapted({n: t for n, t in with_object.tenants.items() if n != obj["metadata"]["name"]})
    return [with_object, without]


@functools.cache
def _compile(text: str) -> Compilation:
    return compile_text(text, "adapted.yaml")


# ---------------------------------------------------------------------------------------------------------------
# What policyc emits everywhere (for the constructs it never writes)


@functools.cache
def corpus() -> tuple[Mapping[str, Any], ...]:
    """Every object policyc emits for the shipped policies and the vectors' trees."""
    from policyc.compiler import compile_file

    out = []
    for path in example_policies():
        out.extend(m.obj for a in compile_file(path).artifacts for m in a.manifests)
    for tree in vectors.load().trees:
        out.extend(m.obj for a in vectors.compiled(tree).artifacts for m in a.manifests)
    return tuple(out)


def _jobs(objects: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    return (o for o in objects if o.get("kind") == "Job" and o.get("apiVersion", "").startswith("batch.volcano.sh"))


def _queues(objects: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    return (o for o in objects if o.get("kind") == "Queue")


def _name(o: Mapping[str, Any]) -> str:
    return f"{o['kind']} {o['metadata']['name']}"


def tasks_with_min_available(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    return [_name(j) for j in _jobs(objects) if any("minAvailable" in t for t in j["spec"]["tasks"])]


def jobs_without_one_named_task(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    return [
        _name(j)
        for j in _jobs(objects)
        if len({t.get("name") for t in j["spec"].get("tasks") or ()}) != 1 or len(j["spec"]["tasks"]) != 1
    ]


def jobs_with(key: str) -> Callable[[Iterable[Mapping[str, Any]]], list[str]]:
    def found(objects: Iterable[Mapping[str, Any]]) -> list[str]:
        return [_name(j) for j in _jobs(objects) if key in j["spec"]]

    return found


def queues_deserving_less_than_guaranteed(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    out = []
    for q in _queues(objects):
        deserved = q["spec"].get("deserved") or {}
        for r, g in ((q["spec"].get("guarantee") or {}).get("resource") or {}).items():
            if r not in deserved or Quantity.from_json(deserved[r]) < Quantity.from_json(g):
                out.append(f"{_name(q)}: deserved {r}")
    return out


def queues_with_volcano_annotations(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    return [
        _name(q)
        for q in _queues(objects)
        if any(k.startswith("volcano.sh/") for k in (q["metadata"].get("annotations") or {}))
    ]


def queues_not_open(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    return [_name(q) for q in _queues(objects) if "state" in q["spec"] or "status" in q]


# ---------------------------------------------------------------------------------------------------------------
# The webhook's reasons, read


@dataclass(frozen=True)
class Fact:
    """A name (to appear verbatim) or a quantity (to appear as a figure of the same value) of a webhook's message."""

    text: str
    value: Fraction | None = None

    def found_in(self, message: str) -> bool:
        if self.value is None:
            return self.text in message
        return self.value in _figures(message)


def _figures(message: str) -> set[Fraction]:
    out = set()
    for token in re.findall(r"(?<![\w.])\d+(?:\.\d+)?[A-Za-z]{0,2}(?![\w.])", message):
        try:
            out.add(Quantity.parse(token).value)
        except QuantityError:
            continue
    return out


def _quantity(text: str) -> Fact:
    return Fact(text, Quantity.parse(text).value)


def _milli(text: str) -> Fact:
    """Volcano prints cpu and extended resources in thousandths ("56000.00" is 56)."""
    return Fact(text, Fraction(text) / 1000)


def _groups(**kinds: Callable[[str], Fact]) -> Callable[[re.Match[str]], list[Fact]]:
    return lambda m: [kinds.get(k, Fact)(v) for k, v in m.groupdict().items() if v is not None and k in kinds]


def _sums(m: re.Match[str]) -> list[Fact]:
    """The parent, and each resource whose children's sum exceeds the parent's figure, with both figures."""
    total = dict(re.findall(r"([\w./-]+) ([\d.]+)", m["total"]))
    limit = dict(re.findall(r"([\w./-]+) ([\d.]+)", m["limit"]))
    over = [r for r in total if Fraction(total[r]) > Fraction(limit.get(r, "0"))]
    return [Fact(m["parent"]), Fact(m["field"]), *(f for r in over for f in (_milli(total[r]), _milli(limit[r])))]


@dataclass(frozen=True)
class Reason:
    """A refusal's meaning: the policyc rules that refuse the same thing, the facts to find in their message, and for
    a construct policyc never writes, the check that finds it in emitted objects."""

    pattern: re.Pattern[str]
    rules: frozenset[str]
    facts: Callable[[re.Match[str]], list[Fact]] = lambda m: []
    never: Callable[[Iterable[Mapping[str, Any]]], list[str]] | None = None


def _reason(
    pattern: str,
    rules: Iterable[str] = (),
    facts: Callable[[re.Match[str]], list[Fact]] | None = None,
    never: Callable[[Iterable[Mapping[str, Any]]], list[str]] | None = None,
) -> Reason:
    return Reason(re.compile(pattern), frozenset(rules), facts or (lambda m: []), never)


REASONS = (
    _reason(r"'minAvailable' is greater than 'replicas' in task", never=tasks_with_min_available),
    _reason(r"job 'minAvailable' should not be greater than total replicas in tasks", ["invalid-value"]),
    # policyc completes a missing deserved with the guarantee (the language's rule): it writes deserved >= guarantee,
    # or judges the completed deserved against the capability
    _reason(
        r"deserved\.(?P<resource>\S+): Invalid value: \"<nil>\": deserved\[[^\]]+\] must be >= "
        r"guarantee\[[^\]]+\]=(?P<guarantee>\S+)",
        ["guarantee-above-deserved", "deserved-above-capability"],
        _groups(guarantee=_quantity),
        never=queues_deserving_less_than_guaranteed,
    ),
    _reason(
        r"deserved\[[^\]]+\]=(?P<deserved>\S+) must be >= guarantee\[[^\]]+\]=(?P<guarantee>\S+)",
        ["guarantee-above-deserved"],
        _groups(deserved=_quantity, guarantee=_quantity),
    ),
    _reason(
        r"deserved\[[^\]]+\]=(?P<deserved>\S+) must be <= capability\[[^\]]+\]=(?P<capability>\S+)",
        ["deserved-above-capability"],
        _groups(deserved=_quantity, capability=_quantity),
    ),
    _reason(
        r"Invalid value: \"(?P<value>[^\"]+)\": must be an integer", ["non-integer-quantity"], _groups(value=_quantity)
    ),
    _reason(
        r"spec\.weight in body should be less than or equal to (?P<maximum>\d+)",
        ["invalid-value"],
        _groups(maximum=_quantity),
    ),
    _reason(
        r"failed to get parent queue (?P<parent>\S+) of queue (?P<queue>\S+):",
        ["unknown-parent-queue"],
        _groups(parent=Fact, queue=Fact),
    ),
    _reason(r"queue (?P<queue>\S+) cannot use itself as parent", ["unknown-parent-queue"], _groups(queue=Fact)),
    _reason(
        r"queue (?P<queue>\S+) capability\[[^\]]+\]=(?P<capability>[\d.]+) exceeds its ancestor's "
        r"capability=(?P<ancestor>[\d.]+)",
        ["child-capability-above-ancestor"],
        _groups(queue=Fact, capability=_milli, ancestor=_milli),
    ),
    _reason(
        r"parent queue (?P<parent>\S+) validation failed: sum of children's (?P<field>deserved|guarantee) "
        r"\((?P<total>[^)]*)\) exceeds parent's \w+ limit \((?P<limit>[^)]*)\)",
        ["children-exceed-parent"],
        _sums,
    ),
    _reason(
        r"queues\.scheduling\.volcano\.sh \"(?P<queue>root|default)\" already exists",
        ["reserved-queue-name"],
        _groups(queue=Fact),
    ),
    _reason(
        r"(?P<queue>root) queue's resource attributes .* cannot be modified",
        ["reserved-queue-name"],
        _groups(queue=Fact),
    ),
    _reason(r"`(?P<queue>[^`]+)` queue can not be deleted", ["reserved-queue-name"], _groups(queue=Fact)),
    _reason(
        r"queue (?P<queue>\S+) can not be deleted because it has \d+ child queues",
        ["unknown-parent-queue"],
        _groups(queue=Fact),
    ),
    _reason(
        r"unable to find (?:job )?queue: queue\.scheduling\.volcano\.sh \"(?P<queue>[^\"]+)\" not found",
        ["unknown-tenant"],
        _groups(queue=Fact),
    ),
    _reason(
        r"can only submit job to leaf queue, queue `(?P<queue>[^`]+)`",
        ["workload-in-parent-queue"],
        _groups(queue=Fact),
    ),
    _reason(r"can only submit PodGroup to queue with state `Open`", never=queues_not_open),
    _reason(r"spec\.tasks in body should have at least 1 items", never=jobs_without_one_named_task),
    _reason(r"duplicated task name", never=jobs_without_one_named_task),
    _reason(r"unable to find job plugin", never=jobs_with("plugins")),
    _reason(r"spec\.policies\[\d+\]\.event: Unsupported value", never=jobs_with("policies")),
    _reason(r"spec\.tasks\[\d+\]\.replicas in body should be greater than or equal to 0", ["invalid-value"]),
    _reason(r"volcano\.sh/hierarchy must have the same length", never=queues_with_volcano_annotations),
)


def reason_of(message: str) -> tuple[Reason, re.Match[str]]:
    """The reason the webhook gives first in its message."""
    found = [(m.start(), i, r, m) for i, r in enumerate(REASONS) if (m := r.pattern.search(message))]
    assert found, f"a refusal this test cannot read (give REASONS its meaning): {message}"
    _, _, reason, match = min(found, key=lambda f: f[:2])
    return reason, match


# ---------------------------------------------------------------------------------------------------------------
# The tests


def _cases() -> list[Any]:
    found = vectors.cases("admission")
    return [pytest.param(c, id=c["id"]) for c in found] or [pytest.param(None, id="no-vectors")]


def _errors(compilations: Iterable[Compilation]) -> list[Any]:
    return [d for c in compilations for d in c.report.diagnostics if d.severity == "error"]


def _value_at(spec: Mapping[str, Any], path: Iterable[Any]) -> Any:
    node: Any = spec
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _rewritten(case: Mapping[str, Any], path: tuple[Any, ...]) -> bool:
    """Whether the webhook stored something else than the object said at the queue field `path` names (the policy's
    `spec.tenants[i].queue.<field>...`)."""
    if "queue" not in path:
        return False
    field_path = path[path.index("queue") + 1 :]
    submitted = _value_at(_subject(case).get("spec") or {}, field_path)
    stored = _value_at(case["observed"].get("storedSpec") or {}, field_path)
    return submitted != stored


@pytest.mark.parametrize("case", _cases())
def test_policyc_gives_the_webhooks_verdict(case):
    if case is None:
        missing_shared_data(vectors.directory())
    observed = case["observed"]
    policies = adapted(case)
    compilations = [_compile(p.text()) for p in policies]
    errors = _errors(compilations)
    _, unknown = existing_queues(case)
    if observed["verdict"] == "admitted":
        kept = [d for d in errors if not _rewritten(case, d.path)]
        if kept and unknown:
            pytest.skip(f"the verdict turns on queues whose spec no case records: {', '.join(unknown)}")
        assert not kept, [f"{d.code} {d.message}" for d in kept]
        return
    reason, match = reason_of(observed["message"])
    facts = reason.facts(match)
    agreeing = [d for d in errors if d.rule.name in reason.rules and all(f.found_in(d.message) for f in facts)]
    if agreeing:
        return
    if reason.never is not None:
        objects = [*corpus(), *(m.obj for c in compilations for a in c.artifacts for m in a.manifests)]
        assert reason.never(objects) == [], f"policyc writes what the webhook refuses: {observed['message']}"
        return
    if unknown:
        pytest.skip(f"the verdict turns on queues whose spec no case records: {', '.join(unknown)}")
    unsaid = "".join(f", without {u} (the policy cannot say it)" for p in policies for u in p.unsaid)
    said = [f"{d.code} {d.message}" for d in errors] or "nothing"
    pytest.fail(
        f"the webhook refused ({observed['message']}); policyc, given the object{unsaid}, says {said}; expected "
        f"{sorted(reason.rules)} naming {[f.text for f in facts]}"
    )


def _changed(desired: Any, stored: Any, path: str = "spec") -> Iterator[str]:
    """Where `stored` differs from what policyc wrote (quantities compared by value), and where it adds a field inside
    a list (which Argo CD's three-way diff of a custom resource reports)."""
    if isinstance(desired, Mapping) and isinstance(stored, Mapping):
        for key, value in desired.items():
            yield from _changed(value, stored.get(key), f"{path}.{key}")
    elif isinstance(desired, list) and isinstance(stored, list) and len(desired) == len(stored):
        for i, (d, s) in enumerate(zip(desired, stored, strict=True)):
            if d != s:
                yield f"{path}[{i}]"
    elif desired != stored and not _same_quantity(desired, stored):
        yield f"{path}: {desired!r} stored as {stored!r}"


def _same_quantity(a: Any, b: Any) -> bool:
    try:
        return isinstance(a, str) and isinstance(b, str) and Quantity.parse(a) == Quantity.parse(b)
    except QuantityError:
        return False


def _emitted_queue_cases() -> list[Any]:
    found = [c for c in vectors.cases("admission") if c["tree"] is not None and _subject(c)["kind"] == "Queue"]
    return [pytest.param(c, id=c["id"]) for c in found] or [pytest.param(None, id="no-vectors")]


@pytest.mark.parametrize("case", _emitted_queue_cases())
def test_stored_queue_keeps_what_policyc_wrote(case):
    """For the queues policyc emitted, the mutating webhook keeps every value policyc wrote (it adds
    dequeueStrategy and parent: root beside them, which Argo CD's diff leaves alone)."""
    if case is None:
        missing_shared_data(vectors.directory())
    obj = _subject(case)
    ours = next(q for q in vectors.emitted(case["tree"], "Queue") if q["metadata"]["name"] == obj["metadata"]["name"])
    assert ours["spec"] == obj["spec"], "the recorded queue is no longer what policyc emits"
    stored = case["observed"]["storedSpec"]
    assert list(_changed(ours["spec"], stored)) == []
    assert stored.get("parent", "root") == ours["spec"].get("parent", "root")
