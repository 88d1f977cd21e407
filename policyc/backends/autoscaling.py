"""Autoscalers of inference Deployments, written beside the Deployment in its template (`templates/<workload>.yaml`):
an `autoscaling/v2` HorizontalPodAutoscaler, or, where the policy says KEDA is installed (`spec.autoscaling.keda`), a
`keda.sh/v1alpha1` ScaledObject, from which KEDA makes and drives the HorizontalPodAutoscaler itself.

- The Deployment of an autoscaled workload has no `replicas` (`workloads.deployment`): whoever applies it, Argo CD or
  `kubectl apply`, would otherwise set the replicas back to the file's on every sync and fight the autoscaler
  (Kubernetes' "Migrating Deployments and StatefulSets to horizontal autoscaling"; Argo CD's "Leaving room for
  imperativeness"). It starts with one pod, which the autoscaler raises to `min` at once.
- The autoscaler carries the Argo CD sync wave 1, one after its Deployment's (0, the default): Argo CD applies the
  resources of one wave together, and KEDA's admission webhook refuses a ScaledObject with a cpu trigger whose
  Deployment it cannot read (`verifyCPUMemoryScalers`, kedacore/keda `apis/keda/v1alpha1/scaledobject_webhook.go`).
- CPU is `Resource` `cpu` `Utilization` (percent of the pods' request); a custom metric is a `Pods` metric of the
  custom metrics API with an `AverageValue` target; a Prometheus query is KEDA's `prometheus` trigger, whose metadata
  are strings (`threshold` is parsed as a float: "5", "0.5"), aiming at `threshold` per pod (KEDA's default
  `AverageValue`).

`validate_horizontal_pod_autoscaler` is the API server's own validation of what policyc writes
(`pkg/apis/autoscaling/validation/validation.go`), run by `policyc.proof.schemas` beside the OpenAPI schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from policyc.artifacts import Artifact, Manifest
from policyc.ir import Autoscale, Cluster, Workload
from policyc.k8s import names
from policyc.k8s.objects import metadata
from policyc.k8s.quantity import Quantity, QuantityError
from policyc.k8s.validation import FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED, FieldError
from policyc.pods import NAME_LABEL

HPA_API = ("autoscaling/v2", "HorizontalPodAutoscaler")
KEDA_API = ("keda.sh/v1alpha1", "ScaledObject")
SCALE_TARGET = {"apiVersion": "apps/v1", "kind": "Deployment"}
WAVE = "1"
"""The autoscaler's Argo CD sync wave: after its Deployment's (0)."""
KEDA_HPA_PREFIX = "keda-hpa-"
"""KEDA names the HorizontalPodAutoscaler of a ScaledObject `keda-hpa-<name>` (`getHpaName`), a name it keeps to 63
characters, as it does the ScaledObject's (`verifyName`)."""
KEDA_NAME_LIMIT = 63
KEDA_KEPT = ("spec", "autoscaling", "keda")
"""Where the policy says KEDA is installed (a source of every ScaledObject)."""


def autoscaled(cluster: Cluster, w: Workload) -> bool:
    """Whether the workload gets an autoscaler: an inference Deployment with `autoscale` (others are refused)."""
    return w.autoscale is not None and w.type == "inference" and w.kind == "Deployment"


def attach(cluster: Cluster, templates: Sequence[Artifact]) -> list[Artifact]:
    """The workload templates, each autoscaled Deployment's with its autoscaler beside it."""
    by_path = {f"templates/{w.name}.yaml": w for w in cluster.workloads if autoscaled(cluster, w)}
    out = []
    for a in templates:
        w = by_path.get(a.path) if a.template else None
        out.append(replace(a, manifests=(*a.manifests, autoscaler(cluster, w))) if w is not None else a)
    return out


