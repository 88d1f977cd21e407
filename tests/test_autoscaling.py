"""Inference autoscaling: the HorizontalPodAutoscaler or KEDA ScaledObject beside an autoscaled Deployment, and the
checks of its bounds against the tenant's quota, its queue and the pools.

The base policy, by hand: pool l4-serve has 10 nodes of 4 L4s, 48 cpu and 192Gi; a pod of `chat` takes 1 GPU, 8 cpu
and 32Gi, so a node holds min(4/1, 48/8, 192/32) = 4 pods and the pool 40. Tenant web's quota allows 24 GPUs (24
pods), 400 cpu (50 pods) and 1500Gi (46 pods): 24 pods; its queue caps GPUs at 40 (40 pods). Unstated, the cpu limit
is the pod's node share, 48 x 1/4 = 12 cpu, 150% of the 8 cpu request.
"""

from __future__ import annotations

import io
import re

import kubernetes_validate
import pytest
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

from policyc.artifacts import Artifact, Manifest
from policyc.backends.autoscaling import keda_number, validate_horizontal_pod_autoscaler
from policyc.commands import report
from policyc.commands.explain import provenance_rows, render_provenance_text
from policyc.proof.schemas import verify
from tests.conftest import POLICIES, missing_shared_data, shared_dir
from tests.test_output_schemas import _strict

BASE = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: serve}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: l4, products: [NVIDIA-L4]}
  nodePools:
    - name: l4-serve
      usage: inference
      nodes: ["l4-[01-10]"]
      gpu: {product: NVIDIA-L4, count: 4}
      allocatable: {cpu: "48", memory: 192Gi}
  priorityClasses:
    - {name: online, value: 2000}
  tenants:
    - name: web
      namespaces: [web]
      queue: {capability: {gpu: 40}}
      quota: {requests: {cpu: "400", memory: 1500Gi, gpu: 24}}
  workloads:
    - name: chat
      type: inference
      tenant: web
      gpuTier: l4
      gpus: 1
      cpu: "8"
      memory: 32Gi
      priorityClass: online
      autoscale: {min: 2, max: 16, cpu: 70}
"""
KEDA = BASE.replace("  tenants:\n", "  autoscaling: {keda: true}\n  tenants:\n")
AUTOSCALE = "      autoscale: {min: 2, max: 16, cpu: 70}\n"
LABELS = {
    "app.kubernetes.io/managed-by": "policyc",
    "app.kubernetes.io/name": "chat",
    "app.kubernetes.io/part-of": "serve",
}
META = {"name": "chat", "namespace": "web", "labels": LABELS, "annotations": {"argocd.argoproj.io/sync-wave": "1"}}
TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "chat"}
PROMETHEUS = """\
      autoscale:
        min: 0
        max: 16
        prometheus:
          serverAddress: http://prometheus.monitoring:9090
          query: sum(vllm:num_requests_waiting{namespace="web"})
          threshold: 5
          activationThreshold: 0.5
"""


def with_autoscale(text: str, autoscale: str) -> str:
    assert AUTOSCALE in text
    return text.replace(AUTOSCALE, autoscale)


def template(result, name: str = "chat") -> list[dict]:
    return list(YAML(typ="safe", pure=True).load_all(io.BytesIO(result.files[f"templates/{name}.yaml"].data)))


def errors(result) -> list[tuple[str, int, int, str, str | None]]:
    return [(d.code, d.line, d.column, d.message, d.hint) for d in result.report.errors]


def position(text: str, needle: str, key: str = "") -> tuple[int, int]:
    """1-based line and column of `needle` in `text` (of the first `needle` after `key`, when given: a diagnostic
    points at a field's value)."""
    index = text.index(key + needle) + len(key)
    line = text.count("\n", 0, index) + 1
    return line, index - text.rfind("\n", 0, index)


# --- what is emitted -------------------------------------------------------------------------------------------


def test_hpa_beside_a_deployment_without_replicas(compile_text) -> None:
    result = compile_text(BASE)
    assert result.ok, errors(result)
    deployment, hpa = template(result)
    assert deployment["kind"] == "Deployment" and "replicas" not in deployment["spec"]
    assert hpa == {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": META,
        "spec": {
            "scaleTargetRef": TARGET,
            "minReplicas": 2,
            "maxReplicas": 16,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                                   "averageUtilization": 70}}}],
        },
    }  # fmt: skip
    kubernetes_validate.validate(hpa, "1.36", strict=True)  # an oracle independent of policyc.proof.schemas


