"""policyc report (Markdown for pull requests, HTML with an SVG chart) and policyc init."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from click.testing import CliRunner

from policyc.cli import main
from policyc.compiler import compile_file
from policyc.report import BAR_AREA_HEIGHT
from tests.conftest import REPO

AI_PROD = str(REPO / "policies" / "ai-prod.yaml")
SVG = "{http://www.w3.org/2000/svg}"


def test_markdown_report_of_the_full_example() -> None:
    result = CliRunner().invoke(main, ["report", AI_PROD])
    assert result.exit_code == 0
    text = result.stdout
    # hand-checked against policies/ai-prod.yaml: 16x8 H100 + 4x8 A100 + 8x8 H20 = 224 high-performance GPUs
    assert "| high-performance | a100-train, h100-train, h20-hybrid | 224 | 68 | 30% |" in text
    assert "| l4-serve | inference | inference | NVIDIA-L4 | 40 | 160 |" in text
    assert "| team-a | high-performance | 64 | 64 | 160 | 160 | 15% |" in text  # 64 of 430 GPUs
    assert "| nvidia.com/gpu | 384 | 430 | 0.89x |" in text  # quotas: 160 + 2x80 + 64
    assert "### Warnings\n\nNone." in text


def test_markdown_report_shows_whether_each_workload_fits() -> None:
    text = CliRunner().invoke(main, ["report", AI_PROD]).stdout
    # chat-serving: 6 pods of 8 cpu, 32Gi, 1 GPU in team-b (quota 80 GPUs, 1000 cpu, 4000Gi; capability 120 GPUs).
    # Tightest quota key: GPUs, 80 - 6 = 74 (cpu and memory keep 95%). Queue: 120 - 6 = 114. Pools of the
    # inference tier: l4-serve 40 nodes x 4 pods (4 GPUs; 48 cpu / 8 = 6; 192Gi / 32Gi = 6) = 160, t4-serve
    # 11 nodes x 2 pods (2 GPUs; 32 / 8 = 4; 128Gi / 32Gi = 4) = 22: room for 182.
    assert (
        "| chat-serving | team-b | ai-team-b | 6 | 8 cpu, 32Gi memory, 1 nvidia.com/gpu | "
        "fits, 74 requests.nvidia.com/gpu left | fits, 114 nvidia.com/gpu left | fits: room for 182 | yes |"
    ) in text


def test_html_chart_bars_match_the_figures(tmp_path) -> None:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", AI_PROD, "--format", "html", "-o", str(out)])
    assert result.exit_code == 0
    page = out.read_text()
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    svg = ET.fromstring(page[page.index("<svg") : page.index("</svg>") + 6])
    bars = {(r.get("data-tier"), r.get("data-series")): r for r in svg.iter(f"{SVG}rect") if r.get("data-tier")}
    expected = {("high-performance", "capacity"): 224, ("high-performance", "guaranteed"): 68,
                ("inference", "capacity"): 182, ("inference", "guaranteed"): 48,
                ("standard", "capacity"): 24, ("standard", "guaranteed"): 4}  # fmt: skip
    assert {k: float(v.get("data-value")) for k, v in bars.items()} == expected
    tallest = max(expected.values())
    for key, value in expected.items():
        height = float(bars[key].get("height"))
        assert abs(height - value / tallest * BAR_AREA_HEIGHT) < 0.01, key
        assert bars[key].find(f"{SVG}title").text.startswith(key[0])


def test_init_writes_a_starter_that_builds_cleanly(tmp_path) -> None:
    policy = tmp_path / "cluster-policy.yaml"
    runner = CliRunner()
    assert runner.invoke(main, ["init", str(policy)]).exit_code == 0
    assert (tmp_path / "policy.schema.json").exists()
    assert policy.read_text().startswith("# yaml-language-server: $schema=policy.schema.json\n")
    result = compile_file(policy)
    assert result.ok and not result.report.diagnostics, [d.message for d in result.report.diagnostics]
    again = runner.invoke(main, ["init", str(policy)])
    assert again.exit_code == 2 and "--force" in again.output
