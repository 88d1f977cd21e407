"""policyc's benchmark: prints the figures the performance targets are judged by (not a test).

    python bench/bench.py [--repeat 3] [--rounds 9] [--quick] [--start]

For policies of growing size (bench/generate.py, the default scheduler backend) it prints, per size, the wall time
of each stage (load, parse, check, emit, verify, prove, render, write), the total, the peak memory of a process that
builds it, and objects per second; the naive verification a user would otherwise run
(kubernetes_validate.validate per emitted object) against policyc's on the same objects; and how the cost
grows with the input. In-process figures are the best of --repeat runs, as timing noise only ever adds.

Then each row of `PROCESS_ROWS` (a generated policy) for every registered scheduler backend
(`policyc.registry.SCHEDULERS`): `python -m policyc build` as a fresh process, replacing its previous output (as a
rebuild does) and into a new directory, beside the floor: the bare import of the packages policyc uses
(`python -c "import pydantic, click, ruamel.yaml, jsonschema_rs"`). All run in turns, round after round (--rounds
rounds after one to warm up), so that the machine's speed, which varies by the minute on a shared machine, weighs
on all alike; each gets its median wall time and spread, its peak memory, and its ratio to the floor: the ratio of
the medians, and the middle half of the ratios within a round. With --quick the 1,250-node policy stands in for
them. A row whose node provisioner (its `provisioning` option) is not registered says so and is not built. Then how
the in-process build grows with 4x the input, per backend (best of --repeat at each size).

Then the audit: `policyc audit POLICY --from DUMP --format json` as a fresh process (--audit-rounds rounds after one
to warm up), of the 5,000-node policy against a dump of the cluster it describes with 50,000 pods
(bench/generate_dump.py, made once per run under the bench's temporary directory by a process of its own): its
median wall time, spread and peak memory against the issue's absolute targets. It runs only where this policyc has
an `audit` command, and says why not otherwise; --quick leaves it out. With --audit only this part runs.

Last, the start: `policyc --version`, `--help` and `validate` of the shipped example as processes, beside the bare
import and beside that import with a pydantic model defined and validated (pydantic imports most of itself only
then), in turns as above (--start-runs rounds). With --start only this part runs.

Process figures are for policyc as installed: its modules' bytecode is compiled first (pip does it on install),
as an environment may set PYTHONDONTWRITEBYTECODE, and then every process would compile again each module edited
since its bytecode was last written. The packages' own bytecode is pip's, as installed.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
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
FLOOR = ["-c", PACKAGES]
BARE_IMPORT = "bare import of the packages"
PYDANTIC_IN_USE = """
from pydantic import BaseModel
class Model(BaseModel):
    name: str
Model(name="policy")
"""
STARTS = (  # (label, arguments after the interpreter, target)
    (BARE_IMPORT, FLOOR, "the reference"),
    ("the same, with a pydantic model validated", ["-c", f"{PACKAGES}\n{PYDANTIC_IN_USE}"], "-"),
    ("policyc --version", ["-m", "policyc", "--version"], "≤ 0.1 s"),
    ("policyc --help", ["-m", "policyc", "--help"], "-"),
    (f"policyc validate {EXAMPLE}", ["-m", "policyc", "validate", EXAMPLE], "≤ 2.0x the bare import"),
)
GROWTH_TARGET = "≤ 4.4x"


@dataclass(frozen=True)
class ProcessRow:
    """A generated policy (`generate.policy` of these sizes and `options`) built as a fresh process for every
    scheduler backend, and its targets: at most `ratio` times the floor, and `memory` MiB at peak if it says."""

    nodes: int
    pools: int
    tenants: int
    workloads: int
    ratio: float
    memory: int | None = None
    options: Mapping[str, object] = field(default_factory=dict)

    @property
    def label(self) -> str:
        extra = "".join(f", {k} {v}" for k, v in self.options.items())
        return f"{self.nodes:,} / {self.pools} / {self.tenants:,} / {self.workloads}{extra}"

    @property
    def target(self) -> str:
        memory = f", ≤ {self.memory} MiB" if self.memory else ""
        return f"≤ {self.ratio:g}x the floor{memory}"

    def policy(self, backend: str) -> str:
        return policy(self.nodes, self.pools, self.tenants, self.workloads, backend, **self.options)

    @property
    def missing(self) -> str | None:
        """Why the row cannot be built here (its node provisioner is not registered), or None."""
        from policyc.registry import PROVISIONERS

        name = self.options.get("provisioning", "static")
        return None if name in PROVISIONERS else f"not built: node provisioner '{name}' is not registered"


PROCESS_ROWS = (  # a row per generated policy (nodes / pools / tenants / workloads, options), targets of issue 26
    ProcessRow(5000, 100, 500, 200, ratio=8),
    ProcessRow(130000, 100, 2000, 200, ratio=50, memory=500, options={"provisioning": "karpenter"}),
)
QUICK_ROWS = (ProcessRow(1250, 25, 125, 50, ratio=8),)
AUDIT_SIZE = (5000, 100, 500, 200)
"""The audit row's policy (nodes, pools, tenants, workloads: the 5,000-node row's), with AUDIT_PODS pods."""
AUDIT_PODS = 50000
AUDIT_TARGET = "≤ 15 s, ≤ 4 GiB (absolute: issue 28)"
"""--quick: the 1,250-node policy stands in for the rows (their targets are not for it)."""

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


@dataclass
class Run:
    """A process's figures: wall seconds and peak RSS (MiB) per counted run, and the last failure (None: none)."""

    walls: list[float] = field(default_factory=list)
    peaks: list[float] = field(default_factory=list)
    failure: str | None = None


