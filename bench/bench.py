"""policyc's benchmark: prints the figures the performance targets are judged by (not a test).

    python bench/bench.py [--repeat 3] [--quick]

For policies of growing size (bench/generate.py) it prints, per size, the wall time of each stage (load,
parse, check, emit, verify, prove, render, write), the total, the peak memory of a process that builds it,
and objects per second; the naive verification a user would otherwise run (kubernetes_validate.validate
per emitted object) against policyc's on the same objects; how the cost grows with the input; and the
wall time of `policyc --version`, `--help` and `validate` of the shipped example as processes.
Figures are the best of --repeat runs, as timing noise only ever adds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import policy  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SIZES = [  # (nodes, pools, tenants, workloads)
    (312, 6, 31, 12),
    (1250, 25, 125, 50),
    (5000, 100, 500, 200),
]
STAGES = ("load", "parse", "check", "emit", "verify", "prove", "render", "write")

_BUILD_ONCE = """
import json, resource, sys, time
t0 = time.perf_counter()
from policyc.compiler import compile_file
from policyc.write import write_tree
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
    from policyc.write import write_tree

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

    from policyc.verify import validator

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


def command_wall(args: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "policyc", *args], capture_output=True, cwd=REPO)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="the two smaller sizes only")
    parser.add_argument("--naive-sample", type=int, default=300, help="objects to check the naive way")
    args = parser.parse_args()
    sizes = SIZES[:2] if args.quick else SIZES
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for nodes, pools, tenants, workloads in sizes:
            path = Path(tmp) / f"policy-{nodes}.yaml"
            path.write_text(policy(nodes, pools, tenants, workloads))
            figures = in_process(path, Path(tmp) / f"out-{nodes}", args.repeat)
            memory, cold = peak_memory(path, Path(tmp) / f"cold-{nodes}")
            rows.append(((nodes, pools, tenants, workloads), figures, memory, cold))
        naive, ours, compared = naive_verification(rows[-1][1]["result"], args.naive_sample)

    print(f"policyc benchmark ({os.cpu_count()} CPUs, Python {sys.version.split()[0]}, best of {args.repeat})\n")
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
    print(f"verification: kubernetes_validate.validate {naive * 1000:.2f} ms/object, policyc {ours * 1e6:.1f} us/object "
          f"on the same {compared} objects: {naive / ours:.0f}x faster")  # fmt: skip
    example = "policies/ai-prod.yaml"
    for label, cmd in (("policyc --version", ["--version"]), ("policyc --help", ["--help"]),
                       (f"policyc validate {example}", ["validate", example])):  # fmt: skip
        print(f"{label}: {command_wall(cmd, max(args.repeat, 5)) * 1000:.0f} ms (process wall)")


if __name__ == "__main__":
    main()
