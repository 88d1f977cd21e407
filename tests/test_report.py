"""policyc report (Markdown for pull requests, HTML with an SVG chart) and policyc init."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from policyc.commands.cli import main
from policyc.commands.report import BAR_AREA_HEIGHT, apportion, figures, render_html, render_markdown
from policyc.compiler import compile_file
from tests.conftest import REPO, require_tool

AI_PROD = str(REPO / "policies" / "ai-prod.yaml")
SVG = "{http://www.w3.org/2000/svg}"


def test_markdown_report_of_the_full_example() -> None:
    result = CliRunner().invoke(main, ["report", AI_PROD])
    assert result.exit_code == 0
    text = result.stdout
    # hand-checked against policies/ai-prod.yaml: 16x8 H100 + 4x8 A100 + 8x8 H20 = 224 high-performance GPUs
    # (h100-slurm's 8x8 H100 are Slurm's only: not Kubernetes capacity).
    # team-a's 64 land there. research's training workloads reach those 224 and the 24 of a40-dev (standard): its
    # 8 split 8 x 224/248 = 7.23 and 8 x 24/248 = 0.77, in whole GPUs 7 and 0 with one left over, which goes to the
    # larger remainder (0.77, standard): high-performance 64 + 7 = 71 of 224 (31.7%), standard 1 of 24 (4.2%).
    # (Was 71.2 and 0.8: a fraction of a GPU.)
    assert "| high-performance | a100-train, h100-train, h20-hybrid | nvidia.com/gpu | 224 | 71 | 32% |" in text
    assert "| standard | a40-dev | nvidia.com/gpu | 24 | 1 | 4% |" in text
    static = "static (nodes/apply.sh, NodeFeatureRule policyc-pool-{})"
    assert (
        f"| l4-serve | inference | inference | NVIDIA-L4 | 40 | {static.format('l4-serve')} | 160 nvidia.com/gpu |"
        in text
    )
    assert (
        f"| h100-slurm | Slurm only | high-performance | NVIDIA-H100-80GB | 8 | {static.format('h100-slurm')} "
        "| 64 nvidia.com/gpu |" in text
    )
    assert "7 pools, 93 nodes, 430 nvidia.com/gpu for Kubernetes (64 nvidia.com/gpu more on Slurm's own nodes)." in text
    # team-a reaches the 224 high-performance GPUs: 64 of them is 28.6%.
    assert "| team-a | high-performance | nvidia.com/gpu | 64 | 64 | 160 | 160 | 29% |" in text
    assert "| nvidia.com/gpu | 384 | 430 | 0.89x |" in text  # quotas: 160 + 2x80 + 64
    assert "### Warnings\n\nNone." in text
    assert all(figure.endswith("x") for figure in re.findall(r"\d+\.\d+x?", text))  # only ratios have decimals


def test_markdown_report_shows_whether_each_workload_fits() -> None:
    text = CliRunner().invoke(main, ["report", AI_PROD]).stdout
    # chat-serving autoscales to at most 48 pods of 8 cpu, 32Gi, 1 GPU in team-b (quota 80 GPUs, 1000 cpu, 4000Gi;
    # capability 120 GPUs). Tightest quota key: GPUs, 80 - 48 = 32 (cpu 1000 - 384 and memory 4000Gi - 1536Gi keep
    # 62%). Queue: 120 - 48 = 72. Pools of the inference tier: l4-serve 40 nodes x 4 pods (4 GPUs; 48 cpu / 8 = 6;
    # 192Gi / 32Gi = 6) = 160, t4-serve 11 nodes x 2 pods (2 GPUs; 32 / 8 = 4; 128Gi / 32Gi = 4) = 22: room for 182.
    assert (
        "| chat-serving | team-b | ai-team-b | 48 | 8 cpu, 32Gi memory, 1 nvidia.com/gpu | "
        "fits, 32 requests.nvidia.com/gpu left | fits, 72 nvidia.com/gpu left | fits: room for 182 | yes |"
    ) in text


def test_html_chart_bars_match_the_figures(tmp_path) -> None:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", AI_PROD, "--format", "html", "-o", str(out)])
    assert result.exit_code == 0
    page = out.read_text()
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    svg = ET.fromstring(page[page.index("<svg") : page.index("</svg>") + 6])
    bars = {(r.get("data-tier"), r.get("data-series")): r for r in svg.iter(f"{SVG}rect") if r.get("data-tier")}
    # guaranteed: was 68 and 4 (research's 8 split evenly), then 71.2 and 0.8 (split by the GPUs research reaches per
    # tier, 224 and 24 of 248); now in whole GPUs: 64 + 7 and 1 (see the markdown test).
    expected = {("high-performance", "capacity"): 224, ("high-performance", "guaranteed"): 71,
                ("inference", "capacity"): 182, ("inference", "guaranteed"): 48,
                ("standard", "capacity"): 24, ("standard", "guaranteed"): 1}  # fmt: skip
    assert {k: v.get("data-value") for k, v in bars.items()} == {k: str(v) for k, v in expected.items()}
    assert {r.get("data-resource") for r in bars.values()} == {"nvidia.com/gpu"}
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


ATTRIBUTION_POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: attribution}
spec:
  kubernetesVersion: "1.33"
  domain: ai.example.com
  gpuTiers:
    - {name: fast, products: [NVIDIA-H100-80GB, NVIDIA-H20]}
    - {name: slow, products: [NVIDIA-L4]}
  nodePools:
    - {name: h100-train, usage: training, nodes: ["t-[1-4]"], gpu: {product: NVIDIA-H100-80GB, count: 8}}
    - {name: h20-hybrid, usage: hybrid, nodes: ["h-[1-2]"], gpu: {product: NVIDIA-H20, count: 8}}
    - {name: l4-serve, usage: inference, nodes: ["i-[1-8]"], gpu: {product: NVIDIA-L4, count: 4}}
    - {name: l4-train, usage: training, nodes: ["l-[1-2]"], gpu: {product: NVIDIA-L4, count: 4}}
  scheduler: {queuePlugin: capacity}
  tenants:
    - {name: a, namespaces: [a], queue: {guarantee: {gpu: 30}}}
    - {name: b, namespaces: [b], queue: {guarantee: {gpu: 14}}}
    - {name: c, namespaces: [c], queue: {guarantee: {gpu: 6}}}
    - {name: org, namespaces: [org], queue: {guarantee: {gpu: 12}}}
    - {name: d, namespaces: [d], queue: {parent: org, guarantee: {gpu: 8}}}
  workloads:
    - {name: a-train, type: training, tenant: a, gpuTier: fast, gpus: 1, cpu: '1', memory: 1Gi}
    - {name: b-train, type: training, tenant: b, gpuTier: fast, gpus: 1, cpu: '1', memory: 1Gi}
    - {name: b-small, type: training, tenant: b, gpuTier: slow, gpus: 1, cpu: '1', memory: 1Gi}
    - {name: d-serve, type: inference, tenant: d, gpuTier: slow, gpus: 1, cpu: '1', memory: 1Gi}
"""


