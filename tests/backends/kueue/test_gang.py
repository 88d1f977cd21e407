"""A workload's gang minimum with Kueue, which admits a workload whole: a batch Job's becomes partial admission
(`kueue.x-k8s.io/job-min-parallelism`); a PyTorchJob's has no equivalent and is a warning (PC708)."""

from __future__ import annotations

import policyc
from policyc.backends.kueue import backend as kueue
from tests.conftest import POLICIES

BASE = (
    (POLICIES / "minimal.yaml")
    .read_text(encoding="utf-8")
    .replace("  gpuTiers:", "  scheduler: {backend: kueue}\n  gpuTiers:", 1)
)
"""One tenant 'ml' and one training workload 'train-job' of 8 GPUs per pod, on 4 nodes of 8; the workload's
further fields are appended."""


def _compile(fields: str):
    text = BASE + "      replicas: 4\n" + fields
    result = policyc.compile(text, name="policy.yaml")
    assert result.ok, [d.message for d in result.report.diagnostics]
    return text, result


def _template(result) -> dict:
    [obj] = [m.obj for a in result.artifacts if a.path == "templates/train-job.yaml" for m in a.manifests]
    return obj


def _gang_warnings(result) -> list:
    return [d for d in result.report.diagnostics if d.code == "PC708"]


def _position(text: str, line_fragment: str, value: str) -> tuple[int, int]:
    """(line, column) of `value` on the only line containing `line_fragment`, 1-based."""
    [(number, line)] = [(i, t) for i, t in enumerate(text.splitlines(), 1) if line_fragment in t]
    return number, line.index(value, line.index(line_fragment)) + 1


def test_a_job_with_a_smaller_gang_is_partially_admitted() -> None:
    _, result = _compile("      minMember: 2\n")
    job = _template(result)
    # Kueue reads the annotation on the Job itself and lowers parallelism to no less than it; completions stay.
    assert job["metadata"]["annotations"] == {kueue.MIN_PARALLELISM: "2"}
    assert "annotations" not in job["spec"]["template"]["metadata"]
    assert (job["spec"]["parallelism"], job["spec"]["completions"]) == (4, 4)
    assert job["metadata"]["labels"][kueue.QUEUE_LABEL] == "ml"
    assert not _gang_warnings(result)


def test_a_job_gang_of_all_its_replicas_needs_no_annotation() -> None:
    """Kueue's webhook refuses a minimum parallelism that is not below parallelism: none is written then."""
    for fields in ("", "      minMember: 4\n"):
        _, result = _compile(fields)
        assert "annotations" not in _template(result)["metadata"]
        assert not _gang_warnings(result)


def test_a_pytorchjob_with_a_smaller_gang_is_a_warning_at_min_member() -> None:
    text, result = _compile("      kind: PyTorchJob\n      minMember: 2\n")
    [d] = _gang_warnings(result)
    assert d.severity == "warning"
    assert (d.line, d.column) == _position(text, "minMember:", "2")
    assert d.path == ("spec", "workloads", 0, "minMember")
    assert "PyTorchJob 'train-job' may start with 2 of its 4 pods" in d.message
    assert "Kueue admits a PyTorchJob only whole" in d.message and "\n" not in d.message
    assert d.hint == (
        "set minMember to 4 or remove it; or use kind: Job, which Kueue may start with 2 pods (partial admission)"
    )
    assert "annotations" not in _template(result)["metadata"], "Kueue has no partial admission for a PyTorchJob"


def test_following_the_min_member_hint_clears_the_warning() -> None:
    for fields in ("      kind: PyTorchJob\n      minMember: 4\n", "      kind: PyTorchJob\n"):
        assert not _gang_warnings(_compile(fields)[1])
    _, as_job = _compile("      kind: Job\n      minMember: 2\n")
    assert not _gang_warnings(as_job)
    assert _template(as_job)["metadata"]["annotations"] == {kueue.MIN_PARALLELISM: "2"}


def test_an_elastic_pytorchjob_below_its_replicas_is_a_warning_at_min_replicas() -> None:
    text, result = _compile("      kind: PyTorchJob\n      elastic: {minReplicas: 2, maxReplicas: 4}\n")
    [d] = _gang_warnings(result)
    assert d.severity == "warning"
    assert (d.line, d.column) == _position(text, "minReplicas:", "2")
    assert d.path == ("spec", "workloads", 0, "elastic", "minReplicas")
    assert "elastic PyTorchJob 'train-job' may run with 2 workers (elastic.minReplicas)" in d.message
    assert d.hint == "set elastic.minReplicas to 4, or replicas to 2"


def test_following_the_elastic_hint_clears_the_warning() -> None:
    raised = "      kind: PyTorchJob\n      elastic: {minReplicas: 4, maxReplicas: 4}\n"
    assert not _gang_warnings(_compile(raised)[1])
    lowered = BASE + "      replicas: 2\n      kind: PyTorchJob\n      elastic: {minReplicas: 2, maxReplicas: 4}\n"
    result = policyc.compile(lowered, name="policy.yaml")
    assert result.ok and not _gang_warnings(result)