def test_hpa_on_a_custom_metric(compile_text) -> None:
    autoscale = "      autoscale: {min: 1, max: 8, metric: {name: vllm_num_requests_waiting, averageValue: 500m}}\n"
    result = compile_text(with_autoscale(BASE, autoscale))
    assert result.ok, errors(result)
    hpa = template(result)[1]
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 8)
    assert hpa["spec"]["metrics"] == [
        {
            "type": "Pods",
            "pods": {"metric": {"name": "vllm_num_requests_waiting"},
                     "target": {"type": "AverageValue", "averageValue": "500m"}},
        }
    ]  # fmt: skip
    kubernetes_validate.validate(hpa, "1.36", strict=True)


def test_a_workload_without_autoscale_keeps_its_replicas(compile_text) -> None:
    result = compile_text(with_autoscale(BASE, "      replicas: 3\n"))
    assert result.ok, errors(result)
    [deployment] = template(result)
    assert deployment["spec"]["replicas"] == 3


def test_scaled_object_with_keda(compile_text) -> None:
    result = compile_text(with_autoscale(KEDA, PROMETHEUS.replace("        prometheus:", "        cpu: 70\n"
                                                                    "        prometheus:")))  # fmt: skip
    assert result.ok, errors(result)
    deployment, scaled = template(result)
    assert "replicas" not in deployment["spec"]
    assert scaled == {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": META,
        "spec": {
            "scaleTargetRef": TARGET,
            "minReplicaCount": 0,
            "maxReplicaCount": 16,
            "triggers": [
                {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "70"}},
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": "http://prometheus.monitoring:9090",
                        "query": 'sum(vllm:num_requests_waiting{namespace="web"})',
                        "threshold": "5",
                        "activationThreshold": "0.5",
                    },
                },
            ],
        },
    }


def _upstream_scaled_object_schema() -> Draft202012Validator:
    """KEDA's own CRD (../shared/crds/keda, v2.20.2), with the API server's structural strictness."""
    path = shared_dir() / "crds" / "keda" / "keda.sh_scaledobjects.yaml"
    if not path.exists():
        missing_shared_data(path)
    crd = YAML(typ="safe", pure=True).load(path.read_text())
    [served] = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return Draft202012Validator(_strict(served["schema"]["openAPIV3Schema"]))


def test_scaled_object_passes_keda_crd(compile_text) -> None:
    result = compile_text(with_autoscale(KEDA, PROMETHEUS))
    assert result.ok, errors(result)
    scaled = template(result)[1]
    validator = _upstream_scaled_object_schema()
    assert not [e.message for e in validator.iter_errors(scaled)]
    # The oracle can fail: trigger metadata are strings, and a ScaledObject needs a trigger.
    numeric = {**scaled, "spec": {**scaled["spec"], "triggers": [{"type": "prometheus", "metadata": {"threshold": 5}}]}}
    assert list(validator.iter_errors(numeric))
    assert list(validator.iter_errors({**scaled, "spec": {**scaled["spec"], "triggers": []}}))


@pytest.mark.parametrize(("value", "text"), [(5, "5"), (5.0, "5"), (0.5, "0.5"), (12.25, "12.25")])
def test_keda_numbers_are_strings_go_parses(value: float, text: str) -> None:
    assert keda_number(value) == text
    assert float(text) == value  # what Go's strconv.ParseFloat reads back, for these decimal forms


def test_explain_names_the_autoscale_lines(compile_text) -> None:
    result = compile_text(BASE)
    line, column = position(BASE, "{min: 2")
    rows = provenance_rows(result, "HorizontalPodAutoscaler/chat")
    assert render_provenance_text(rows) == (
        f"templates/chat.yaml: HorizontalPodAutoscaler web/chat <- policy.yaml:{line}:{column} 'workloads[0].autoscale'"
    )
    keda = compile_text(with_autoscale(KEDA, PROMETHEUS))
    rows = provenance_rows(keda, "ScaledObject/web/chat")
    keda_line, keda_column = position(KEDA, "true}")
    auto_line, auto_column = position(KEDA.replace(AUTOSCALE, PROMETHEUS), "min: 0")
    assert render_provenance_text(rows) == (
        f"templates/chat.yaml: ScaledObject web/chat <- policy.yaml:{keda_line}:{keda_column} 'autoscaling.keda'; "
        f"policy.yaml:{auto_line}:{auto_column} 'workloads[0].autoscale'"
    )


