#!/usr/bin/env python3
"""Write the example and the fix of every diagnostic code, which `policyc codes CODE` prints, from the invalid cases.

Each code's example comes from one case of ``tests/cases/invalid/`` that expects it (the product never reads
``tests/`` at run time, so this writes ``policyc/commands/code_examples.json``, package data): what the case is
about (its leading comment), the lines of its policy the diagnostic points at and the fix changes, with the keys
they stand under, what policyc says of them (its ``# output`` lines of the code, without the location), and its
``# fix:`` lines applied, as a diff (or why the fix is not mechanical). Of several cases the one with a mechanical
fix, expecting that code alone, and the shortest example is taken. A code no policy file can produce (reading
errors of the path itself, the proof of policyc's own output) has a note instead, written here.

    python tools/gen_code_examples.py [--check]

``--check`` writes nothing and exits 1 when the file differs from what would be written (a test runs it).
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the tests' reading of the cases, and the checkout's policyc

from policyc import codes  # noqa: E402
from tests.test_fixits import apply_fixes, header_and_body, parse_fixes  # noqa: E402
from tests.test_invalid_cases import CASE_DIR, CASES, expected_codes, read_case  # noqa: E402

OUT = REPO / "policyc" / "commands" / "code_examples.json"
AUDIT_NOTE = (
    "`policyc audit POLICY` reports it of a running cluster (a live one, or a kubectl dump with --from), not of a "
    "policy file: see docs/audit.md, with an example line of each finding and what to do about it."
)

_TEAMS = "A policy directory (docs/teams.md) reports it, with several files: tests/test_teams.py shows each case. "
_FLEET = "A fleet (docs/teams.md) reports it, in the cluster document: tests/test_fleet.py shows each case. "
NOTES = {
    "file/policy-directory": _TEAMS + "Give the directory exactly one document of kind ClusterPolicy (the platform's): "
    "add one (`policyc init DIR/platform.yaml`), or merge the two.",
    "shape/team-document": _TEAMS + "A team's file holds documents of kind Tenant, with the platform's apiVersion, "
    "metadata.name and a spec of tenants and workloads only; move anything else to the platform's file.",
    "reference/team-claim-clash": _TEAMS + "Each tenant, namespace and workload name belongs to one document: the "
    "second claim (in sorted file order) is the error. Rename it, or choose another namespace.",
    "reference/team-foreign-tenant": _TEAMS + "A team's workload runs as one of the tenants its own file declares: "
    "write one of them as its tenant.",
    "meaning/team-beyond-grant": _TEAMS + "The platform's spec.teams lists the priority classes and GPU tiers teams "
    "may use and the most quota a team may take: stay within it, or ask the platform team to grant more.",
    "shape/cluster-document": _FLEET + "A cluster's file holds a document of kind Cluster with the platform's "
    "apiVersion, metadata.name, spec.destination (server or name) and only the fields a cluster overrides.",
    "reference/cluster-name-clash": _FLEET + "Each cluster is named by one document: rename one, or merge the two.",
    "reference/cluster-override-clash": _FLEET + "A cluster document lists each pool, each hosted team and each "
    "tenant override once, and adds under addNodePools only pools the shared policy lacks (nodePools replaces one it "
    "has).",
    "reference/cluster-unknown-name": _FLEET + "nodePools replaces a pool of the shared policy by its name, "
    "hostedTeams names team documents by their metadata.name, and tenantOverrides names a tenant of the platform or "
    "of a team the cluster hosts: fix the name, or add a new pool under addNodePools.",
    "PC001": "policyc reports it for a path it cannot read as a file: missing, a directory, or not readable "
    "(`policyc validate no-such-file.yaml`). Name the policy's file, or make it readable.",
    "PC434": "`policyc build POLICY -o DIR` reports it when DIR holds an earlier build whose priority class of the "
    "same name has another value: the API server does not change a priority class's value in place, so every sync "
    "of the new output would fail. Keep the value, or add the class under a new name, move the workloads to it and "
    "drop the old one.",
    "PC501": "The placement proof of the emitted templates reports it. A policy does not reach it: a toleration that "
    "would let a template onto the other usage's pools is refused first (PC509). If you see it, please report it.",
    "PC502": "The placement proof of the emitted templates reports it. A policy does not reach it: a toleration of "
    "another tier's products is refused first (PC509). If you see it, please report it.",
    "PC503": "The placement proof of the emitted templates reports it. A policy does not reach it: a toleration of "
    "the control plane is refused first (PC509). If you see it, please report it.",
    "PC505": "The placement proof of the emitted templates reports it. A policy does not reach it: policyc's "
    "templates always prefer their dedicated pools. If you see it, please report it.",
    "PC901": "A policyc bug: an object policyc emitted does not pass its schema. Please report it, with the policy.",
    "PC902": "A policyc bug: a tenant's admission policy does not do what its contract says. Please report it, with "
    "the policy.",
    "proof/placement-fresh-node": "The placement proof reports it for a template that could land on a node as it "
    "registers, before its pool's labels and taints are set. A policy does not reach it: a toleration of what such "
    "a node carries is refused first (PC509). If you see it, please report it.",
}
"""What `policyc codes` says of a code no policy file can produce, in place of an example."""

DIAGNOSTIC = re.compile(r"[^:]+:(\d+):\d+: (\w+) (\S+): (.*)")
"""A line of a case's output: file, line, column, severity, code, message and hint."""
CONTEXT = 2
"""Unchanged lines around each change of a fix's diff."""


