"""policyc's benchmark: prints the figures the performance targets are judged by (not a test).

    python bench/bench.py [--repeat 3] [--quick]

For policies of growing size (bench/generate.py, Volcano backend) it prints, per size, the wall time of each
stage (load, parse, check, emit, verify, prove, render, write), the total, the peak memory of a process that
builds it, and objects per second; the naive verification a user would otherwise run
(kubernetes_validate.validate per emitted object) against policyc's on the same objects; and how the cost
grows with the input. In-process figures are the best of --repeat runs, as timing noise only ever adds.

Then, for every registered scheduler backend (`policyc.registry.SCHEDULERS`), the wall time of
`python -m policyc build` of the largest policy as a fresh process, replacing its previous output (as a
rebuild does) and into a new directory (median and minimum of max(--repeat, 5) runs each), and how the
in-process build grows with 4x the input (best of --repeat at each size, as above). With --quick the largest size
is the 1,250-node policy, not the 5,000-node one the targets are set for.

Last, the start: `policyc --version`, `--help` and `validate` of the shipped example as processes, beside the bare
import of the packages policyc uses (`python -c "import pydantic, click, ruamel.yaml, jsonschema_rs"`), which
the start is judged against, and beside that import with a pydantic model defined and validated (pydantic imports
most of itself only then): all run in turns, round after round (--start-runs rounds after one to warm up), so that
the machine's speed, which varies by the minute on a shared machine, weighs on all alike. It prints each one's
median wall time and spread, and its ratio to the bare import: the ratio of the medians, and the middle half of
the ratios within a round. With --start only this part runs.

Process figures are for policyc as installed: its modules' bytecode is compiled first (pip does it on install),
as an environment may set PYTHONDONTWRITEBYTECODE, and then every process would compile again each module edited
since its bytecode was last written. The packages' own bytecode is pip's, as installed.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import policy

REPO = Path(__file__).resolve().parents[1]
SIZES = [  # (nodes, pools, tenants, workloads)
    (312, 6, 31, 12),
    (1250, 25, 125, 50),
    (5000, 100, 500, 200),
]
STAGES = ("load", "parse", "check", "emit", "verify", "prove", "render", "write")
EXAMPLE = "policies/ai-prod.yaml"
PACKAGES = "import pydantic, click, ruamel.yaml, jsonschema_rs"
BARE_IMPORT = "bare import of the packages"
PYDANTIC_IN_USE = """
from pydantic import BaseModel
class Model(BaseModel):
    name: str
Model(name="policy")
"""
STARTS = (  # (label, arguments after the interpreter, target)
    (BARE_IMPORT, ["-c", PACKAGES], "the reference"),
    ("the same, with a pydantic model validated", ["-c", f"{PACKAGES}\n{PYDANTIC_IN_USE}"], "-"),
    ("policyc --version", ["-m", "policyc", "--version"], "≤ 0.1 s"),
    ("policyc --help", ["-m", "policyc", "--help"], "-"),
    (f"policyc validate {EXAMPLE}", ["-m", "policyc", "validate", EXAMPLE], "≤ 2.0x the bare import"),
)
BUILD_TARGET = "≤ 1.0 s"
GROWTH_TARGET = "≤ 4.4x"

_BUILD_ONCE = """
import json, resource, sys, time
t0 = time.perf_counter()
from policyc.compiler import compile_file
from policyc.output.write import write_tree
result = compile_file(sys.argv[1])
t1 = time.perf_counter()
write_tree(result.files, sys.argv[2])
t2 = time.perf_counter()
print(json.dumps({"ok": result.ok, "build": t1 - t0, "write": t2 - t1,
                  "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def in_process(path: Path, out: Path, repeat: int) -> dict:
    """Best-of-`repeat` stage timings of an in-process build (imports already done)."""
    from policyc.compiler import compile_file
    from policyc.output.write import write_tree

    best: dict[str, float] = {}
    for _ in range(repeat):
        start = time.perf_counter()
        result = compile_file(path)
        built = time.perf_counter()
        assert result.ok, [d.message for d in result.report.diagnostics[:5]]
        write_tree(result.files, out)
        done = time.perf_counter()
        timings = {**result.timings, "write": done - built, "build": built - start, "total": done - start}
        best = timings if not best or timings["total"] < best["total"] else best
    objects = sum(len(a.manifests) for a in result.artifacts)
    return {**best, "objects": objects, "files": len(result.files), "result": result}


def peak_memory(path: Path, out: Path) -> tuple[float, float]:
    """(MiB, seconds): peak RSS and wall time of a fresh process that imports policyc, builds and writes."""
    proc = subprocess.run([sys.executable, "-c", _BUILD_ONCE, str(path), str(out)], capture_output=True,
                          text=True, check=True)  # fmt: skip
    data = json.loads(proc.stdout)
    return data["maxrss_kib"] / 1024, data["build"] + data["write"]


def naive_verification(result, sample: int) -> tuple[float, float, int]:
    """(naive seconds per object, policyc seconds per object, objects compared) over built-in kinds, the
    ones kubernetes_validate can check."""
    import kubernetes_validate

    from policyc.proof.schemas import validator

    version = result.cluster.kubernetes_version
    objects = [m.obj for a in result.artifacts for m in a.manifests
               if m.obj["kind"] != "Kustomization" and "." not in m.obj["apiVersion"].split("/")[0]]  # fmt: skip
    objects = objects[:sample]
    start = time.perf_counter()
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)
    naive = (time.perf_counter() - start) / len(objects)
    for obj in objects:  # compile the validators once, as a build does
        validator(version, obj["apiVersion"], obj["kind"])
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for obj in objects:
            validator(version, obj["apiVersion"], obj["kind"]).is_valid(obj)
        best = min(best, time.perf_counter() - start)
    return naive, best / len(objects), len(objects)


def command_wall(
    args: list[str], runs: int, fresh_output: Path | None = None
) -> tuple[str, subprocess.CompletedProcess]:
    """("median s (min min s)", last run) of `python -m policyc ARGS` as a fresh process, over `runs` runs; with
    `fresh_output`, each run writes to a new directory under it (``-o`` is appended)."""
    walls = []
    for run in range(runs):
        output = ["-o", str(fresh_output / f"run-{run}")] if fresh_output else []
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "policyc", *args, *output], capture_output=True, text=True,
                              cwd=REPO)  # fmt: skip
        walls.append(time.perf_counter() - start)
    return f"{statistics.median(walls):.3f} s (min {min(walls):.3f} s)", proc