def test_guarantees_go_to_the_tiers_the_workloads_reach_by_their_gpus(compile_text) -> None:
    # Training on fast reaches h100-train 32 + h20-hybrid 16 = 48 GPUs; training on slow only l4-train 8 (l4-serve
    # is inference); inference on slow only l4-serve 32.
    # a (fast only): all 30 on fast. b (fast 48 + slow 8 = 56): 14 x 48/56 = 12 on fast, 14 x 8/56 = 2 on slow.
    # c declares no workload: its 6 on no tier. d: 8 on slow; org holds 12 - 8 = 4 beyond d, on d's pools: slow.
    # fast: 30 + 12 = 42 of 48 (88%); slow: 2 + 8 + 4 = 14 of 40 (35%).
    compilation = compile_text(ATTRIBUTION_POLICY)
    f = figures(compilation.cluster)
    assert {t.name: t.guaranteed for t in f.tiers} == {"fast": 42, "slow": 14}
    assert f.unattributed == {"nvidia.com/gpu": 6}
    assert {t.name: t.tiers for t in f.tenants} == {
        "a": ("fast",), "b": ("fast", "slow"), "c": (), "org": ("slow",), "d": ("slow",)
    }  # fmt: skip
    text = render_markdown(compilation)
    assert "| fast | h100-train, h20-hybrid | nvidia.com/gpu | 48 | 42 | 88% |" in text
    assert "| slow | l4-serve, l4-train | nvidia.com/gpu | 40 | 14 | 35% |" in text
    assert "| b | fast, slow | nvidia.com/gpu | 14 |" in text and "| c | - | nvidia.com/gpu | 6 |" in text
    assert "no tier): 6 nvidia.com/gpu." in text
    page = render_html(compilation)
    svg = ET.fromstring(page[page.index("<svg") : page.index("</svg>") + 6])
    drawn = {
        r.get("data-tier"): r.get("data-value") for r in svg.iter(f"{SVG}rect") if r.get("data-series") == "guaranteed"
    }
    assert drawn == {"fast": "42", "slow": "14"}
    assert (
        "<td>fast</td><td>h100-train, h20-hybrid</td><td>nvidia.com/gpu</td><td>48</td><td>42</td><td>88%</td>" in page
    )
    assert "no tier): 6 nvidia.com/gpu.</p>" in page
    rule = "split in proportion to their devices of that resource in each tier, in whole devices"
    assert rule in text and rule in page