@dataclass(frozen=True)
class Example:
    case: str
    about: str
    policy: list[str]
    says: list[str]
    fix: list[str] | None
    """The fix as diff lines (' ', '-', '+' and '...' between hunks); None when it is not mechanical."""
    manual: str | None
    """Why the fix is not mechanical."""
    alone: bool
    """Whether the case expects this code alone."""

    def rank(self) -> tuple[bool, bool, int, str]:
        return self.fix is None, not self.alone, len(self.policy) + len(self.fix or ()), self.case

    def data(self) -> dict[str, object]:
        out: dict[str, object] = {"case": self.case, "about": self.about, "policy": self.policy, "says": self.says}
        if self.fix is not None:
            out["fix"] = self.fix
        else:
            out["manual"] = self.manual
        return out


def visible(line: str) -> str:
    """A line as a terminal and a Markdown code block show it: tabs, other control characters and bytes that are not
    UTF-8 (read as surrogates) written as escapes, as the cases' fix lines write them."""

    def escape(char: str) -> str:
        if char == "\t":
            return "\\t"
        if "\udc80" <= char <= "\udcff":
            return f"\\x{ord(char) - 0xDC00:02x}"
        if ord(char) < 0x20 or ord(char) == 0x7F:
            return f"\\x{ord(char):02x}"
        return char

    return "".join(escape(c) for c in line)


def indent(line: str) -> int:
    """How far a line is indented (a tab, which YAML refuses there, as a terminal shows it)."""
    line = line.expandtabs()
    return len(line) - len(line.lstrip(" "))


def significant(line: str) -> bool:
    """Whether a line holds YAML content (not blank, not only a comment)."""
    return bool(line.strip()) and not line.lstrip().startswith("#")


def excerpt(lines: list[str], key: set[int]) -> list[int]:
    """The key lines and the keys they stand under (each line above with less indentation, up to the top level), in
    order: what a reader needs to find them in their own policy."""
    shown = set(key)
    for k in key:
        depth = indent(lines[k]) if significant(lines[k]) else 0
        for i in range(k - 1, -1, -1):
            if depth == 0:
                break
            if significant(lines[i]) and indent(lines[i]) < depth:
                shown.add(i)
                depth = indent(lines[i])
    return sorted(shown)


def with_gaps(lines: list[str], shown: list[int]) -> list[str]:
    """The shown lines, a line '...' (indented as the next one) where more than one line is left out between them."""
    out: list[str] = []
    for previous, i in zip([None, *shown], shown, strict=False):
        if previous is not None and i - previous == 2:
            out.append(visible(lines[i - 1]))
        elif previous is not None and i - previous > 2:
            out.append(" " * indent(lines[i]) + "...")
        out.append(visible(lines[i]))
    return out


def diff(before: list[str], after: list[str]) -> list[str]:
    """The fix as the lines of a unified diff, without its headers; hunks apart by a line '...'."""
    out = []
    for line in list(difflib.unified_diff(before, after, lineterm="", n=CONTEXT))[2:]:  # without '---' and '+++'
        if line.startswith("@@"):
            if out:
                out.append("...")
            continue
        out.append(line[0] + visible(line[1:]))
    return out


def changed(before: list[str], after: list[str]) -> set[int]:
    """The lines of `before` a fix changes or deletes, and the line after which it inserts."""
    out: set[int] = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            out.update(range(i1, i2))
        elif tag == "insert":
            out.add(max(i1 - 1, 0))
    return out


def examples_of(case: Path) -> dict[str, Example]:
    """The example the case gives of each code it expects."""
    header, body = header_and_body(case)
    lines = body.splitlines()
    fixes = parse_fixes(case, header)
    manual = None
    key: set[int] = set()
    fixed: list[str] | None = None
    if fixes is None:
        manual = next(line for line in header if line.startswith("# fix: none")).split("—", 1)[1].strip()
    else:
        fixed = apply_fixes(case, body, fixes).splitlines()
        key |= changed(lines, fixed)
    expected = expected_codes(case)
    output = [DIAGNOSTIC.fullmatch(line) for line in (read_case(case).output or "").splitlines()]
    out = {}
    for code in expected:
        found = [m for m in output if m and m.group(3) == code]
        lines_of_code = {int(m.group(1)) - 1 - len(header) for m in found}
        shown = excerpt(lines, key | {i for i in lines_of_code if 0 <= i < len(lines)})
        about = []
        for i, line in enumerate(lines):
            if not line.startswith("#") or i in shown:
                break
            about.append(line.lstrip("# ").strip())
        out[code] = Example(
            case=case.relative_to(REPO).as_posix(),
            about=" ".join(a for a in about if a),
            policy=with_gaps(lines, [i for i in shown if significant(lines[i]) or i in key]),
            says=[f"{m.group(2)} {m.group(3)}: {visible(m.group(4))}" for m in found],
            fix=None if fixed is None else diff(lines, fixed),
            manual=manual,
            alone=expected == [code],
        )
    return out


def generate() -> str:
    """The file's text: every code of the catalogue, in its order, with its example or its note."""
    best: dict[str, Example] = {}
    for case in CASES:
        for code, example in examples_of(case).items():
            if code not in best or example.rank() < best[code].rank():
                best[code] = example
    data: dict[str, object] = {}
    for code in codes.RULES:
        if code in best:
            data[code] = best[code].data()
        elif code in NOTES:
            data[code] = {"note": NOTES[code]}
        elif codes.RULES[code].family == "audit":
            data[code] = {"note": AUDIT_NOTE}
        else:
            raise SystemExit(f"{code} has no case in {CASE_DIR.relative_to(REPO)} and no note in {__file__}")
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file is not up to date")
    args = parser.parse_args()
    text = generate()
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(REPO)} is not up to date: run python tools/gen_code_examples.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
