"""policies/ai-hetero.yaml, the heterogeneous example: RDMA training on H100, MIG inference on A100, time-sliced L4
for development, Slurm's reserved share, for every scheduler backend."""

from __future__ import annotations

import pytest

import policyc
from policyc.backends import SCHEDULERS
from policyc.explain import placement_rows
from tests.conftest import REPO

TEXT = (REPO / "policies" / "ai-hetero.yaml").read_text()


def _compile(backend: str):
    text = TEXT.replace("\n  tenants:", f"\n  scheduler: {{backend: {backend}}}\n  tenants:", 1)
    return policyc.compile(text, name="ai-hetero.yaml")


@pytest.mark.parametrize("backend", list(SCHEDULERS))
def test_it_builds_for_every_backend_and_each_class_lands_on_its_hardware(backend: str) -> None:
    comp = _compile(backend)
    assert comp.ok, [str(d) for d in comp.report.diagnostics]
    landed: dict[str, set[str]] = {}
    for row in placement_rows(comp):
        if row.verdict != "rejected":
            landed.setdefault(row.workload, set()).add(row.pool)
    assert landed == {
        "llama-70b": {"h100-ib"},
        "slurm-burst": {"h100-ib"},
        "small-model": {"a100-mig"},
        "notebook": {"l4-dev"},
    }
    for path in ("gpu-operator/mig-parted-config.yaml", "gpu-operator/device-plugin-config.yaml"):
        assert path in comp.files
    quotas = {
        m.obj["metadata"]["name"] for a in comp.artifacts for m in a.manifests if m.obj["kind"] == "ResourceQuota"
    }
    assert "tenant-priority-slurm-high-priority" in quotas