def test_apportion_gives_whole_devices_that_add_up() -> None:
    # 8 x 224/248 = 7.23 and 8 x 24/248 = 0.77: whole parts 7 and 0, the unit left over to the larger remainder.
    assert apportion(8, {"high-performance": 224, "standard": 24}) == {"high-performance": 7, "standard": 1}
    # 10 x 16/34 = 4.71 and 10 x 18/34 = 5.29: 4 and 5, the unit left over to 0.71.
    assert apportion(10, {"a100": 16, "l4": 18}) == {"a100": 5, "l4": 5}
    # 3 x 1/3 each, exactly: nothing left over. 2 over three equal weights: 0.67 each, ties in the weights' order.
    assert apportion(3, {"a": 1, "b": 1, "c": 1}) == {"a": 1, "b": 1, "c": 1}
    assert apportion(2, {"c": 1, "a": 1, "b": 1}) == {"c": 1, "a": 1, "b": 0}


KINDS_POLICY = """\
apiVersion: policyc.io/v1alpha1
kind: ClusterPolicy
metadata: {name: kinds}
spec:
  kubernetesVersion: "1.36"
  domain: ai.example.com
  gpuTiers:
    - {name: a100, products: [NVIDIA-A100-SXM4-80GB]}
    - {name: l4, products: [NVIDIA-L4]}
    - {name: mi300x, products: [AMD-Instinct-MI300X]}
  nodePools:
    - name: a100-mig
      usage: inference
      nodes: ["m-[1-4]"]
      gpu:
        product: NVIDIA-A100-SXM4-80GB
        count: 8
        mig: {strategy: mixed, cards: [{count: 4, devices: {3g.40gb: 2}}, {count: 4, devices: {1g.10gb: 7}}]}
      allocatable: {cpu: "128", memory: 1000Gi}
    - {name: a100-whole, usage: inference, nodes: ["w-[1-2]"], gpu: {product: NVIDIA-A100-SXM4-80GB, count: 8},
       allocatable: {cpu: "128", memory: 1000Gi}}
    - name: l4-mps
      usage: inference
      nodes: ["l-[1-3]"]
      gpu: {product: NVIDIA-L4, count: 2, sharing: {strategy: mps, replicas: 3}}
      allocatable: {cpu: "48", memory: 192Gi}
    - {name: mi300x, usage: training, nodes: ["x-[1-2]"], gpu: {vendor: amd, product: AMD-Instinct-MI300X, count: 8},
       allocatable: {cpu: "192", memory: 1800Gi}}
  tenants:
    - name: serve
      namespaces: [serve]
      queue: {guarantee: {gpu: 10, nvidia.com/mig-1g.10gb: 64, nvidia.com/mig-3g.40gb: 8}}
    - name: research
      namespaces: [research]
      quota: {requests: {gpu: 16}}
  workloads:
    - {name: small, type: inference, tenant: serve, gpuTier: a100, gpus: 1, replicas: 64, migProfile: 1g.10gb}
    - {name: mid, type: inference, tenant: serve, gpuTier: a100, gpus: 1, replicas: 8, migProfile: 3g.40gb}
    - {name: big, type: inference, tenant: serve, gpuTier: a100, gpus: 8, replicas: 1}
    - {name: chat, type: inference, tenant: serve, gpuTier: l4, gpus: 1, replicas: 4}
    - {name: tune, type: training, tenant: research, gpuTier: mi300x, gpus: 8, replicas: 2}
"""
"""Every kind of device at once: MIG under the mixed strategy (a layout per group of cards), whole cards of the same
product, MPS shares, and another vendor's cards."""


