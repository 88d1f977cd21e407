"""Defaults by Kubernetes version are one rule (`policyc.k8s.versions`): docs/language.md's table states it, and each
supported minor version gets what the table says, `admission: {}` and no `admission` building on every one."""

from __future__ import annotations

import re

import pytest

from policyc.compiler import Compilation, compile_text
from policyc.k8s import versions
from policyc.proof.schemas import supported_kubernetes_versions
from tests.conftest import REPO

SUPPORTED = supported_kubernetes_versions()
POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: versions}
spec:
  kubernetesVersion: "VERSION"
  domain: gpu.example.org
ADMISSION
  gpuTiers:
    - {name: a100, products: [NVIDIA-A100-SXM4-40GB]DRA}
  nodePools:
    - {name: train, usage: training, nodes: ["gpu-[1-4]"], gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8},
       allocatable: {cpu: "128", memory: 1000Gi}}
  tenants:
    - {name: ml, namespaces: [ml], queue: {guarantee: {gpu: 8}}}
  workloads:
    - {name: train-job, type: training, tenant: ml, gpuTier: a100, gpus: 8}
"""


def build(version: str, admission: str | None = None, dra: bool = False) -> Compilation:
    text = POLICY.replace("VERSION", version).replace("DRA", ", dra: true" if dra else "")
    if dra:  # a queue counts no claimed GPUs (PC452)
        text = text.replace(", queue: {guarantee: {gpu: 8}}", "")
    return compile_text(text.replace("ADMISSION\n", f"  admission: {admission}\n" if admission is not None else ""))


def minor(version: str) -> int:
    return int(version.split(".")[1])


def test_the_supported_versions_cover_every_boundary() -> None:
    """The boundaries below are 1.30, 1.34 and 1.36: the supported versions must reach both sides of each."""
    assert SUPPORTED[0] == "1.25" and SUPPORTED[-1] == "1.37", SUPPORTED
    readme = (REPO / "docs" / "language.md").read_text(encoding="utf-8")
    assert f"verifies against ({SUPPORTED[0]} to {SUPPORTED[-1]} today" in readme


@pytest.mark.parametrize("version", SUPPORTED)
@pytest.mark.parametrize("admission", [None, "{}"])
def test_no_admission_and_an_empty_one_build_on_every_version(version: str, admission: str | None) -> None:
    result = build(version, admission)
    assert result.ok and not result.report.diagnostics, [(d.code, d.message) for d in result.report.diagnostics]
    # The rule by hand: ValidatingAdmissionPolicy v1 from 1.30, so warn from there and off before.
    expected = "warn" if minor(version) >= 30 else "off"
    assert [t.admission for t in result.cluster.tenants] == [expected]
    policies = [m.obj["kind"] for a in result.artifacts if a.path.startswith("tenants/") for m in a.manifests
                if "AdmissionPolicy" in m.obj["kind"]]  # fmt: skip
    # MutatingAdmissionPolicy v1 from 1.36 (before it only with the beta switch, which this policy leaves out).
    injects = ["MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"] if minor(version) >= 36 else []
    want = ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", *injects] if expected == "warn" else []
    assert sorted(policies) == sorted(want)


@pytest.mark.parametrize("version", SUPPORTED)
def test_a_mode_stated_before_1_30_is_refused_and_off_is_not(version: str) -> None:
    warned = build(version, "{mode: warn}")
    assert [d.code for d in warned.report.diagnostics] == ([] if minor(version) >= 30 else ["PC436"])
    assert build(version, "{mode: off}").ok


@pytest.mark.parametrize("version", SUPPORTED)
def test_the_beta_switch_by_version(version: str) -> None:
    """v1beta1 on 1.34 and 1.35 with the switch; before 1.34 the switch is an error, from 1.36 it does nothing."""
    result = build(version, "{mutatingAdmissionPolicyBeta: true}")
    codes = [d.code for d in result.report.diagnostics]
    apis = {m.obj["apiVersion"] for a in result.artifacts for m in a.manifests
            if m.obj["kind"] == "MutatingAdmissionPolicy"}  # fmt: skip
    if minor(version) < 34:
        assert codes == ["PC437"]
    elif minor(version) < 36:
        assert codes == [] and apis == {"admissionregistration.k8s.io/v1beta1"}
    else:
        assert codes == ["PC493"] and apis == {"admissionregistration.k8s.io/v1"}


@pytest.mark.parametrize("version", SUPPORTED)
def test_dra_tiers_from_1_34(version: str) -> None:
    result = build(version, dra=True)
    assert [d.code for d in result.report.diagnostics] == ([] if minor(version) >= 34 else ["PC451"])


def _covers(cell: str, version: str) -> bool:
    """Whether the table's first column ('before 1.30', '1.30 to 1.33', '1.34, 1.35', '1.36 and later') names it."""
    numbers = [int(n) for n in re.findall(r"1\.(\d+)", cell)]
    if cell.startswith("before"):
        return minor(version) < numbers[0]
    if cell.endswith("and later"):
        return minor(version) >= numbers[0]
    if " to " in cell:
        return numbers[0] <= minor(version) <= numbers[1]
    return minor(version) in numbers


def test_the_documented_table_is_the_rule() -> None:
    readme = (REPO / "docs" / "language.md").read_text(encoding="utf-8")
    section = readme.split("## Kubernetes versions\n", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines() if line.startswith("| ")]
    header, *rows = rows
    assert header[0] == "Kubernetes"
    mutating, dra = versions.MUTATING_ADMISSION_POLICY, versions.DYNAMIC_RESOURCE_ALLOCATION
    for version in SUPPORTED:
        [row] = [r for r in rows if _covers(r[0], version)]
        on, beta = versions.mutating_admission_api(version, False), versions.mutating_admission_api(version, True)
        injection = (
            f"`{on}`" if on else f"`{beta}` with `mutatingAdmissionPolicyBeta: true`, else none" if beta else "none"
        )
        expected = [
            versions.default_admission_mode(version),
            injection,
            f"`{dra.group_version}`" if versions.serves(version, dra) else "refused (PC451)",
        ]
        assert row[1:] == expected, (version, row)
    assert mutating.beta_since == 34 and mutating.since == 36  # the boundaries the tests above write by hand