def starts(runs: int) -> dict[str, tuple[list[float], int]]:
    """Label -> (wall times, last exit code) of each of `STARTS` as a fresh process, run in turns for `runs` rounds
    after one round to warm up (the disk cache, the bytecode), which is not counted."""
    walls: dict[str, list[float]] = {label: [] for label, _, _ in STARTS}
    codes: dict[str, int] = {}
    for round_ in range(runs + 1):
        for label, args, _ in STARTS:
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, *args], capture_output=True, cwd=REPO)
            if round_:
                walls[label].append(time.perf_counter() - start)
            codes[label] = proc.returncode
    return {label: (walls[label], codes[label]) for label in walls}


def quartiles(values: list[float]) -> tuple[float, float]:
    """The first and third quartiles: the middle half of `values`."""
    first, _, third = statistics.quantiles(values, n=4)
    return first, third


def start_rows(measured: dict[str, tuple[list[float], int]]) -> list[list[str]]:
    """Rows of the start's table: command, median wall time (min-max), ratio to the bare import (the ratio of the
    medians, then the middle half of the ratios within a round), target."""
    bare = measured[BARE_IMPORT][0]
    rows = []
    for label, _, target in STARTS:
        walls, code = measured[label]
        median = statistics.median(walls)
        if label == BARE_IMPORT:
            ratio = "1"
        else:
            low, high = quartiles([w / b for w, b in zip(walls, bare, strict=True)])
            ratio = f"{median / statistics.median(bare):.2f}x ({low:.2f}-{high:.2f}x)"
        failed = f" (failed: exit {code})" if code else ""
        wall = f"{median * 1000:.0f} ms ({min(walls) * 1000:.0f}-{max(walls) * 1000:.0f}){failed}"
        rows.append([label, wall, ratio, target])
    return rows


def failure(proc: subprocess.CompletedProcess) -> str | None:
    if not proc.returncode:
        return None
    lines = (proc.stderr or proc.stdout).strip().splitlines()[:3]
    return f"failed (exit {proc.returncode}): {' '.join(lines)}"


def first_diagnostics(result, count: int = 3) -> str:
    diagnostics = result.report.errors or result.report.diagnostics
    return "; ".join(f"{d.code} {d.message}" for d in diagnostics[:count]) or "failed without a diagnostic"