def test_device_kinds_are_counted_apart_and_never_added_up(compile_text) -> None:
    # a100-mig: 4 nodes; cards 0-3 hold 2 3g.40gb each, cards 4-7 7 1g.10gb each: 4 x 4 x 2 = 32 3g.40gb devices and
    # 4 x 4 x 7 = 112 1g.10gb devices, each profile on 4 x 4 = 16 cards (mixed: nvidia.com/mig-<profile>).
    # a100-whole: 2 x 8 = 16 nvidia.com/gpu. l4-mps: 3 nodes x 2 cards = 6 cards x 3 = 18 MPS shares of
    # nvidia.com/gpu. mi300x: 2 x 8 = 16 amd.com/gpu. (All added up, 194, would mean nothing.)
    compilation = compile_text(KINDS_POLICY)
    assert compilation.ok, [d.message for d in compilation.report.diagnostics]
    text = render_markdown(compilation)
    assert (
        "4 pools, 11 nodes, 16 amd.com/gpu, 16 nvidia.com/gpu, 18 nvidia.com/gpu as MPS shares (3 on each of 6 GPUs), "
        "112 nvidia.com/mig-1g.10gb as MIG 1g.10gb devices (of 16 GPUs), 32 nvidia.com/mig-3g.40gb as MIG 3g.40gb "
        "devices (of 16 GPUs)."
    ) in text
    assert (
        "| a100-mig | inference | a100 | NVIDIA-A100-SXM4-80GB | 4 | static (nodes/apply.sh, NodeFeatureRule "
        "policyc-pool-a100-mig) | 112 nvidia.com/mig-1g.10gb as MIG 1g.10gb "
        "devices (of 16 GPUs), 32 nvidia.com/mig-3g.40gb as MIG 3g.40gb devices (of 16 GPUs) |"
    ) in text
    assert (
        "| l4-mps | inference | l4 | NVIDIA-L4 | 3 | static (nodes/apply.sh, NodeFeatureRule policyc-pool-l4-mps) | "
        "18 nvidia.com/gpu as MPS shares (3 on each of 6 GPUs) |" in text
    )
    # serve's 10 nvidia.com/gpu: its workloads reach a100-whole's 16 and l4-mps's 18, so 10 x 16/34 = 4.71 and
    # 10 x 18/34 = 5.29: 4 and 5, and the unit left over to the larger remainder (a100): 5 and 5. Its MIG devices
    # count only on a100: 64 of 112 (57%), 8 of 32 (25%).
    assert "| a100 | a100-whole | nvidia.com/gpu | 16 | 5 | 31% |" in text  # 5 of 16
    assert "| a100 | a100-mig | nvidia.com/mig-1g.10gb | 112 MIG 1g.10gb devices (of 16 GPUs) | 64 | 57% |" in text
    assert "| a100 | a100-mig | nvidia.com/mig-3g.40gb | 32 MIG 3g.40gb devices (of 16 GPUs) | 8 | 25% |" in text
    assert "| l4 | l4-mps | nvidia.com/gpu | 18 MPS shares (3 on each of 6 GPUs) | 5 | 28% |" in text  # 5 of 18
    assert "| mi300x | mi300x | amd.com/gpu | 16 | 0 | 0% |" in text
    # A tenant's row per resource; the share is of the devices of that resource its workloads reach (10 of 34).
    assert "| serve | a100, l4 | nvidia.com/gpu | 10 | 10 | - | - | 29% |" in text
    assert "| serve | a100, l4 | nvidia.com/mig-1g.10gb | 64 | 64 | - | - | 57% |" in text
    assert "| research | mi300x | amd.com/gpu | - | - | - | 16 | - |" in text  # quota 16 x 1 namespace
    assert all(figure.endswith("x") for figure in re.findall(r"\d+\.\d+x?", text))  # only ratios have decimals
    page = render_html(compilation)
    svg = ET.fromstring(page[page.index("<svg") : page.index("</svg>") + 6])
    bars = {(r.get("data-tier"), r.get("data-resource"), r.get("data-series")): r.get("data-value")
            for r in svg.iter(f"{SVG}rect") if r.get("data-tier")}  # fmt: skip
    assert bars == {
        ("a100", "nvidia.com/gpu", "capacity"): "16", ("a100", "nvidia.com/gpu", "guaranteed"): "5",
        ("a100", "nvidia.com/mig-1g.10gb", "capacity"): "112", ("a100", "nvidia.com/mig-1g.10gb", "guaranteed"): "64",
        ("a100", "nvidia.com/mig-3g.40gb", "capacity"): "32", ("a100", "nvidia.com/mig-3g.40gb", "guaranteed"): "8",
        ("l4", "nvidia.com/gpu", "capacity"): "18", ("l4", "nvidia.com/gpu", "guaranteed"): "5",
        ("mi300x", "amd.com/gpu", "capacity"): "16", ("mi300x", "amd.com/gpu", "guaranteed"): "0",
    }  # fmt: skip
    units = [t.text for t in svg.iter(f"{SVG}text") if t.get("fill") == "#555"]
    assert units == ["nvidia.com/gpu", "MIG 1g.10gb", "MIG 3g.40gb", "MPS shares", "amd.com/gpu"]