# --- bounds against the quota, the queue and the pools --------------------------------------------------------


def test_a_max_over_the_quota_fails_at_max_with_a_hint_that_works(compile_text) -> None:
    text = with_autoscale(BASE, "      autoscale: {min: 2, max: 30, cpu: 70}\n")
    result = compile_text(text)
    line, column = position(text, "30", "max: ")
    assert errors(result) == [
        (
            "PC486",
            line,
            column,
            "workload 'chat' may scale to 30 pods, which take 30 requests.nvidia.com/gpu in namespace 'web', but "
            "ResourceQuota 'tenant-quota' allows 24: it admits 24 of them",
            "lower autoscale.max to at most 24, or raise tenant 'web' quota.requests.gpu to at least 30",
        )
    ]
    assert compile_text(text.replace("max: 30", "max: 24")).ok
    assert compile_text(text.replace("gpu: 24}", "gpu: 30}")).ok


def test_several_quota_keys_over(compile_text) -> None:
    # 30 pods take 30 GPUs (24 allowed) and 960Gi (quota lowered to 800Gi: 25 pods of 32Gi): 24 pods fit both.
    text = with_autoscale(BASE, "      autoscale: {min: 2, max: 30, cpu: 70}\n").replace("1500Gi", "800Gi")
    [(code, _, _, message, hint)] = errors(compile_text(text))
    assert code == "PC486" and message.endswith("it admits 24 of them (also over: requests.memory 960Gi of 800Gi)")
    assert hint == (
        "lower autoscale.max to at most 24, or raise tenant 'web' quota.requests.gpu to at least 30 and "
        "quota.requests.memory to at least 960Gi"
    )
    assert compile_text(text.replace("gpu: 24}", "gpu: 30}").replace("800Gi", "960Gi")).ok


def test_the_priority_class_quota_counts(compile_text) -> None:
    # The class 'online' may take 10 GPUs of the 24: 16 pods of 1 GPU are 6 too many.
    text = BASE.replace("gpu: 24}}", "gpu: 24}, perPriorityClass: {online: {gpu: 10}}}")
    result = compile_text(text)
    line, column = position(text, "16", "max: ")
    assert errors(result) == [
        (
            "PC486",
            line,
            column,
            "workload 'chat' may scale to 16 pods, which take 16 requests.nvidia.com/gpu in namespace 'web', but "
            "ResourceQuota 'tenant-priority-online' allows 10: it admits 10 of them",
            "lower autoscale.max to at most 10, or raise tenant 'web' quota.perPriorityClass.online.gpu to at least 16",
        )
    ]
    assert compile_text(text.replace("max: 16", "max: 10")).ok
    assert compile_text(text.replace("{gpu: 10}", "{gpu: 16}")).ok


def test_a_min_over_the_quota_fails_at_min(compile_text) -> None:
    text = with_autoscale(BASE, "      autoscale: {min: 30, max: 30, cpu: 70}\n")
    [(code, line, column, _, hint)] = errors(compile_text(text))
    assert (code, (line, column)) == ("PC486", position(text, "30", "min: "))
    assert hint == (
        "lower autoscale.min and autoscale.max to at most 24, or raise tenant 'web' quota.requests.gpu to at least 30"
    )
    assert compile_text(text.replace("min: 30, max: 30", "min: 24, max: 24")).ok


def test_a_max_over_the_pools_fails_at_max(compile_text) -> None:
    # Quota and queue raised out of the way: the pool's 40 pods are the bound.
    text = with_autoscale(BASE, "      autoscale: {min: 2, max: 50, cpu: 70}\n")
    text = text.replace("gpu: 24}", "gpu: 64}").replace("gpu: 40}", "gpu: 64}").replace("1500Gi", "1600Gi")
    result = compile_text(text)
    line, column = position(text, "50", "max: ")
    assert errors(result) == [
        (
            "PC426",
            line,
            column,
            "workload 'chat' runs 50 pods at once (1 nvidia.com/gpu, 8 cpu, 32Gi memory each), but the pools it can "
            "use hold at most 40 such pods (l4-serve 10 nodes x 4)",
            "lower max to at most 40, or add nodes to those pools",
        )
    ]
    assert compile_text(text.replace("max: 50", "max: 40")).ok


def test_a_max_over_the_queue_fails_at_max(compile_text) -> None:
    text = BASE.replace("capability: {gpu: 40}", "capability: {gpu: 12}")
    [(code, line, column, _, hint)] = errors(compile_text(text))
    assert (code, (line, column)) == ("PC427", position(text, "16", "max: "))
    assert hint == "raise tenant 'web' queue.capability.gpu to at least 16, or lower max"
    assert compile_text(text.replace("max: 16", "max: 12")).ok


