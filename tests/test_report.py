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