def test_the_heterogeneous_example_keeps_vendors_mig_and_shares_apart() -> None:
    text = CliRunner().invoke(main, ["report", str(REPO / "policies" / "ai-hetero.yaml")]).stdout
    # h100-ib 16 x 8 = 128 H100; a100-mig 4 nodes x 8 cards x 7 1g.10gb = 224 MIG devices (single strategy: as
    # nvidia.com/gpu) on 32 cards; l4-dev 4 nodes x 2 cards x 4 = 32 time-slicing shares of 8 cards; mi300x 4 x 8 = 32
    # amd.com/gpu; ascend 2 x 8 = 16 huawei.com/Ascend910B3. Was one headline of 432 (128 + 224 + 32 + 32 + 16).
    assert (
        "6 pools, 38 nodes, 32 amd.com/gpu, 16 huawei.com/Ascend910B3, 128 nvidia.com/gpu, 224 nvidia.com/gpu as MIG "
        "1g.10gb devices (of 32 GPUs), 32 nvidia.com/gpu as time-slicing shares (4 on each of 8 GPUs)."
    ) in text
    assert "432" not in text
    # The quota counts nvidia.com/gpu as the API server does, all kinds of it; what they are stays visible.
    assert (
        "| nvidia.com/gpu | 256 | 384: 128 GPUs + 224 MIG 1g.10gb devices (of 32 GPUs) + 32 time-slicing shares "
        "(4 on each of 8 GPUs) | 0.67x |"
    ) in text  # 256 = llm's 128 x 2 namespaces; 256 / 384 = 0.67
    assert "| a100-mig | a100-mig | nvidia.com/gpu | 224 MIG 1g.10gb devices (of 32 GPUs) | 100 | 45% |" in text
    # serving's 100 of the 224 MIG devices it reaches (was 23%: of 432 devices of every kind and vendor).
    assert "| serving | a100-mig | nvidia.com/gpu | 100 | 100 | - | - | 45% |" in text
    assert "| research | cpu, mi300x | amd.com/gpu | - | - | - | 32 | - |" in text


