"""The bad-policy corpus: tests/cases/invalid/<name>.yaml, one file per mistake, its expected output inside it.

A case starts with ``# expect: PCnnn [PCmmm ...]`` naming the codes it must produce (then the ``# fix:`` lines of
tests/test_fixits.py), then comes the policy, then, after a blank line, its output block: a line ``# output`` and
every diagnostic of the policy exactly as ``policyc validate`` prints it, each behind ``# `` (as black keeps the
expected output beside the input in its test data)::

    # expect: PC102
    # fix: gpus: 0.5 => gpus: 1
    # half a GPU per pod (gpus counts whole devices)
    ...
          gpus: 0.5

    # output
    # pc102-fractional-gpus.yaml:29:13: error PC102: 'workloads[0].gpus' must be an integer, ...

The case's policy is its bytes before ``\\n# output\\n``: the test compiles those, and the whole file, which must
read the same (the block is a YAML comment). Where a trailing comment would change what the loader reads (a block
scalar kept with ``|+`` at the end, say), the output goes instead, as plain lines, to the sibling file <name>.out.

After an intended change of a message, or for a new case, write the blocks with

    pytest tests/test_invalid_cases.py --update-cases

and review the diff of the cases. Every code in the catalogue needs at least one case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from policyc.codes import RULES
from policyc.compiler import compile_file
from policyc.diagnostics import PolicyError
from policyc.language.load import load_bytes
from policyc.output.formats import render_text
from tests.conftest import REPO

CASE_DIR = REPO / "tests" / "cases" / "invalid"
CASES = sorted(CASE_DIR.glob("*.yaml"))
UNREACHABLE_FROM_A_FILE = {
    "PC001": "an unreadable path, tested in tests/test_cli.py",
    "PC501": "a toleration that would let a template onto the other usage is refused first (PC509); the placement "
    "proof of the emitted templates is tested in tests/test_placement.py",
    "PC502": "a toleration of another tier's products is refused first (PC509); tested in tests/test_placement.py",
    "PC503": "a toleration of the control plane is refused first (PC509); tested in tests/test_placement.py",
    "PC505": "generated templates always prefer their dedicated pools; tested in tests/test_placement.py",
    "PC901": "an emitted object failing its schema is a policyc bug; tested in tests/test_verify.py",
    "PC902": "a tenancy policy that fails its own proof is a policyc bug; tested in tests/test_tenancy.py",
    "PC434": "a change against a previous output directory; tested in tests/test_drift.py",
    **{
        code: "a mistake across the files of a policy directory; tested in tests/test_teams.py"
        for code in (
            "file/policy-directory",
            "shape/team-document",
            "reference/team-claim-clash",
            "reference/team-foreign-tenant",
            "meaning/team-beyond-grant",
        )
    },
    **{
        code: "a mistake in a cluster document of a policy directory (a fleet); tested in tests/test_fleet.py"
        for code in (
            "shape/cluster-document",
            "reference/cluster-name-clash",
            "reference/cluster-override-clash",
            "reference/cluster-unknown-name",
        )
    },
    "proof/placement-fresh-node": "a toleration of what a node carries as it registers is refused first (PC509); "
    "tested in tests/test_provisioning.py",
}
OUTPUT = b"\n# output\n"
"""Where a case's output block begins: a blank line, then ``# output`` (the policy keeps its last line break)."""
LINE = "# "
UPDATE = "pytest tests/test_invalid_cases.py --update-cases"


@dataclass(frozen=True)
class Case:
    """A case file split into the policy it holds and the output it states."""

    path: Path
    policy: bytes
    """The bytes the diagnostics are of: the file before its output block (the whole file when it has none)."""
    output: str | None
    """The stated diagnostics as `render_text` gives them; None when the case states none."""


def sibling(path: Path) -> Path:
    """The file beside a case that states its output when a block inside it would change how it parses."""
    return path.with_suffix(".out")


def read_case(path: Path) -> Case:
    raw = path.read_bytes()
    start = raw.rfind(OUTPUT)
    beside = sibling(path)
    if start < 0:
        output = beside.read_text(encoding="utf-8").removesuffix("\n") if beside.exists() else None
        return Case(path, raw, output)
    assert not beside.exists(), f"{path.name} states its output twice: in a '# output' block and in {beside.name}"
    block = raw[start + len(OUTPUT) :].decode("utf-8")
    lines = block.split("\n")[:-1]
    assert block.endswith("\n") and all(line.startswith(LINE) for line in lines), (
        f"{path.name}: every line below '# output' is '# ' and a diagnostic, the last one ending the file; "
        f"rewrite the block: {UPDATE}"
    )
    return Case(path, raw[:start], "\n".join(line.removeprefix(LINE) for line in lines))


def output_block(rendered: str) -> bytes:
    return OUTPUT + "".join(f"{LINE}{line}\n" for line in rendered.split("\n")).encode("utf-8")


def loaded(raw: bytes, name: str) -> object:
    """What the loader makes of `raw`: the document, or the diagnostics it stopped with."""
    try:
        return load_bytes(raw, name)
    except PolicyError as e:
        return e.diagnostics