def run_process(args: list[str]) -> tuple[float, float, str | None]:
    """(wall seconds, peak RSS in MiB, failure or None) of `python ARGS` as a fresh process in the repository."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.DEVNULL, stderr=err, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if not code:
            return wall, usage.ru_maxrss / 1024, None
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()[:3]
    return wall, usage.ru_maxrss / 1024, f"failed (exit {code}): {' '.join(lines)}"


def in_turns(commands: dict[str, list[str]], rounds: int, fresh: Mapping[str, Path] | None = None) -> dict[str, Run]:
    """Each of `commands` (label -> arguments after the interpreter) as a fresh process, in turns, for `rounds`
    rounds after one to warm up (the disk cache, the bytecode, a previous output to replace), which is not counted.
    A label of `fresh` writes into a new directory each time: `-o` and a directory under that path, removed
    afterwards (not timed)."""
    runs, fresh = {label: Run() for label in commands}, fresh or {}
    for round_ in range(rounds + 1):
        for label, args in commands.items():
            output = fresh[label] / f"run-{round_}" if label in fresh else None
            wall, peak, failure = run_process([*args, *(["-o", str(output)] if output else [])])
            if output:
                shutil.rmtree(output, ignore_errors=True)
            if round_:
                runs[label].walls.append(wall)
                runs[label].peaks.append(peak)
            runs[label].failure = failure or runs[label].failure
    return runs


def quartiles(values: list[float]) -> tuple[float, float]:
    """The first and third quartiles: the middle half of `values`."""
    first, _, third = statistics.quantiles(values, n=4)
    return first, third


def wall_cell(walls: list[float]) -> str:
    """Median wall time and spread: 'median ms (min-max)'."""
    return f"{statistics.median(walls) * 1000:.0f} ms ({min(walls) * 1000:.0f}-{max(walls) * 1000:.0f})"


def ratio_cell(walls: list[float], floor: list[float]) -> str:
    """The ratio to the floor: of the medians, then the middle half of the ratios within a round."""
    low, high = quartiles([w / f for w, f in zip(walls, floor, strict=True)])
    return f"{statistics.median(walls) / statistics.median(floor):.2f}x ({low:.2f}-{high:.2f}x)"


def start_rows(measured: dict[str, Run]) -> list[list[str]]:
    """Rows of the start's table: command, median wall time (min-max), ratio to the bare import, target."""
    floor = measured[BARE_IMPORT].walls
    rows = []
    for label, _, target in STARTS:
        run = measured[label]
        ratio = "1" if label == BARE_IMPORT else ratio_cell(run.walls, floor)
        failed = f" ({run.failure})" if run.failure else ""
        rows.append([label, wall_cell(run.walls) + failed, ratio, target])
    return rows