def autoscaler(cluster: Cluster, w: Workload) -> Manifest:
    a = w.autoscale
    assert a is not None
    meta = metadata(
        w.name, cluster.name, namespace=w.namespace, labels={NAME_LABEL: w.name},
        annotations={"argocd.argoproj.io/sync-wave": WAVE},
    )  # fmt: skip
    target = {**SCALE_TARGET, "name": w.name}
    if cluster.keda:
        spec: dict = {"scaleTargetRef": target, "minReplicaCount": a.min, "maxReplicaCount": a.max,
                      "triggers": triggers(a)}  # fmt: skip
        obj = {"apiVersion": KEDA_API[0], "kind": KEDA_API[1], "metadata": meta, "spec": spec}
        return Manifest(obj, (a.path, KEDA_KEPT))
    spec = {"scaleTargetRef": target, "minReplicas": a.min, "maxReplicas": a.max, "metrics": metrics(a)}
    return Manifest({"apiVersion": HPA_API[0], "kind": HPA_API[1], "metadata": meta, "spec": spec}, (a.path,))


def metrics(a: Autoscale) -> list[dict]:
    """The HorizontalPodAutoscaler's metrics: CPU use, then the custom metric."""
    out = []
    if a.cpu is not None:
        target = {"type": "Utilization", "averageUtilization": a.cpu}
        out.append({"type": "Resource", "resource": {"name": "cpu", "target": target}})
    if a.metric is not None:
        name, average = a.metric
        target = {"type": "AverageValue", "averageValue": str(average)}
        out.append({"type": "Pods", "pods": {"metric": {"name": name}, "target": target}})
    return out


def triggers(a: Autoscale) -> list[dict]:
    """The ScaledObject's triggers: CPU use, then the Prometheus query."""
    out: list[dict] = []
    if a.cpu is not None:
        out.append({"type": "cpu", "metricType": "Utilization", "metadata": {"value": str(a.cpu)}})
    if (p := a.prometheus) is not None:
        meta = {"serverAddress": p.server_address, "query": p.query, "threshold": keda_number(p.threshold)}
        if p.activation_threshold is not None:
            meta["activationThreshold"] = keda_number(p.activation_threshold)
        out.append({"type": "prometheus", "metadata": meta})
    return out


def keda_number(value: float) -> str:
    """A number as KEDA's trigger metadata take it (a string its scalers parse with Go's ParseFloat)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# --- the API server's validation of a HorizontalPodAutoscaler (autoscaling/validation/validation.go) -------------

MIN_REPLICAS_LOWER_BOUND = 1
"""minReplicas 0 is allowed only with the HPAScaleToZero feature gate: alpha since 1.16 and off by default, through
Kubernetes 1.36 (`pkg/features/kube_features.go`)."""
METRIC_SOURCES = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                  "ContainerResource": "containerResource"}  # fmt: skip
TARGET_TYPES = ("Utilization", "Value", "AverageValue")


def validate_horizontal_pod_autoscaler(obj: Mapping[str, Any]) -> list[FieldError]:
    """What kube-apiserver refuses in a HorizontalPodAutoscaler (autoscaling/v2) beyond its OpenAPI schema, as it
    validates one on create with the default feature gates."""
    errors: list[FieldError] = []
    name = (obj.get("metadata") or {}).get("name", "")
    errors += [FieldError(INVALID, "metadata.name", p, name) for p in names.is_dns1123_subdomain(name)]
    spec = obj.get("spec") or {}
    low, high = spec.get("minReplicas"), spec.get("maxReplicas", 0)
    if low is not None and low < MIN_REPLICAS_LOWER_BOUND:
        errors.append(FieldError(INVALID, "spec.minReplicas", f"must be greater than or equal to "
                                 f"{MIN_REPLICAS_LOWER_BOUND}", low))  # fmt: skip
    if high < 1:
        errors.append(FieldError(INVALID, "spec.maxReplicas", "must be greater than 0", high))
    if low is not None and high < low:
        errors.append(FieldError(INVALID, "spec.maxReplicas", "must be greater than or equal to `minReplicas`", high))
    errors += _reference(spec.get("scaleTargetRef") or {}, "spec.scaleTargetRef")
    for i, metric in enumerate(spec.get("metrics") or []):
        errors += _metric(metric, f"spec.metrics[{i}]")
    return errors


def _path_segment(value: str, field: str) -> list[FieldError]:
    """IsValidPathSegmentName: not '.' or '..', no '/' or '%'."""
    problems = [f"may not be '{value}'"] if value in (".", "..") else []
    problems += [f"may not contain '{c}'" for c in "/%" if c in value]
    return [FieldError(INVALID, field, p, value) for p in problems]


def _reference(ref: Mapping[str, Any], field: str) -> list[FieldError]:
    errors = []
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        errors += _path_segment(value, f"{field}.{key}") if value else [FieldError(REQUIRED, f"{field}.{key}")]
    return errors


def _metric(metric: Mapping[str, Any], field: str) -> list[FieldError]:
    kind = metric.get("type") or ""
    if not kind:
        return [FieldError(REQUIRED, f"{field}.type", "must specify a metric source type")]
    if kind not in METRIC_SOURCES:
        supported = ", ".join(f'"{k}"' for k in sorted(METRIC_SOURCES))
        return [FieldError(NOT_SUPPORTED, f"{field}.type", f"supported values: {supported}", kind)]
    expected = METRIC_SOURCES[kind]
    present = [key for key in METRIC_SOURCES.values() if metric.get(key) is not None]
    errors = [FieldError(FORBIDDEN, f"{field}.{key}", "must populate the given metric source only")
              for key in present if key != expected]  # fmt: skip
    source = metric.get(expected)
    if source is None:
        return [FieldError(REQUIRED, f"{field}.{expected}", "must populate information for the given metric source"),
                *errors]  # fmt: skip
    at = f"{field}.{expected}"
    if kind in ("Resource", "ContainerResource"):
        return errors + _resource_source(kind, source, at)
    return errors + _metric_source(kind, source, at)


def _resource_source(kind: str, source: Mapping[str, Any], at: str) -> list[FieldError]:
    """A Resource or ContainerResource metric's source: a resource (of a container), a utilization or a value."""
    errors: list[FieldError] = []
    target = source.get("target") or {}
    if not source.get("name"):
        errors.append(FieldError(REQUIRED, f"{at}.name", "must specify a resource name"))
    if kind == "ContainerResource" and not source.get("container"):
        errors.append(FieldError(REQUIRED, f"{at}.container", "must specify a container"))
    errors += _target(target, f"{at}.target")
    has = [k for k in ("averageUtilization", "averageValue") if target.get(k) is not None]
    if not has:
        errors.append(FieldError(REQUIRED, f"{at}.target.averageUtilization",
                                 "must set either a target raw value or a target utilization"))  # fmt: skip
    elif len(has) == 2:
        errors.append(FieldError(FORBIDDEN, f"{at}.target.averageValue",
                                 "may not set both a target raw value and a target utilization"))  # fmt: skip
    return errors


