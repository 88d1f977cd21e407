"""Shell safety: nothing from a policy can break out of the generated nodes/apply.sh.

Values that try to (command substitution, quotes, newlines, command separators, an option-like leading '-',
globs, backslashes) are refused by Kubernetes' name and label syntax checks with a located diagnostic, before
any file is written; and `policyc.backends.nodes.shell_quote`, which writes every value into the script, refuses
anything outside its safe alphabet on its own (defence in depth).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policyc.backends.nodes import UnsafeShellValue, shell_quote, shell_words
from policyc.commands.cli import main
from tests.conftest import REPO

MINIMAL = (REPO / "policies" / "minimal.yaml").read_text()
PRODUCT = "NVIDIA-A100-SXM4-40GB"
POOL_GPU = f"      gpu: {{product: {PRODUCT}, count: 8}}\n"

HOSTILE = {
    "command-substitution": "$(rm -rf /)",
    "backticks": "`reboot`",
    "single-quote": "a'b",
    "double-quote": 'a"b',
    "newline": "a\nb",
    "trailing-newline": "node\n",
    "semicolon": "a;reboot",
    "and-and": "a&&reboot",
    "pipe": "a|sh",
    "leading-dash": "-rf",
    "space": "a b",
    "glob": "*",
    "backslash": "a\\b",
    "variable": "${IFS}",
    "redirect": "a>b",
}


def embed(value: str) -> str:
    """`value` as a YAML double-quoted scalar (JSON strings are YAML)."""
    return json.dumps(value)


def policy_with(field: str, value: str) -> str:
    quoted = embed(value)
    if field == "node name":
        return MINIMAL.replace('nodes: ["gpu-[1-4]"]', f"nodes: [{quoted}]")
    if field == "pool label value":
        return MINIMAL.replace(POOL_GPU, POOL_GPU + f"      labels: {{example.com/zone: {quoted}}}\n")
    if field == "taint value":
        taint = f"{{key: example.com/dedicated, value: {quoted}, effect: NoSchedule}}"
        return MINIMAL.replace(POOL_GPU, POOL_GPU + f"      taints: [{taint}]\n")
    if field == "taint key":
        return MINIMAL.replace(POOL_GPU, POOL_GPU + f"      taints: [{{key: {quoted}, effect: NoSchedule}}]\n")
    if field == "gpu product":  # in the tier too, so that only its syntax is wrong
        return MINIMAL.replace(PRODUCT, quoted)
    if field == "control-plane node":
        return MINIMAL.replace("spec:\n", f"spec:\n  controlPlane: {{nodes: [{quoted}]}}\n")
    raise AssertionError(field)


FIELDS = {
    "node name": "PC205",
    "control-plane node": "PC205",
    "pool label value": "PC203",
    "taint value": "PC203",
    "taint key": "PC202",
    "gpu product": "PC203",
}


def positions(text: str, needle: str) -> list[tuple[int, int]]:
    """1-based line and column of every occurrence of `needle` in `text`."""
    out, start = [], text.find(needle)
    while start >= 0:
        out.append((text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)))
        start = text.find(needle, start + 1)
    return out


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_value_is_refused_with_a_located_error_before_writing(tmp_path, monkeypatch, field, value) -> None:
    text = policy_with(field, value)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text(text)
    result = CliRunner().invoke(main, ["build", "policy.yaml", "-o", "out"])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    located = {f"policy.yaml:{line}:{column}: error {FIELDS[field]}:" for line, column in positions(text, embed(value))}
    assert any(line.startswith(tuple(located)) for line in result.stderr.splitlines()), result.stderr
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "policy.yaml"]


OUTSIDE_THE_ALPHABET = {k: v for k, v in HOSTILE.items() if k not in ("trailing-newline", "leading-dash")}


@pytest.mark.parametrize("value", OUTSIDE_THE_ALPHABET.values(), ids=OUTSIDE_THE_ALPHABET.keys())
def test_quote_refuses_what_is_outside_its_alphabet(value) -> None:
    with pytest.raises(UnsafeShellValue):
        shell_quote(value)
    with pytest.raises(UnsafeShellValue):
        shell_words(["safe", value])


@pytest.mark.parametrize("value", ["node\n", "example.com/zone=a\n"])
def test_quote_refuses_a_trailing_newline(value) -> None:
    with pytest.raises(UnsafeShellValue):
        shell_quote(value)


@pytest.mark.parametrize("char", sorted(set(map(chr, range(128))) - set("@._/=:-")))
def test_quote_alphabet_is_letters_digits_and_a_few_punctuation_marks(char) -> None:
    if char.isascii() and char.isalnum():
        assert shell_quote(f"a{char}b") == f"'a{char}b'"
    else:
        with pytest.raises(UnsafeShellValue):
            shell_quote(f"a{char}b")


def test_quote_accepts_what_kubernetes_accepts() -> None:
    for value in ("gpu-node-01", "nvidia.com/gpu.product=NVIDIA-H100-80GB", "ai.example.com/node.usage:NoSchedule"):
        assert shell_quote(value) == f"'{value}'"


@pytest.mark.parametrize("value", ["-n", "--overwrite", "-x=y"])
def test_quote_refuses_a_leading_dash(value) -> None:
    # kubectl would read it as an option (defence in depth: name syntax checks reject it first)
    with pytest.raises(UnsafeShellValue):
        shell_quote(value)