def process_rows(rows: tuple[ProcessRow, ...], rounds: int, tmp: Path) -> list[list[str]]:
    """Each row built by every backend as a fresh process, replacing its output and into a new directory, in turns
    with the floor: the cells of its table."""
    from policyc.registry import SCHEDULERS

    commands: dict[str, list[str]] = {BARE_IMPORT: FLOOR}
    fresh: dict[str, Path] = {}
    for i, row in enumerate(rows):
        for backend in SCHEDULERS if not row.missing else ():
            path = tmp / f"row-{i}-{backend}.yaml"
            path.write_text(row.policy(backend))
            build = ["-m", "policyc", "build", str(path), "--no-cache"]  # cold: no build is reused
            commands[f"{i} {backend} replacing"] = [*build, "-o", str(tmp / f"row-{i}-{backend}-out")]
            commands[f"{i} {backend} new"] = build
            fresh[f"{i} {backend} new"] = tmp / f"row-{i}-{backend}-new"
    runs = in_turns(commands, rounds, fresh)
    floor = runs[BARE_IMPORT].walls
    cells = [[BARE_IMPORT, "-", wall_cell(floor), "1", "-", "-", "-", "the reference"]]
    for i, row in enumerate(rows):
        if row.missing:
            cells.append(["-", row.label, row.missing, "-", "-", "-", "-", row.target])
            continue
        for backend in SCHEDULERS:
            replacing, new = runs[f"{i} {backend} replacing"], runs[f"{i} {backend} new"]
            figures = [
                replacing.failure or wall_cell(replacing.walls),
                "-" if replacing.failure else ratio_cell(replacing.walls, floor),
                new.failure or wall_cell(new.walls),
                "-" if new.failure else ratio_cell(new.walls, floor),
                f"{max(replacing.peaks + new.peaks):.0f}",
            ]
            cells.append([backend, row.label, *figures, row.target])
    return cells


def audit_missing() -> str | None:
    """Why the audit row cannot run (this policyc has no `audit` command), or None."""
    probe = subprocess.run([sys.executable, "-m", "policyc", "audit", "--help"], capture_output=True, cwd=REPO)
    return None if probe.returncode == 0 else f"not run: `policyc audit --help` exits {probe.returncode} (no audit)"


def audit_row(rounds: int, tmp: Path) -> tuple[list[str], str | None]:
    """The audit of the generated dump as a fresh process over `rounds` rounds: its table row, and what was generated
    (None: not run)."""
    nodes, pools, tenants, workloads = AUDIT_SIZE
    label = f"{nodes:,} nodes / {AUDIT_PODS:,} pods ({pools} pools, {tenants} tenants, {workloads} workloads)"
    missing = audit_missing()
    if missing:
        return [label, missing, "-", AUDIT_TARGET], None
    policy_path, dump = tmp / "audit-policy.yaml", tmp / "audit-dump.json"
    generated = subprocess.run(
        [sys.executable, str(REPO / "bench" / "generate_dump.py"), "--nodes", str(nodes), "--pools", str(pools),
         "--tenants", str(tenants), "--workloads", str(workloads), "--pods", str(AUDIT_PODS),
         "--policy", str(policy_path), "--output", str(dump)],
        capture_output=True, text=True, check=True, cwd=REPO,
    ).stdout.strip()  # fmt: skip
    audit = ["-m", "policyc", "audit", str(policy_path), "--from", str(dump), "--format", "json"]
    run = in_turns({label: audit}, rounds)[label]
    peak = "-" if run.failure else f"{max(run.peaks):.0f}"
    return [label, run.failure or wall_cell(run.walls), peak, AUDIT_TARGET], generated


def print_audit(rounds: int) -> None:
    """Generate the dump, run the audit row and print it."""
    with tempfile.TemporaryDirectory() as tmp:
        row, generated = audit_row(rounds, Path(tmp))
    print(f"`policyc audit POLICY --from DUMP --format json` as a fresh process over {rounds} rounds: median wall "
          f"(min-max), peak memory; the dump (bench/generate_dump.py): {generated or 'not made'}\n")  # fmt: skip
    print_table(["audit", "median (min-max)", "peak MiB", "target"], [row])


FLEET_SIZE = (2000, 5)
"""The fleet row's directory (bench/generate_fleet.py): team files, clusters."""
FLEET_TARGET = "≤ 5 s (absolute: issue 29)"
FLEET_CHANGED = "teams/team-0001.yaml"
"""The team file the rebuild changes: an odd team's, hosted by clusters 0, 2 and 4 (every other cluster hosts only the
even teams: bench/generate_fleet.py), so 3 of the 5 clusters are compiled and 2 reused; an even team is hosted by
all 5."""


