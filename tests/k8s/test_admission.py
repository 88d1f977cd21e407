"""Rules of `policyc.k8s.admission` that the recorded admission vectors do not reach, with expected values worked
out by hand from Kubernetes' rules (the vectors test everything else: tests/k8s/test_admission_vectors.py)."""

from __future__ import annotations

from policyc.k8s.admission import admit_pod, pod_requests, pod_usage, quota_matches
from policyc.k8s.quantity import Quantity


def _class(name: str, value: int, *, default: bool = False, policy: str | None = None) -> dict:
    pc: dict = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}}
    pc["value"] = value
    if default:
        pc["globalDefault"] = True
    if policy:
        pc["preemptionPolicy"] = policy
    return pc


def _pod(*containers: dict, init: tuple[dict, ...] = (), **spec) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": list(containers), **({"initContainers": list(init)} if init else {}), **spec},
    }


def _container(name: str, requests: dict | None = None, limits: dict | None = None, **extra) -> dict:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"name": name, "image": "x", "resources": resources, **extra}


def test_of_several_global_defaults_the_lowest_value_applies() -> None:
    decision = admit_pod(
        _pod(_container("c")), priority_classes=[_class("hi", 900, default=True), _class("lo", 50, default=True)]
    )
    assert decision.pod["spec"]["priorityClassName"] == "lo"
    assert decision.pod["spec"]["priority"] == 50


def test_an_empty_class_name_without_a_default_class_is_left_out() -> None:
    # The API server's pod has no `priorityClassName` then (Go's omitempty drops the empty string): priority 0
    # and the default preemption policy, and the field gone.
    decision = admit_pod(_pod(_container("c"), priorityClassName=""), priority_classes=[_class("hi", 900)])
    assert decision.pod is not None
    assert "priorityClassName" not in decision.pod["spec"]
    assert (decision.pod["spec"]["priority"], decision.pod["spec"]["preemptionPolicy"]) == (0, "PreemptLowerPriority")


def test_an_explicit_preemption_policy_must_match_the_class() -> None:
    pod = _pod(_container("c"), priorityClassName="never", preemptionPolicy="PreemptLowerPriority")
    refusal = admit_pod(pod, priority_classes=[_class("never", 10, policy="Never")]).refusal
    assert refusal is not None and refusal.plugin == "Priority"
    assert "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided" in refusal.message


def test_a_zero_request_breaks_a_limit_to_request_ratio() -> None:
    limit_range = {
        "metadata": {"name": "lr"},
        "spec": {"limits": [{"type": "Container", "maxLimitRequestRatio": {"cpu": "4"}}]},
    }
    refusal = admit_pod(_pod(_container("c", {"cpu": "0"}, {"cpu": "1"})), limit_ranges=[limit_range]).refusal
    assert refusal is not None and refusal.object == "lr"
    assert refusal.message.endswith(
        "cpu max limit to request ratio per Container is 4, but no request is specified or request is 0"
    )


def test_sidecars_add_up_and_other_init_containers_take_the_larger_part() -> None:
    # containers 1 + 2 = 3 cpu; the sidecar (restartPolicy Always) adds 1 -> 4; the init container runs beside the
    # sidecar: 5 + 1 = 6 > 4, so the pod requests 6. Memory: 1Gi (container) + 1Gi (sidecar) = 2Gi > 512Mi + 1Gi.
    pod = _pod(
        _container("a", {"cpu": "1", "memory": "1Gi"}),
        _container("b", {"cpu": "2"}),
        init=(
            _container("sidecar", {"cpu": "1", "memory": "1Gi"}, restartPolicy="Always"),
            _container("setup", {"cpu": "5", "memory": "512Mi"}),
        ),
    )
    assert pod_requests(pod) == {"cpu": Quantity.parse("6"), "memory": Quantity.parse("2Gi")}


def test_pods_count_only_towards_requests_of_an_extended_resource() -> None:
    pod = _pod(_container("c", {"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": "2"}))
    usage = pod_usage(admit_pod(pod).pod)
    assert usage["requests.nvidia.com/gpu"] == Quantity.parse("2")
    assert "limits.nvidia.com/gpu" not in usage and "nvidia.com/gpu" not in usage
    limits_only = {"metadata": {"name": "q"}, "spec": {"hard": {"limits.nvidia.com/gpu": "0", "nvidia.com/gpu": "0"}}}
    assert not quota_matches(limits_only, pod)
    assert admit_pod(pod, quotas=[limits_only]).admitted


def test_several_limit_ranges_default_in_name_order_and_the_last_annotation_stays() -> None:
    first = {"metadata": {"name": "a"}, "spec": {"limits": [{"type": "Container", "default": {"cpu": "1"}}]}}
    second = {
        "metadata": {"name": "b"},
        "spec": {"limits": [{"type": "Container", "default": {"cpu": "3", "memory": "1Gi"}}]},
    }
    pod = admit_pod(_pod(_container("c")), limit_ranges=[second, first]).pod
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "1", "memory": "1Gi"},
        "requests": {"cpu": "1", "memory": "1Gi"},
    }
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: memory request for container c; memory limit for container c"
    )


def test_a_priority_scope_value_that_is_no_label_value_fails_every_pod() -> None:
    """The quota plugin reads a PriorityClass scope as a label selector (labels.NewRequirement): a class name of
    64 characters or more is a valid quota, yet every pod create in its namespace then fails."""
    long_name = "c" * 64
    quota = {
        "metadata": {"name": "classes"},
        "spec": {
            "hard": {"pods": "0"},
            "scopeSelector": {
                "matchExpressions": [{"scopeName": "PriorityClass", "operator": "NotIn", "values": [long_name]}]
            },
        },
    }
    refusal = admit_pod(_pod(_container("c")), quotas=[quota], priority_classes=[_class(long_name, 5)]).refusal
    assert refusal is not None and refusal.code == 500 and refusal.object == "classes"
    assert "error matching scopes of quota classes" in refusal.message
    fine = {**quota, "spec": {**quota["spec"], "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "NotIn", "values": ["c" * 63]}]}}}  # fmt: skip
    assert admit_pod(_pod(_container("c"), priorityClassName="c" * 63), quotas=[fine],
                     priority_classes=[_class("c" * 63, 5)]).admitted  # fmt: skip