def _metric_source(kind: str, source: Mapping[str, Any], at: str) -> list[FieldError]:
    """A Pods, Object or External metric's source: a named metric (of an object) and its target."""
    target = source.get("target") or {}
    metric_name = (source.get("metric") or {}).get("name") or ""
    errors = (_path_segment(metric_name, f"{at}.metric.name") if metric_name
              else [FieldError(REQUIRED, f"{at}.metric.name", "must specify a metric name")])  # fmt: skip
    errors += _target(target, f"{at}.target")
    if kind == "Pods" and target.get("averageValue") is None:
        errors.append(FieldError(REQUIRED, f"{at}.target.averageValue", "must specify a positive target averageValue"))
    if kind in ("Object", "External") and target.get("value") is None and target.get("averageValue") is None:
        errors.append(FieldError(REQUIRED, f"{at}.target.averageValue", "must set either a target value or "
                                 "averageValue"))  # fmt: skip
    if kind == "Object":
        errors += _reference(source.get("describedObject") or {}, f"{at}.describedObject")
    return errors


def _target(target: Mapping[str, Any], field: str) -> list[FieldError]:
    errors = []
    kind = target.get("type") or ""
    if not kind:
        errors.append(FieldError(REQUIRED, f"{field}.type", "must specify a metric target type"))
    if kind not in TARGET_TYPES:
        errors.append(FieldError(INVALID, f"{field}.type", "must be either Utilization, Value, or AverageValue", kind))
    for key in ("value", "averageValue"):
        if target.get(key) is not None and not _positive(target[key]):
            errors.append(FieldError(INVALID, f"{field}.{key}", "must be positive", target[key]))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        errors.append(FieldError(INVALID, f"{field}.averageUtilization", "must be greater than 0", utilization))
    return errors


def _positive(value: Any) -> bool:
    try:
        quantity = Quantity.from_json(value)
    except QuantityError:
        return False  # no quantity: refused when the object is decoded
    return not quantity.is_zero() and not quantity.is_negative()