def test_dra_devices_are_counted_per_device_class() -> None:
    text = CliRunner().invoke(main, ["report", str(REPO / "policies" / "ai-dra.yaml")]).stdout
    # h100 8 x 8 = 64 and a100 4 x 8 = 32 claimed through their DeviceClass; l4 4 x 2 = 8 nvidia.com/gpu (was one
    # headline of 104 nvidia.com/gpu).
    assert (
        "3 pools, 16 nodes, 32 devices of DeviceClass a100.ai.example.com, 64 devices of DeviceClass "
        "h100.ai.example.com, 8 nvidia.com/gpu."
    ) in text
    assert "| h100 | h100 | DeviceClass h100.ai.example.com | 64 | 0 | 0% |" in text
    # research's quota bounds each model apart: 16 H100 and 8 A100 (was one figure of 24).
    assert "| research | a100, h100 | DeviceClass a100.ai.example.com | - | - | - | 8 | - |" in text
    assert "| research | a100, h100 | DeviceClass h100.ai.example.com | - | - | - | 16 | - |" in text
    assert "| dev | l4 | nvidia.com/gpu | 4 | 4 | - | 8 | 50% |" in text  # 4 of the 8 L4 (was 4%: of 104)


BROWSER_TIMEOUT = 60
WINDOW = (1280, 1400)
MEASURE = """<script>
const svg = document.querySelector("svg");
const box = e => { const r = e.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; };
const items = [...svg.querySelectorAll("text, rect")].map(e => ({
  tag: e.tagName, label: e.getAttribute("data-tier") ? e.getAttribute("data-tier") + " " + e.getAttribute("data-series")
    : e.textContent, bar: e.hasAttribute("data-tier"), ...box(e)}));
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify({svg: box(svg), items});
document.body.appendChild(out);
</script>"""


def _chromium(binary: str, profile, *args: str) -> str:
    """Run headless Chromium to its end within BROWSER_TIMEOUT (killing its process group past that); its stdout."""
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", *args]  # fmt: skip
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as proc:
        try:
            out, err = proc.communicate(timeout=BROWSER_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"chromium did not finish within {BROWSER_TIMEOUT}s")
    assert proc.returncode == 0, err[-2000:]
    return out


def _overlap(a: dict, b: dict) -> bool:
    """Whether two boxes share more than half a pixel each way."""
    return min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"]) > 0.5 and (
        min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"]) > 0.5
    )


@pytest.mark.parametrize(
    ("policy", "groups"),
    [("ai-prod", 3), ("ai-hetero", 5), ("ai-dra", 3), ("kinds", 5)],  # a group per tier and resource
)
def test_html_chart_reads_well_in_chromium(tmp_path, policy: str, groups: int) -> None:
    binary = require_tool("chromium", "apt-get install chromium")
    page = tmp_path / "report.html"
    source = REPO / "policies" / f"{policy}.yaml"
    if policy == "kinds":
        source = tmp_path / "kinds.yaml"
        source.write_text(KINDS_POLICY)
    assert CliRunner().invoke(main, ["report", str(source), "--format", "html", "-o", str(page)]).exit_code == 0
    shot = tmp_path / "report.png"
    _chromium(binary, tmp_path / "profile-shot", f"--screenshot={shot}",
              f"--window-size={WINDOW[0]},{WINDOW[1]}", page.as_uri())  # fmt: skip
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == WINDOW

    measured = tmp_path / "measured.html"
    measured.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    dom = _chromium(binary, tmp_path / "profile-dom", "--dump-dom", measured.as_uri())
    start = dom.index('<pre id="measured">') + len('<pre id="measured">')
    layout = json.loads(html.unescape(dom[start : dom.index("</pre>", start)]))
    svg, items = layout["svg"], layout["items"]
    texts = [i for i in items if i["tag"] == "text"]
    bars = [i for i in items if i["bar"]]
    # two bars a group, a value per bar, a name and a unit per group, the legend
    assert len(bars) == 2 * groups and len(texts) == 2 * groups + 2 * groups + 2
    for item in items:
        assert item["w"] > 0 or item["bar"], item  # text was laid out with a font
        assert svg["x"] - 0.5 <= item["x"] and item["x"] + item["w"] <= svg["x"] + svg["w"] + 0.5, item
        assert svg["y"] - 0.5 <= item["y"] and item["y"] + item["h"] <= svg["y"] + svg["h"] + 0.5, item
    for i, a in enumerate(texts):
        for b in texts[i + 1 :] + bars:
            assert not _overlap(a, b), (a, b)