def fleet_row(rounds: int, tmp: Path) -> list[str]:
    """The build of a generated fleet's every cluster and its ApplicationSet, as a fresh process replacing its
    output, over `rounds` rounds: cold (--no-cache: every cluster compiled), and rebuilt after one team file changed
    (`rebuilt`): its table row."""
    sys.path.insert(0, str(REPO / "bench"))
    from generate_fleet import write

    teams, clusters = FLEET_SIZE
    directory = tmp / "fleet"
    write(directory, teams, clusters)
    os.environ["POLICYC_CACHE_DIR"] = str(tmp / "build-records")  # the rebuild's records: not the home's cache
    label = f"{teams:,} team files, {clusters} clusters"
    build = ["-m", "policyc", "build", str(directory), "--repo-url", "https://x/y.git"]
    run = in_turns({label: [*build, "-o", str(tmp / "fleet-out"), "--no-cache"]}, rounds)[label]
    rebuild = rebuilt([*build, "-o", str(tmp / "fleet-rebuilt")], directory / FLEET_CHANGED, rounds)
    peak = "-" if run.failure else f"{max(run.peaks):.0f}"
    return [label, run.failure or wall_cell(run.walls), peak, rebuild.failure or wall_cell(rebuild.walls), FLEET_TARGET]


def rebuilt(build: list[str], changed: Path, rounds: int) -> Run:
    """`build` as a fresh process after each change of the file `changed` (a comment line naming the round), for
    `rounds` rounds after one that compiles every cluster and records it (not counted)."""
    run, original = Run(), changed.read_text()
    for round_ in range(rounds + 1):
        changed.write_text(f"{original}# round {round_}\n")
        wall, peak, failure = run_process(build)
        if round_:
            run.walls.append(wall)
            run.peaks.append(peak)
        run.failure = failure or run.failure
    changed.write_text(original)
    return run


def print_fleet(rounds: int) -> None:
    """Generate the fleet, run its row and print it."""
    with tempfile.TemporaryDirectory() as tmp:
        row = fleet_row(rounds, Path(tmp))
    print(f"`policyc build FLEET -o OUT --repo-url URL` (every cluster, replacing OUT) as a fresh process over "
          f"{rounds} rounds: median wall (min-max), peak memory (cold: --no-cache); the rebuild after one team file "
          f"changed ({FLEET_CHANGED}: 3 of the 5 clusters compiled, 2 reused); the directory: "
          "bench/generate_fleet.py\n")  # fmt: skip
    header = ["fleet", "cold: median (min-max)", "peak MiB", "one team file changed: median (min-max)", "target"]
    print_table(header, [row])


def first_diagnostics(result, count: int = 3) -> str:
    diagnostics = result.report.errors or result.report.diagnostics
    return "; ".join(f"{d.code} {d.message}" for d in diagnostics[:count]) or "failed without a diagnostic"


def growth_cell(backend: str, sizes: list[tuple[int, int, int, int]], tmp: Path, repeat: int) -> str:
    """How the backend's in-process build grows from the second largest size to the largest (best of `repeat` at
    each), or its first failure."""
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
            return f"failed: {type(error).__name__}: {error}"
        if not result.ok:
            return f"failed: {first_diagnostics(result)}"
    small, large = (in_process(path, tmp / f"out-{backend}-{path.stem}", repeat) for path in paths)
    return f"{large['total'] / small['total']:.2f}x ({large['build'] / small['build']:.2f}x without write)"


