"""The benchmark's generated policies (bench/generate.py) build clean: no error and no warning, for every scheduler
backend and for pools by size, so that the figures are those of a policy a user would ship."""

from __future__ import annotations

import pytest

from policyc.registry import PROVISIONERS, SCHEDULERS
from tests.conftest import repo_script
from tests.provisioners import registered


def diagnostics(result) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in result.report.diagnostics]


@pytest.mark.parametrize("backend", list(SCHEDULERS))
def test_the_generated_policy_builds_without_a_diagnostic(compile_text, backend: str) -> None:
    # The smallest size of the bench (bench/bench.py SIZES): the same pools, tenants and workloads cycle in each.
    result = compile_text(repo_script("bench/generate.py").policy(312, 6, 31, 12, backend))
    assert result.ok and not result.report.diagnostics, diagnostics(result)


def test_the_generated_policy_with_pools_by_size_builds_without_a_diagnostic(compile_text) -> None:
    text = repo_script("bench/generate.py").policy(312, 6, 31, 12, provisioning="sized")
    with registered():
        result = compile_text(text)
    # The tests' provisioner warns of a pool without an instance type (its own rule, not the generator's doing).
    codes = {code for code, _ in diagnostics(result)}
    assert result.ok and codes == {"sized/sized-without-instance-type"}, diagnostics(result)


# The bench's 130,000-node row: Karpenter pools (where that provisioner is part of policyc).
@pytest.mark.parametrize("backend", list(SCHEDULERS) if "karpenter" in PROVISIONERS else [])
def test_the_generated_policy_with_karpenter_pools_builds_without_a_diagnostic(compile_text, backend: str) -> None:
    result = compile_text(repo_script("bench/generate.py").policy(312, 6, 31, 12, backend, provisioning="karpenter"))
    assert result.ok and not result.report.diagnostics, diagnostics(result)