def test_the_report_shows_the_headroom(compile_text) -> None:
    markdown = report.render_markdown(compile_text(BASE))
    assert "| workload | min | max | namespace quota | queue | pools |" in markdown
    assert "| chat | 2 | 16 | 24 | 40 | 40 |" in markdown  # quota 24 GPUs, queue 40 GPUs, pool 40 pods
    assert "| chat | web | web | 16 |" in markdown  # all pods at once: the autoscaler's max
    assert "Autoscalers" not in report.render_markdown(compile_text(with_autoscale(BASE, "      replicas: 2\n")))
    unbounded = BASE.replace('      quota: {requests: {cpu: "400", memory: 1500Gi, gpu: 24}}\n', "")
    assert "| chat | 2 | 16 | - | 40 | 40 |" in report.render_markdown(compile_text(unbounded))  # no quota: no bound


# --- mistakes --------------------------------------------------------------------------------------------------


def test_training_work_does_not_autoscale(compile_text) -> None:
    text = BASE.replace("usage: inference", "usage: training").replace("type: inference", "type: training")
    text = text.replace("      priorityClass: online\n", "      kind: Job\n")
    [(code, line, column, message, hint)] = errors(compile_text(text))
    assert (code, (line, column)) == ("PC480", position(text, "{min: 2"))
    assert message == "workload 'chat' has autoscale but is training work (Job): only inference Deployments autoscale"
    assert hint == "remove autoscale: a training job runs its replicas (an elastic PyTorchJob grows with elastic)"
    assert compile_text(text.replace(AUTOSCALE, "")).ok


def test_an_inference_job_does_not_autoscale(compile_text) -> None:
    text = BASE.replace("      priorityClass: online\n", "      priorityClass: online\n      kind: Job\n")
    [(code, _, _, message, hint)] = errors(compile_text(text))
    assert code == "PC480" and "is a Job: only a Deployment autoscales" in message
    assert hint == "use kind: Deployment, or remove autoscale"
    assert compile_text(text.replace("      kind: Job\n", "      kind: Deployment\n")).ok


def test_replicas_beside_autoscale(compile_text) -> None:
    text = BASE.replace(AUTOSCALE, "      replicas: 4\n" + AUTOSCALE)
    [(code, line, column, _, _)] = errors(compile_text(text))
    assert (code, (line, column)) == ("PC481", position(text, "4", "replicas: "))
    assert compile_text(BASE).ok  # the hint: remove replicas


def test_max_below_min(compile_text) -> None:
    text = with_autoscale(BASE, "      autoscale: {min: 4, max: 2, cpu: 70}\n")
    [(code, line, column, _, hint)] = errors(compile_text(text))
    assert (code, (line, column)) == ("PC482", position(text, "2", "max: "))
    assert hint == "raise autoscale.max to at least 4, or lower autoscale.min"
    assert compile_text(text.replace("max: 2", "max: 4")).ok


def test_scale_to_zero_only_with_keda_and_a_trigger_that_wakes(compile_text) -> None:
    zero = "      autoscale: {min: 0, max: 8, cpu: 70}\n"
    [(code, _, _, message, hint)] = errors(compile_text(with_autoscale(BASE, zero)))
    assert code == "PC483" and "HPAScaleToZero" in message and "Kubernetes 1.36" in message
    assert hint.startswith("set autoscale.min to 1 or more")
    assert compile_text(with_autoscale(BASE, zero.replace("min: 0", "min: 1"))).ok
    [(code, _, _, message, _)] = errors(compile_text(with_autoscale(KEDA, zero)))
    assert code == "PC483" and "CPU alone" in message
    assert compile_text(with_autoscale(KEDA, zero.replace("min: 0", "min: 1"))).ok
    assert compile_text(with_autoscale(KEDA, PROMETHEUS)).ok


@pytest.mark.parametrize(
    ("policy", "autoscale", "at"),
    [
        (BASE, "      autoscale: {min: 1, max: 8}\n", "{min: 1"),
        (BASE, PROMETHEUS.replace("min: 0", "min: 1"), "serverAddress"),
        (KEDA, "      autoscale: {min: 1, max: 8, metric: {name: queue_depth, averageValue: 5}}\n", "{name: queue"),
    ],
    ids=["no-metric", "prometheus-without-keda", "custom-metric-with-keda"],
)
def test_metrics_the_autoscaler_cannot_read(compile_text, policy: str, autoscale: str, at: str) -> None:
    text = with_autoscale(policy, autoscale)
    [(code, line, column, _, _)] = errors(compile_text(text))
    assert (code, (line, column)) == ("PC484", position(text, at))