def print_table(header: list[str], rows: list[list[str]]) -> None:
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for cells in rows:
        print(" | ".join(" ".join(cell.split()).replace("|", "\\|") for cell in cells))
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=9, help="rounds of the process builds")
    parser.add_argument("--quick", action="store_true", help="the two smaller sizes only")
    parser.add_argument("--naive-sample", type=int, default=300, help="objects to check the naive way")
    parser.add_argument("--start", action="store_true", help="only the start: commands beside the bare import")
    parser.add_argument("--start-runs", type=int, default=21, help="rounds of the start's commands")
    parser.add_argument("--audit-rounds", type=int, default=5, help="rounds of the audit of the generated dump")
    parser.add_argument("--audit", action="store_true", help="only the audit of the generated dump")
    parser.add_argument("--fleet-rounds", type=int, default=5, help="rounds of the build of the generated fleet")
    parser.add_argument("--fleet", action="store_true", help="only the build of the generated fleet")
    args = parser.parse_args()
    compileall.compile_dir(REPO / "policyc", quiet=1)
    print(f"policyc benchmark ({os.cpu_count()} CPUs, Python {sys.version.split()[0]})\n")
    if args.audit or not (args.start or args.quick or args.fleet):
        # Before the in-process builds, while this process is small (its peak would count in its children's).
        print_audit(max(args.audit_rounds, 1))
    if args.fleet or not (args.start or args.quick or args.audit):
        print_fleet(max(args.fleet_rounds, 1))
    if args.audit or args.fleet:
        return
    if args.quick:
        print("audit: not run with --quick\n")
    if not args.start:
        builds(SIZES[:2] if args.quick else SIZES, args)
    print(f"start: process walls over {args.start_runs} rounds, median (min-max); ratio to the bare import\n")
    commands = {label: arguments for label, arguments, _ in STARTS}
    header = ["command", "median (min-max)", "ratio: of the medians (middle half of a round's)", "target"]
    print_table(header, start_rows(in_turns(commands, max(args.start_runs, 2))))


def builds(sizes: list[tuple[int, int, int, int]], args: argparse.Namespace) -> None:
    """Print the in-process stages of each size, the naive verification, each row built as a process by every
    backend beside the floor, and each backend's growth."""
    from policyc.registry import SCHEDULERS

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        # The processes first, while this one is small: Linux keeps a process's peak RSS across exec, so a process
        # started by this one after its own builds would count this one's size as its peak.
        paths = [Path(tmp) / f"policy-{size[0]}.yaml" for size in sizes]
        for path, size in zip(paths, sizes, strict=True):
            path.write_text(policy(*size))
        colds = [peak_memory(path, Path(tmp) / f"cold-{path.stem}") for path in paths]
        processes = process_rows(QUICK_ROWS if args.quick else PROCESS_ROWS, max(args.rounds, 2), Path(tmp))
        for path, size, (memory, cold) in zip(paths, sizes, colds, strict=True):
            figures = in_process(path, Path(tmp) / f"out-{path.stem}", args.repeat)
            rows.append((size, figures, memory, cold))
        naive, ours, compared = naive_verification(rows[-1][1]["result"], args.naive_sample)
        growth = [[name, growth_cell(name, sizes, Path(tmp), args.repeat), GROWTH_TARGET] for name in SCHEDULERS]

    print(f"{next(iter(SCHEDULERS))}, in-process stages (best of {args.repeat}):\n")
    header = ["nodes/pools/tenants/workloads", "objects", *STAGES, "total", "cold process", "peak MiB", "objects/s"]
    print_table(header, [
        [f"{nodes}/{pools}/{tenants}/{workloads}", str(f["objects"]), *(f"{f[s] * 1000:.0f} ms" for s in STAGES),
         f"{f['total'] * 1000:.0f} ms", f"{cold * 1000:.0f} ms", f"{memory:.0f}", f"{f['objects'] / f['total']:.0f}"]
        for (nodes, pools, tenants, workloads), f, memory, cold in rows
    ])  # fmt: skip
    small, large = rows[-2][1]["total"], rows[-1][1]["total"]
    print(f"growth: 4x the input ({rows[-2][0][0]} -> {rows[-1][0][0]} nodes) costs {large / small:.2f}x the time")
    print(f"verification: kubernetes_validate.validate {naive * 1000:.2f} ms/object, "
          f"policyc {ours * 1e6:.1f} us/object on the same {compared} objects: {naive / ours:.0f}x faster")  # fmt: skip
    print()

    print(f"`policyc build` as a fresh process, in turns with the floor ({BARE_IMPORT}) over {max(args.rounds, 2)} "
          "rounds: median wall (min-max), ratio to the floor: of the medians (middle half of a round's)")  # fmt: skip
    if args.quick:
        print("(--quick: the 1,250-node policy stands in for the rows; their targets are not for it)")
    print()
    header = ["backend", "nodes / pools / tenants / workloads", "replacing its output", "ratio", "into a new directory",
              "ratio", "peak MiB", "target"]  # fmt: skip
    print_table(header, processes)
    print(f"per backend, in-process growth ({sizes[-2][0]:,} -> {sizes[-1][0]:,} nodes, best of {args.repeat}):\n")
    print_table(["backend", "growth 4x input", "target"], growth)


if __name__ == "__main__":
    main()
