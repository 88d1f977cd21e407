"""Same policy, same bytes: whatever the hash seed, the order of keys or of named items in the file."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

from policyc.compiler import compile_file
from tests.conftest import REPO

AI_PROD = REPO / "policies" / "ai-prod.yaml"
NAMED_LISTS = ("gpuTiers", "nodePools", "priorityClasses", "tenants", "workloads")

DIGEST = """
import hashlib, sys
from policyc.compiler import compile_file
result = compile_file(sys.argv[1], "ai-prod.yaml")
print(hashlib.sha256(repr(sorted((k, v.data) for k, v in result.files.items())).encode()).hexdigest())
"""


def digest(files) -> str:
    return hashlib.sha256(repr(sorted((k, v.data) for k, v in files.items())).encode()).hexdigest()


def shuffled(value, rng: random.Random):
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: shuffled(v, rng) if k not in ("actions",) else v for k, v in items}
    if isinstance(value, list):
        return [shuffled(v, rng) for v in value]
    return value


def test_hash_seed_does_not_change_the_output() -> None:
    digests = {
        subprocess.run(
            [sys.executable, "-c", DIGEST, str(AI_PROD)],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(digests) == 1


def test_key_and_item_order_do_not_change_the_output(tmp_path) -> None:
    reference = compile_file(AI_PROD, "ai-prod.yaml")
    assert reference.ok
    data = YAML(typ="safe", pure=True).load(AI_PROD.read_text())
    for seed in range(3):
        rng = random.Random(seed)
        mixed = shuffled(data, rng)
        for name in NAMED_LISTS:
            rng.shuffle(mixed["spec"][name])
        path = tmp_path / "ai-prod.yaml"
        path.write_text(json.dumps(mixed))  # JSON is YAML; key order as shuffled
        result = compile_file(path, "ai-prod.yaml")
        assert result.ok
        assert digest(result.files) == digest(reference.files), f"seed {seed}"


def test_current_directory_and_path_form_do_not_change_the_output(tmp_path, monkeypatch) -> None:
    from click.testing import CliRunner

    from policyc.commands.cli import main

    elsewhere = tmp_path / "elsewhere" / "deeper"
    elsewhere.mkdir(parents=True)
    invocations = [  # (current directory, policy path as written, output directory as written)
        (REPO, "policies/ai-prod.yaml", str(tmp_path / "from-repo")),
        (AI_PROD.parent, "./ai-prod.yaml", str(tmp_path / "from-policies")),
        (elsewhere, str(AI_PROD), "../out-absolute"),
        (elsewhere, os.path.relpath(AI_PROD, elsewhere), "out-relative"),
        (tmp_path, f"{AI_PROD.parent}/../policies//ai-prod.yaml", "out-dotted"),
    ]
    trees = []
    for cwd, policy, out in invocations:
        monkeypatch.chdir(cwd)
        result = CliRunner().invoke(main, ["build", policy, "-o", out])
        assert result.exit_code == 0, (cwd, policy, result.output)
        root = Path(cwd, out)
        trees.append({p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()})
    assert trees[0] and all(tree == trees[0] for tree in trees), "the output depends on the current directory"
    assert not any(str(tmp_path).encode() in data or str(REPO).encode() in data for data in trees[0].values())