def test_metric_hints_work(compile_text) -> None:
    assert compile_text(with_autoscale(BASE, "      autoscale: {min: 1, max: 8, cpu: 70}\n")).ok
    assert compile_text(with_autoscale(KEDA, PROMETHEUS.replace("min: 0", "min: 1"))).ok


def test_a_cpu_target_the_limit_never_lets_pods_reach(compile_text) -> None:
    # Limit 8 = request 8: at most 100% of the request; 120% is never reached.
    text = with_autoscale(BASE, '      limits: {cpu: "8"}\n      autoscale: {min: 2, max: 16, cpu: 120}\n')
    [(code, line, column, message, hint)] = errors(compile_text(text))
    assert (code, (line, column)) == ("PC485", position(text, "120", "cpu: "))
    assert message == (
        "workload 'chat' aims at 120% of its cpu request (8), but its pods may use at most their limit (8), 100% of "
        "it: the autoscaler never adds pods for CPU"
    )
    assert hint == "lower autoscale.cpu to at most 100, or raise limits.cpu to at least 9600m"  # 8 x 120% = 9.6
    assert compile_text(text.replace('cpu: "8"}', "cpu: 9600m}")).ok
    assert compile_text(text.replace("cpu: 120", "cpu: 100")).ok
    # Unstated, the limit is the node share, 12 cpu: 150% is reachable, 151% is not.
    assert compile_text(with_autoscale(BASE, "      autoscale: {min: 2, max: 16, cpu: 150}\n")).ok
    over = errors(compile_text(with_autoscale(BASE, "      autoscale: {min: 2, max: 16, cpu: 151}\n")))
    assert [e[0] for e in over] == ["PC485"]


def test_keda_hpa_name_limit(compile_text) -> None:
    long = "a" * 55  # keda-hpa- + 55 = 64 characters
    text = KEDA.replace("name: chat", f"name: {long}")
    [(code, line, column, _, hint)] = errors(compile_text(text))
    assert (code, (line, column)) == ("PC487", position(text, long))
    assert hint == "shorten the workload's name to at most 54 characters"
    assert compile_text(KEDA.replace("name: chat", f"name: {'a' * 54}")).ok
    assert compile_text(BASE.replace("name: chat", f"name: {long}")).ok  # no KEDA: the HPA is named as the workload


@pytest.mark.parametrize(
    ("field", "value", "code", "message"),
    [
        ("threshold", "0", "PC104", "'workloads[0].autoscale.prometheus.threshold' is 0: KEDA divides the query's "
         "value by the threshold to count pods, so it is above 0"),
        ("threshold", '"5"', "PC102",
         "'workloads[0].autoscale.prometheus.threshold' must be a number, not the string '5'"),
        ("threshold", ".inf", "PC006", ".inf is not a finite number"),
        ("activationThreshold", ".nan", "PC006", ".nan is not a finite number"),
        ("serverAddress", "prometheus:9090", "PC104",
         "'workloads[0].autoscale.prometheus.serverAddress': 'prometheus:9090' is not an http(s) URL"),
    ],
)  # fmt: skip
def test_prometheus_fields_are_validated(compile_text, field: str, value: str, code: str, message: str) -> None:
    text = re.sub(rf"({field}: ).*", lambda m: m.group(1) + value, with_autoscale(KEDA, PROMETHEUS), count=1)
    [(found, line, column, said, _)] = errors(compile_text(text))
    assert (found, (line, column), said) == (code, position(text, value, f"{field}: "), message)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("{name: queue_depth, averageValue: 0}",
         "'workloads[0].autoscale.metric.averageValue': averageValue must be above zero"),
        ("{name: a/b, averageValue: 1}", "'workloads[0].autoscale.metric.name': 'a/b' is not a metric name"),
    ],
)  # fmt: skip
def test_custom_metric_fields_are_validated(compile_text, metric: str, message: str) -> None:
    text = with_autoscale(BASE, f"      autoscale: {{min: 1, max: 8, metric: {metric}}}\n")
    [(code, _, _, said, _)] = errors(compile_text(text))
    assert (code, said) == ("PC104", message)


