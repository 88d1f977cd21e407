"""Hostile YAML through the command line: a located diagnostic, exit code 1, no traceback, no hang, little memory.

Inputs that could hang or exhaust memory (alias bombs, deep nesting, huge files) run `python -m policyc` in a
subprocess with a timeout and report its peak memory; the others run in-process with click's CliRunner. Every
test names the diagnostic it expects with its code, line and column, and checks that nothing was written.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from policyc.commands.cli import main
from policyc.language.load import MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES, load_file
from tests.conftest import REPO

MINIMAL = (REPO / "policies" / "minimal.yaml").read_text()
POOL_GPU = "      gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}\n"
POOL_ALLOCATABLE = next(line + "\n" for line in MINIMAL.splitlines() if line.strip().startswith("allocatable:"))
DIAGNOSTIC = re.compile(r"^policy\.yaml:(\d+):(\d+): (?:error|warning) (PC\d{3}): ", re.MULTILINE)

# Runs `policyc ARGS` as a child process, then prints the child's peak memory (KiB) on stderr, whatever its exit
# status (policyc ends its process without the interpreter's shutdown, so the child cannot report it itself).
MEASURED_CLI = """
import resource, subprocess, sys
code = subprocess.call([sys.executable, "-m", "policyc", *sys.argv[1:]])
print(f"maxrss={resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}", file=sys.stderr)
sys.exit(code)
"""
BASELINE_KIB: list[int] = []  # the peak memory of building the minimal policy, measured once


def with_pool_lines(*lines: str) -> str:
    """The minimal policy with `lines` added to its only node pool (an `allocatable` line replaces its own)."""
    text = MINIMAL
    if any(line.startswith("allocatable:") for line in lines):
        text = text.replace(POOL_ALLOCATABLE, "")
    return text.replace(POOL_GPU, POOL_GPU + "".join(f"      {line}\n" for line in lines))


def found(stderr: str) -> list[tuple[str, int, int]]:
    return [(code, int(line), int(column)) for line, column, code in DIAGNOSTIC.findall(stderr)]


def build_in_process(tmp_path: Path, monkeypatch, raw: bytes) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    Path("policy.yaml").write_bytes(raw)
    result = CliRunner().invoke(main, ["build", "policy.yaml", "-o", "out"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists(), "nothing is written for a policy with errors"
    return result.exit_code, result.stderr


def build_in_subprocess(tmp_path: Path, raw: bytes | None, timeout: float = 30) -> tuple[int, str, float, int]:
    """Exit status, stderr, seconds and peak KiB of `policyc build policy.yaml -o out` (raw None: file exists)."""
    if raw is not None:
        (tmp_path / "policy.yaml").write_bytes(raw)
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", MEASURED_CLI, "build", "policy.yaml", "-o", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.monotonic() - start
    assert result.returncode >= 0, f"killed by signal {-result.returncode}"
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists(), "nothing is written for a policy with errors"
    peak = re.search(r"^maxrss=(\d+)$", result.stderr, re.MULTILINE)
    assert peak, result.stderr
    return result.returncode, result.stderr, seconds, int(peak.group(1))


@pytest.fixture(scope="module")
def baseline_kib(tmp_path_factory) -> int:
    """Peak memory of a normal build of the minimal policy: what a refused hostile file is compared with."""
    tmp = tmp_path_factory.mktemp("baseline")
    (tmp / "policy.yaml").write_text(MINIMAL)
    result = subprocess.run(
        [sys.executable, "-c", MEASURED_CLI, "build", "policy.yaml", "-o", "out"],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return int(re.search(r"^maxrss=(\d+)$", result.stderr, re.MULTILINE).group(1))


# --- alias bombs ("billion laughs") -----------------------------------------------------------------------


def laughs(fanout: int, levels: int, *, mapping: bool = False) -> str:
    """Anchors a0..a{levels}, each `fanout` aliases of the one before: fanout**levels values from a tiny file."""
    lines = ["a0: &a0 lol"]
    for i in range(1, levels + 1):
        if mapping:
            items = ", ".join(f"k{j}: *a{i - 1}" for j in range(fanout))
            lines.append(f"a{i}: &a{i} {{{items}}}")
        else:
            lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * fanout)}]")
    return "\n".join(lines) + "\n"


def merge_laughs(levels: int) -> str:
    """The bomb through merge keys: each level merges the previous one and adds two aliases of it."""
    lines = ["b0: &b0 {x: lol}"]
    lines += [f"b{i}: &b{i} {{<<: *b{i - 1}, l{i}: *b{i - 1}, r{i}: *b{i - 1}}}" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def wide_laughs() -> str:
    """One anchor of 1,000 items aliased 1,000 times: a million values, no deep structure."""
    return "a: &a [" + ", ".join(["lol"] * 1000) + "]\nb: [" + ", ".join(["*a"] * 1000) + "]\n"


def bomb_in_a_policy() -> str:
    """The classic bomb behind a field of an otherwise valid policy (the anchors in a description)."""
    return MINIMAL.replace("  name: minimal\n", "  name: minimal\n  description:\n" + _indent(laughs(10, 9), 4))


def _indent(text: str, width: int) -> str:
    return "".join(" " * width + line + "\n" for line in text.splitlines())


@pytest.mark.parametrize(
    ("text", "where"),
    [
        pytest.param(laughs(10, 9), (1, 5), id="sequences-10-wide-9-deep"),
        pytest.param(laughs(10, 9, mapping=True), (1, 5), id="mappings-10-wide-9-deep"),
        pytest.param(merge_laughs(40), (1, 5), id="merge-keys-40-deep"),
        pytest.param(wide_laughs(), (1, 2498), id="one-level-a-million"),
        pytest.param(bomb_in_a_policy(), (9, 9), id="inside-a-policy"),
    ],
)
def test_alias_bomb_is_refused_quickly_in_little_memory(tmp_path, baseline_kib, text, where) -> None:
    code, stderr, seconds, peak_kib = build_in_subprocess(tmp_path, text.encode())
    assert code == 1, stderr
    assert ("PC007", *where) in found(stderr), stderr
    assert f"more than {MAX_NODES:,} values" in stderr
    assert seconds < 15
    # Up to MAX_NODES values are built, each with its path in the source map: a few hundred bytes a value.
    assert peak_kib < baseline_kib + 300 * 1024, f"peak {peak_kib} KiB"


def test_recursive_alias_is_refused(tmp_path, monkeypatch) -> None:
    code, stderr = build_in_process(tmp_path, monkeypatch, b"a: &a [x, *a]\n")
    assert code == 1
    assert found(stderr) == [("PC007", 1, 8)]


# --- deep nesting ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where"),
    [
        pytest.param("a: " + "[" * 1_000_000 + "]" * 1_000_000 + "\n", (1, 68), id="flow-sequences-1M"),
        pytest.param("a: " + "{b: " * 100_000 + "c" + "}" * 100_000 + "\n", (1, 260), id="flow-mappings-100k"),
        pytest.param("a:\n" + "[\n" * 100_000 + "]\n" * 100_000, (66, 1), id="flow-one-bracket-a-line"),
        pytest.param("- " * 100_000 + "x\n", (1, 131), id="compact-block-sequences-100k"),
        pytest.param("- " * 3_000_000 + "x\n", (1, 131), id="compact-block-sequences-3M"),
        pytest.param("? " * 100_000 + "x\n", (1, 131), id="compact-explicit-keys"),
        pytest.param("".join(" " * i + "k:\n" for i in range(1000)) + " " * 1000 + "x\n", (65, 65), id="block-indent"),
        pytest.param("k:\n" + "- " * 40 + "[" * 40 + "x" + "]" * 40 + "\n", (2, 105), id="block-then-flow"),
    ],
)
def test_deep_nesting_is_refused_without_crashing(tmp_path, baseline_kib, text, where) -> None:
    code, stderr, seconds, peak_kib = build_in_subprocess(tmp_path, text.encode())
    assert code == 1, stderr
    assert ("PC007", *where) in found(stderr), stderr
    assert f"({MAX_DEPTH} levels)" in stderr
    assert seconds < 15
    assert peak_kib < baseline_kib + 150 * 1024, f"peak {peak_kib} KiB"


# --- size --------------------------------------------------------------------------------------------------------


def test_50_mb_file_is_refused_before_reading_it(tmp_path, monkeypatch) -> None:
    big = tmp_path / "policy.yaml"
    with open(big, "wb") as f:  # sparse: 50 MB that cost nothing to write, and a lot to read
        f.write(b"a: b\n")
        f.truncate(50 * 1024 * 1024)
    tracemalloc.start()
    start = time.monotonic()
    try:
        with pytest.raises(Exception) as refused:
            load_file(big, "policy.yaml")
        seconds = time.monotonic() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(d.code, d.line, d.column) for d in refused.value.diagnostics] == [("PC007", 1, 1)]
    assert f"policyc reads at most {MAX_FILE_BYTES:,}" in refused.value.diagnostics[0].message
    assert seconds < 1
    assert peak < 1024 * 1024, f"{peak} bytes allocated: the file was read"
    code, stderr = build_in_process(tmp_path, monkeypatch, big.read_bytes())
    assert code == 1
    assert found(stderr) == [("PC007", 1, 1)]


def test_many_small_values_within_the_size_limit_are_refused_quickly(tmp_path, baseline_kib) -> None:
    # 2 million one-character items in 8 MiB: composing them all would take half a minute and 500 MB.
    text = "- x\n" * (MAX_FILE_BYTES // 4 - 1)
    code, stderr, seconds, peak_kib = build_in_subprocess(tmp_path, text.encode())
    assert code == 1
    assert found(stderr) == [("PC007", MAX_NODES, 3)]
    assert seconds < 15
    assert peak_kib < baseline_kib + 150 * 1024, f"peak {peak_kib} KiB"


def test_a_device_without_a_size_is_read_only_up_to_the_limit(tmp_path) -> None:
    start = time.monotonic()
    result = CliRunner().invoke(main, ["build", "/dev/zero", "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert re.search(r"^/dev/zero:1:1: error PC007: the input exceeds", result.stderr, re.MULTILINE), result.stderr
    assert time.monotonic() - start < 5


# --- syntax, encoding and YAML features ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected", "hint"),
    [
        pytest.param(b"", ("PC005", 1, 1), "start from an example", id="empty-file"),
        pytest.param(b"# nothing\n\n# at all\n", ("PC005", 1, 1), "start from an example", id="comments-only"),
        pytest.param(
            MINIMAL.replace("  name: minimal\n", "  name: minimal\n\tname: x\n").encode(),
            ("PC002", 8, 1),
            "indent with spaces",
            id="tab-indentation",
        ),
        pytest.param(
            MINIMAL.replace("  name: minimal\n", "  name: minimal\n  name: other\n").encode(),
            ("PC003", 8, 3),
            "first defined on line 7",
            id="duplicate-key",
        ),
        pytest.param(
            MINIMAL.encode() + b"---\n" + MINIMAL.encode(), ("PC004", 30, 1), "split the documents", id="two-documents"
        ),
        pytest.param(
            b"a: 1\n--- \nb: 2\n---\nc: 3\n", ("PC004", 4, 1), "exactly one ClusterPolicy", id="three-documents"
        ),
        pytest.param(
            MINIMAL.replace("name: ml", "name: m\xe9l").encode("latin-1"), ("PC008", 21, 14), "UTF-8", id="latin-1"
        ),
        pytest.param(MINIMAL.encode("utf-16"), ("PC008", 1, 1), "UTF-8", id="utf-16"),
        pytest.param(bytes(range(256)) * 4, ("PC008", 2, 118), "UTF-8", id="binary"),
        pytest.param(b"\x7fELF\x02\x01\x01\x00\x00\x00", ("PC008", 1, 8), "binary file", id="executable"),
        pytest.param(
            MINIMAL.replace("name: ml", "name: m\x00l").encode(), ("PC008", 21, 14), "binary file", id="nul-byte"
        ),
        pytest.param(b"a: \x07\n", ("PC002", 1, 4), None, id="control-character"),
        pytest.param(b'a: "\\ud800"\n', ("PC002", 1, 5), None, id="lone-surrogate-escape"),
    ],
)
def test_unreadable_files_get_one_located_error(tmp_path, monkeypatch, raw, expected, hint) -> None:
    code, stderr = build_in_process(tmp_path, monkeypatch, raw)
    assert code == 1
    assert expected in found(stderr), stderr
    if hint:
        assert hint in stderr


@pytest.mark.parametrize(
    ("text", "expected", "hint"),
    [
        pytest.param(
            MINIMAL.replace("name: minimal", "name: !!python/object/apply:os.system ['touch pwned']"),
            ("PC006", 7, 9),
            "remove the tag",
            id="python-object-apply",
        ),
        pytest.param(
            MINIMAL.replace("name: minimal", "name: !!python/name:os.system ''"),
            ("PC006", 7, 9),
            "quote the value",
            id="python-name",
        ),
        pytest.param(
            MINIMAL.replace("name: minimal", "name: !!binary aGVsbG8="),
            ("PC006", 7, 9),
            "quote the value",
            id="binary-tag",
        ),
        pytest.param(
            MINIMAL.replace("name: minimal", "name: !!set {a, b}"), ("PC006", 7, 9), "remove the tag", id="set-tag"
        ),
        pytest.param(
            with_pool_lines("rdma: yes"),
            ("PC102", 19, 13),
            "YAML 1.2 reads yes/no/on/off as strings",
            id="yes-for-a-boolean",
        ),
        pytest.param(with_pool_lines("gpuFeatureDiscovery: on"), ("PC102", 19, 28), "YAML 1.2", id="on-for-a-boolean"),
        pytest.param(
            with_pool_lines("labels: {example.com/x: 1e3}"),
            ("PC102", 19, 31),
            'quote it: "1e3"',
            id="number-for-a-label-value",
        ),
        pytest.param(
            MINIMAL.replace("name: minimal", "name: 0123"), ("PC102", 7, 9), 'quote it: "0123"', id="octal-looking-name"
        ),
        pytest.param(MINIMAL.replace('"1.33"', "1.30"), ("PC102", 9, 22), 'quote it: "1.30"', id="float-version"),
        pytest.param(
            MINIMAL.replace("count: 8", "count: " + "9" * 5000),
            ("PC006", 18, 52),
            "Quote it",
            id="integer-of-5000-digits",
        ),
        pytest.param(
            with_pool_lines("allocatable: {cpu: 0x" + "f" * 4000 + "}"),
            ("PC006", 19, 26),
            "Quote it",
            id="hexadecimal-of-4000-digits",
        ),
        pytest.param(
            with_pool_lines("allocatable: {cpu: .inf}"), ("PC006", 19, 26), "quote it if it is a string", id="infinity"
        ),
        pytest.param(
            MINIMAL.replace("gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}", "gpu: {<<: [a, b], count: 8}"),
            ("PC006", 18, 18),
            "must merge a mapping",
            id="merge-of-a-non-mapping",
        ),
        pytest.param(
            MINIMAL.replace("  nodePools:", "  ? [a, b]\n  : x\n  nodePools:"),
            ("PC006", 14, 5),
            "",
            id="non-string-key",
        ),
    ],
)
def test_yaml_features_and_types_get_a_located_error_with_a_hint(tmp_path, monkeypatch, text, expected, hint) -> None:
    code, stderr = build_in_process(tmp_path, monkeypatch, text.encode())
    assert code == 1
    assert expected in found(stderr), stderr
    assert hint in stderr
    assert not (tmp_path / "pwned").exists()


def test_yaml_12_reads_yes_as_a_string_where_a_string_belongs(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("policy.yaml").write_text(with_pool_lines("labels: {example.com/enabled: yes, example.com/power: on}"))
    result = CliRunner().invoke(main, ["build", "policy.yaml", "-o", "out"])
    assert result.exit_code == 0, result.stderr
    plan = (tmp_path / "out" / "nodes" / "plan.json").read_text()
    assert '"example.com/enabled": "yes"' in plan and '"example.com/power": "on"' in plan


def test_merge_keys_are_accepted(tmp_path, monkeypatch) -> None:
    text = MINIMAL.replace(
        "gpu: {product: NVIDIA-A100-SXM4-40GB, count: 8}", "gpu: {<<: {product: NVIDIA-A100-SXM4-40GB}, count: 8}"
    )
    monkeypatch.chdir(tmp_path)
    Path("policy.yaml").write_text(text)
    result = CliRunner().invoke(main, ["build", "policy.yaml", "-o", "out"])
    assert result.exit_code == 0, result.stderr
    Path("plain.yaml").write_text(MINIMAL)
    assert CliRunner().invoke(main, ["build", "plain.yaml", "-o", "plain"]).exit_code == 0
    assert (tmp_path / "out" / "nodes" / "plan.json").read_bytes() == (
        tmp_path / "plain" / "nodes" / "plan.json"
    ).read_bytes().replace(b"plain.yaml", b"policy.yaml")


# --- values that are valid YAML but cost the compiler dearly (bugs outside the loader) -----------------------------


def test_huge_quantity_exponent_does_not_hang(tmp_path) -> None:
    text = with_pool_lines('allocatable: {cpu: "1e999999999"}')
    code, _, seconds, _ = build_in_subprocess(tmp_path, text.encode(), timeout=5)
    assert code == 1 and seconds < 5


def test_total_node_count_is_bounded(tmp_path) -> None:
    ranges = ", ".join(f'"n{i}-[1-99999]"' for i in range(100))
    text = MINIMAL.replace('nodes: ["gpu-[1-4]"]', f"nodes: [{ranges}]")
    code, _, seconds, _ = build_in_subprocess(tmp_path, text.encode(), timeout=5)
    assert code == 1 and seconds < 5