def write_output(case: Case, rendered: str) -> None:
    """State `rendered` as the case's output: in a block at its end, or beside it where a block would be read."""
    with_block = case.policy + output_block(rendered)
    if loaded(with_block, case.path.name) == loaded(case.policy, case.path.name):
        case.path.write_bytes(with_block)
        sibling(case.path).unlink(missing_ok=True)
    else:
        case.path.write_bytes(case.policy)
        sibling(case.path).write_text(rendered + "\n", encoding="utf-8")


def expected_codes(case: Path) -> list[str]:
    first = case.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    match = re.fullmatch(r"# expect: ((?:(?:PC\d{3}|[a-z0-9-]+/[a-z0-9-]+) ?)+)", first.strip())
    assert match, f"{case.name} must start with '# expect: <code> ...' (PCnnn, or a rule's identity family/name)"
    return match.group(1).split()


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_invalid_case(path: Path, tmp_path: Path, request) -> None:
    case = read_case(path)
    policy = tmp_path / path.name
    policy.write_bytes(case.policy)
    report = compile_file(policy, path.name).report
    rendered = render_text(report)
    if request.config.getoption("update_cases"):
        write_output(case, rendered)
        case = read_case(path)
    found = {d.code for d in report.diagnostics}
    missing = set(expected_codes(path)) - found
    assert not missing, f"{path.name}: expected {sorted(missing)}, got:\n{rendered}"
    assert all(d.line and d.column for d in report.diagnostics)
    assert case.output is not None, f"{path.name} states no output; write it: {UPDATE}"
    assert rendered == case.output, f"{path.name}: the output differs from the one stated; after review: {UPDATE}"
    if case.policy != path.read_bytes():
        assert render_text(compile_file(path, path.name).report) == rendered, (
            f"{path.name}: its '# output' block changes how the policy reads; {UPDATE} moves the output to "
            f"{sibling(path).name}"
        )


def test_every_sibling_output_has_its_case() -> None:
    orphans = [out.name for out in CASE_DIR.glob("*.out") if not out.with_suffix(".yaml").exists()]
    assert not orphans, f"outputs without a case in tests/cases/invalid: {orphans}"


def test_every_code_has_a_case() -> None:
    covered = {code for case in CASES for code in expected_codes(case)}
    found_on_a_cluster = {code for code, r in RULES.items() if r.family == "audit"}  # tests/test_audit*.py
    uncovered = set(RULES) - covered - set(UNREACHABLE_FROM_A_FILE) - found_on_a_cluster
    assert not uncovered, f"codes without a case in tests/cases/invalid: {sorted(uncovered)}"


def test_the_output_block_reads_back_as_rendered(tmp_path: Path) -> None:
    path = tmp_path / "case.yaml"
    rendered = "case.yaml:2:1: error PC101: unknown field 'x'; did you mean 'y'?\ncase.yaml:3:5: warning PC410: # not"
    write_output(Case(path, b"# expect: PC101\nspec: {}\n", None), rendered)
    assert path.read_bytes() == (
        b"# expect: PC101\nspec: {}\n\n# output\n"
        b"# case.yaml:2:1: error PC101: unknown field 'x'; did you mean 'y'?\n"
        b"# case.yaml:3:5: warning PC410: # not\n"
    )
    assert read_case(path) == Case(path, b"# expect: PC101\nspec: {}\n", rendered)
    assert not sibling(path).exists()


def test_a_policy_without_a_final_line_break_keeps_it_missing(tmp_path: Path) -> None:
    path = tmp_path / "case.yaml"
    write_output(Case(path, b"spec: {}", None), "case.yaml:1:1: error PC103: x")
    assert path.read_bytes() == b"spec: {}\n# output\n# case.yaml:1:1: error PC103: x\n"
    assert read_case(path).policy == b"spec: {}"


def test_an_output_a_block_would_change_goes_beside_the_case(tmp_path: Path) -> None:
    # A block scalar kept with '|+' takes every blank line up to the next content: the blank line before
    # '# output' would add a third line break to its value.
    path = tmp_path / "case.yaml"
    policy = b"metadata:\n  description: |+\n    kept\n\n"
    write_output(Case(path, policy, None), "case.yaml:1:1: error PC103: x")
    assert path.read_bytes() == policy
    assert sibling(path).read_text(encoding="utf-8") == "case.yaml:1:1: error PC103: x\n"
    assert read_case(path) == Case(path, policy, "case.yaml:1:1: error PC103: x")
    # once a block would not change it, the output moves back into the case
    write_output(Case(path, b"spec: {}\n", None), "case.yaml:1:1: error PC103: y")
    assert read_case(path) == Case(path, b"spec: {}\n", "case.yaml:1:1: error PC103: y")
    assert not sibling(path).exists()


def test_a_block_that_is_not_all_comment_lines_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "case.yaml"
    path.write_bytes(b"spec: {}\n\n# output\n# case.yaml:1:1: error PC103: x\nspec: {}\n")
    with pytest.raises(AssertionError, match="every line below '# output'"):
        read_case(path)