def backend_row(backend: str, sizes: list[tuple[int, int, int, int]], tmp: Path, repeat: int) -> list[str]:
    """Cells of a backend's row: its largest policy built as a process (median and minimum) replacing its previous
    output and into a new directory, the in-process growth from the second largest size to the largest (best of
    `repeat` at each), the targets; or the first failure."""
    from policyc.compiler import compile_file

    paths = []
    for nodes, pools, tenants, workloads in sizes[-2:]:
        path = tmp / f"policy-{backend}-{nodes}.yaml"
        path.write_text(policy(nodes, pools, tenants, workloads, backend))
        paths.append(path)
    for path in paths:
        try:
            result = compile_file(path)
        except Exception as error:  # a backend being written may fail in any way: report it, bench the others
            return [f"failed: {type(error).__name__}: {error}", "-", "-", "-"]
        if not result.ok:
            return [f"failed: {first_diagnostics(result)}", "-", "-", "-"]
    small, large = (in_process(path, tmp / f"out-{backend}-{path.stem}", repeat) for path in paths)
    output = tmp / f"process-{backend}"
    command_wall(["build", str(paths[-1]), "-o", str(output)], 1)  # the previous output the runs replace
    replacing, proc = command_wall(["build", str(paths[-1]), "-o", str(output)], max(repeat, 5))
    new, proc_new = command_wall(["build", str(paths[-1])], max(repeat, 5), fresh_output=tmp / f"new-{backend}")
    growth = f"{large['total'] / small['total']:.2f}x ({large['build'] / small['build']:.2f}x without write)"
    cells = [failure(proc) or replacing, failure(proc_new) or new]
    return [*cells, growth, f"{BUILD_TARGET}, {GROWTH_TARGET}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="the two smaller sizes only")
    parser.add_argument("--naive-sample", type=int, default=300, help="objects to check the naive way")
    parser.add_argument("--start", action="store_true", help="only the start: commands beside the bare import")
    parser.add_argument("--start-runs", type=int, default=21, help="rounds of the start's commands")
    args = parser.parse_args()
    compileall.compile_dir(REPO / "policyc", quiet=1)
    print(f"policyc benchmark ({os.cpu_count()} CPUs, Python {sys.version.split()[0]})\n")
    if not args.start:
        builds(SIZES[:2] if args.quick else SIZES, args)
    print(f"start: process walls over {args.start_runs} rounds, median (min-max); ratio to the bare import\n")
    header = ["command", "median (min-max)", "ratio: of the medians (middle half of a round's)", "target"]
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for row in start_rows(starts(max(args.start_runs, 2))):
        print(" | ".join(row))


def builds(sizes: list[tuple[int, int, int, int]], args: argparse.Namespace) -> None:
    """Print the in-process stages of each size, the naive verification, and each backend's process build."""
    from policyc.registry import SCHEDULERS

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for nodes, pools, tenants, workloads in sizes:
            path = Path(tmp) / f"policy-{nodes}.yaml"
            path.write_text(policy(nodes, pools, tenants, workloads))
            figures = in_process(path, Path(tmp) / f"out-{nodes}", args.repeat)
            memory, cold = peak_memory(path, Path(tmp) / f"cold-{nodes}")
            rows.append(((nodes, pools, tenants, workloads), figures, memory, cold))
        naive, ours, compared = naive_verification(rows[-1][1]["result"], args.naive_sample)
        backends = {name: backend_row(name, sizes, Path(tmp), args.repeat) for name in SCHEDULERS}

    print(f"volcano, in-process stages (best of {args.repeat}):\n")
    header = ["nodes/pools/tenants/workloads", "objects", *STAGES, "total", "cold process", "peak MiB", "objects/s"]
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for (nodes, pools, tenants, workloads), f, memory, cold in rows:
        cells = [f"{nodes}/{pools}/{tenants}/{workloads}", str(f["objects"]),
                 *(f"{f[s] * 1000:.0f} ms" for s in STAGES), f"{f['total'] * 1000:.0f} ms", f"{cold * 1000:.0f} ms",
                 f"{memory:.0f}", f"{f['objects'] / f['total']:.0f}"]  # fmt: skip
        print(" | ".join(cells))
    print()
    small, large = rows[-2][1]["total"], rows[-1][1]["total"]
    print(f"growth: 4x the input ({rows[-2][0][0]} -> {rows[-1][0][0]} nodes) costs {large / small:.2f}x the time")
    print(f"verification: kubernetes_validate.validate {naive * 1000:.2f} ms/object, "
          f"policyc {ours * 1e6:.1f} us/object on the same {compared} objects: {naive / ours:.0f}x faster")  # fmt: skip

    (nodes, _, tenants, _), (small_nodes, *_) = sizes[-1], sizes[-2]
    print(f"\nper backend: {nodes:,}-node / {tenants}-tenant policy; growth {small_nodes:,} -> {nodes:,} nodes; "
          f"process walls median (min) of {max(args.repeat, 5)}")  # fmt: skip
    if args.quick:
        print(f"(--quick: the largest quick size; the targets are for the {SIZES[-1][0]:,}-node policy)")
    print()
    header = ["backend", f"{nodes:,}-node build (process, replacing its output)", "same, into a new directory",
              "growth 4x input (in-process)", "target"]  # fmt: skip
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for name, cells in backends.items():
        print(" | ".join([name, *(" ".join(cell.split()).replace("|", "\\|") for cell in cells)]))
    print()


if __name__ == "__main__":
    main()