# --- the API server's own validation of a HorizontalPodAutoscaler ---------------------------------------------


def hpa(*drop: str, **spec) -> dict:
    """A HorizontalPodAutoscaler with `spec` changed and the fields `drop` left out."""
    fields = {"scaleTargetRef": TARGET, "minReplicas": 1, "maxReplicas": 4, **spec}
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "chat", "namespace": "web"},
        "spec": {k: v for k, v in fields.items() if k not in drop},
    }


CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}


# Expected messages worked out from kubernetes pkg/apis/autoscaling/validation/validation.go (field.Invalid /
# Required / Forbidden as kube-apiserver prints them), with the default feature gates (HPAScaleToZero off).
@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (hpa(metrics=[CPU]), []),
        (hpa(minReplicas=0), ["spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"]),
        (hpa("minReplicas", maxReplicas=0), ["spec.maxReplicas: Invalid value: 0: must be greater than 0"]),
        (hpa(minReplicas=5), ["spec.maxReplicas: Invalid value: 4: must be greater than or equal to `minReplicas`"]),
        (hpa(scaleTargetRef={"kind": "Deployment", "name": "a/b"}),
         ["spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'"]),
        (hpa(scaleTargetRef={"name": "chat"}), ["spec.scaleTargetRef.kind: Required value"]),
        (hpa(metrics=[{"type": "Pods", "pods": {"metric": {"name": "q"}, "target": {"type": "AverageValue"}}}]),
         ["spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue"]),
        (hpa(metrics=[{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 0}}}]),
         ["spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"]),
        (hpa(metrics=[{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "AverageValue", "averageValue": "0"}}}]),
         ['spec.metrics[0].resource.target.averageValue: Invalid value: "0": must be positive']),
        (hpa(metrics=[{"type": "Pods", "resource": CPU["resource"]}]),
         ["spec.metrics[0].pods: Required value: must populate information for the given metric source",
          "spec.metrics[0].resource: Forbidden: must populate the given metric source only"]),
    ],
    ids=["valid", "min-zero", "max-zero", "max-below-min", "target-name", "target-kind", "pods-average",
         "utilization-zero", "average-zero", "wrong-source"],
)  # fmt: skip
def test_hpa_api_validation(obj: dict, expected: list[str]) -> None:
    assert validate_horizontal_pod_autoscaler(obj) == expected


def test_verification_reports_an_invalid_hpa(compile_text) -> None:
    result = compile_text(BASE)
    bad = {**template(result)[1]}
    bad["spec"] = {**bad["spec"], "minReplicas": 0}
    found = verify([Artifact("templates/chat.yaml", (Manifest(bad, (("spec",),)),), template=True)], "1.36")
    assert [(d.code, "must be greater than or equal to 1" in d.message) for d in found] == [("PC901", True)]


# --- the rest of the pipeline ----------------------------------------------------------------------------------


def test_proofs_and_determinism(compile_text) -> None:
    first, second = compile_text(BASE), compile_text(BASE)
    assert first.ok and second.ok
    assert {p: f.data for p, f in first.files.items()} == {p: f.data for p, f in second.files.items()}
    # The template is a template: not in what Argo CD applies.
    assert "templates/chat.yaml" not in first.files["kustomization.yaml"].data.decode()


AI_PROD_EXAMPLE = """\
      autoscale:
        min: 2
        max: 48
        cpu: 70
        prometheus:
          serverAddress: http://prometheus-operated.monitoring.svc:9090
          query: sum(vllm:num_requests_waiting{namespace="ai-team-b", model_name="chat"})
          threshold: 4
"""


def test_the_full_example_autoscales_within_its_quota(compile_text) -> None:
    """policies/ai-prod.yaml with docs/autoscaling.md's example (until it carries one): chat-serving's max within
    team-b's quota of 80 GPUs per namespace, its queue's 120 and its pools' 182 pods."""
    source = (POLICIES / "ai-prod.yaml").read_text()
    if "autoscale:" not in source:
        assert "      gpus: 1\n      replicas: 6\n" in source
        source = source.replace("      gpus: 1\n      replicas: 6\n", "      gpus: 1\n" + AI_PROD_EXAMPLE)
        source = source.replace("\n  tenants:\n", "\n  autoscaling: {keda: true}\n\n  tenants:\n", 1)
    result = compile_text(source, "ai-prod.yaml")
    assert result.ok, errors(result)
    [h] = report.figures(result.cluster).autoscalers
    assert h.max <= min(h.quota, h.queue, h.pools)
