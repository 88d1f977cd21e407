"""Floats in a policy (plugin arguments) reach the generated files as floats: the build never crashes on them
(a float once reached the YAML emitter, which could not write it), and they read back as the same number."""

from __future__ import annotations

import io
import math

import pytest
from ruamel.yaml import YAML

from policyc.output import yaml_emitter

POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: floats}
spec:
  kubernetesVersion: "1.33"
  domain: ai.example.com
  gpuTiers: [{name: big, products: [NVIDIA-H100-80GB]}]
  nodePools:
    - {name: p, usage: training, nodes: [n1], gpu: {product: NVIDIA-H100-80GB, count: 8},
       allocatable: {cpu: "96", memory: 1000Gi}}
  scheduler:
    plugins: [{name: overcommit, arguments: {overcommit-factor: 1.5}}]
  tenants: [{name: ml, namespaces: [ml]}]
"""


def test_a_float_plugin_argument_builds_and_is_written_as_a_float(compile_text) -> None:
    result = compile_text(POLICY)
    assert result.ok, [d.message for d in result.report.diagnostics]
    [configmap] = YAML(typ="safe").load_all(io.BytesIO(result.files["volcano/scheduler-configmap.yaml"].data))
    conf = YAML(typ="safe").load(configmap["data"]["volcano-scheduler.conf"])
    plugins = {p["name"]: p for tier in conf["tiers"] for p in tier["plugins"]}
    assert plugins["overcommit"]["arguments"]["overcommit-factor"] == 1.5


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.5, "1.5"), (1e20, "1.0e+20"), (1e-05, "1.0e-05"), (-0.0, "-0.0"), (3.0, "3.0"), (math.inf, ".inf"),
     (-math.inf, "-.inf")],
)  # fmt: skip
def test_floats_are_written_with_a_dot_and_read_back_equal(value: float, text: str) -> None:
    """A dot in every float: YAML 1.1 readers (Go's yaml.v2, as in Volcano) read '1e+20' as a string."""
    assert yaml_emitter.scalar(value) == text
    assert YAML(typ="safe").load(f"x: {text}")["x"] == value


def test_nan_is_written_as_yaml_nan() -> None:
    assert yaml_emitter.scalar(math.nan) == ".nan"
    assert math.isnan(YAML(typ="safe").load("x: .nan")["x"])


@pytest.mark.parametrize("literal", ["1e400", "-1e400", ".inf", ".nan"])
def test_a_number_that_is_not_finite_is_one_located_error(compile_text, literal: str) -> None:
    text = POLICY.replace("overcommit-factor: 1.5", f"overcommit-factor: {literal}")
    result = compile_text(text)
    [d] = result.report.diagnostics  # not a second one for the value it left empty
    assert (d.code, d.line) == (
        "PC006",
        text.splitlines().index("    plugins: [{name: overcommit, arguments: {overcommit-factor: " + literal + "}}]")
        + 1,
    )
    assert literal in d.message and not result.files
