#!/usr/bin/env python3
"""Generate strict JSON Schemas (draft 2020-12) for the CRDs policyc emits.

Reads upstream CustomResourceDefinitions from the shared data folder (``<repo>/../shared`` by
default) and writes one schema per served version to ``schemas/crds/``, plus a README. The
schemas validate a whole object as strictly as the API server's structural-schema and strict
field validation do, except for what JSON Schema cannot express (CEL rules, list-map key
uniqueness, Kubernetes string formats); the README and each file's ``x-policyc-source`` say
how much of that there is.

    python tools/gen_crd_schemas.py [--shared DIR] [--check]

``--check`` writes nothing and exits 1 when ``schemas/crds/`` differs from what would be
generated.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "schemas" / "crds"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class Source:
    """CRD files from one upstream, described by ``crds/<folder>/README.md``.

    ``section`` names the README's ``## `<section>/` `` heading when the README describes
    several upstreams; ``files`` are globs relative to ``crds/<folder>/``; ``kinds``, when
    given, the CRDs of those files to keep (a file may hold several, one per YAML document).
    """

    folder: str
    section: str | None
    files: tuple[str, ...]
    kinds: tuple[str, ...] | None = None


SOURCES = (
    Source(
        "volcano",
        None,
        (
            "scheduling.volcano.sh_queues.yaml",
            "batch.volcano.sh_jobs.yaml",
            "scheduling.volcano.sh_podgroups.yaml",
        ),
    ),
    Source("kubeflow", "training-operator-v1", ("training-operator-v1/kubeflow.org_pytorchjobs.yaml",)),
    Source("kueue", None, ("*.yaml",)),
    Source("kai", None, ("scheduling.run.ai_queues.yaml", "kai.scheduler_schedulingshards.yaml")),
    Source("prometheus-operator", None, ("monitoring.coreos.com_prometheusrules.yaml",)),
    Source("keda", None, ("keda.sh_scaledobjects.yaml",)),
    Source("slinky", None, ("slinky.slurm.net_nodesets.yaml",)),
    Source("nfd", None, ("nfd-api-crds.yaml",), kinds=("NodeFeatureRule",)),
    Source("karpenter", None, ("karpenter.sh_nodepools.yaml",)),
)

# Kept as they are (after recursing into sub-schemas).
KEPT_KEYS = frozenset(
    {
        "type",
        "properties",
        "required",
        "items",
        "additionalProperties",
        "enum",
        "pattern",
        "minimum",
        "maximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
    }
)
# No effect on validity of a submitted object (`default` is applied by the server beforehand).
DROPPED_KEYS = frozenset({"description", "title", "example", "externalDocs", "default"})
# Handled explicitly in `_convert`; any other key makes the generator fail.
HANDLED_KEYS = frozenset(
    {
        "nullable",
        "format",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-int-or-string",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-validations",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
    }
)
INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
# Go's `$` (no multi-line flag) matches only at the very end; Python's also before a final
# newline. `(?!\n)` closes that gap and is valid ECMA-262 too.
GO_END = r"$(?!\n)"
# RE2's Perl classes are ASCII-only; Python's match any Unicode digit, space or word character.
PERL_CLASSES = {"d": "0-9", "s": "\\t\\n\\f\\r ", "w": "0-9A-Za-z_"}


class GenerationError(Exception):
    """The CRDs or READMEs contain something this generator cannot translate faithfully."""


@dataclass
class Counts:
    """What a generated schema cannot check."""

    cel_rules: int = 0
    cel_transition_rules: int = 0
    list_map_keys: int = 0


def python_pattern(pattern: str) -> str:
    """Translate a Go RE2 ``pattern`` into a Python ``re`` pattern with the same matches.

    End anchors and the Perl classes (``\\d``, ``\\s``, ``\\w``, ASCII-only in RE2) need rewriting for
    the patterns Kubernetes uses; constructs whose meaning differs between RE2 and Python
    (Unicode classes, flags, POSIX classes, ...) are rejected rather than guessed at.
    """

    def fail(why: str) -> GenerationError:
        return GenerationError(f"pattern {pattern!r}: {why}")

    out: list[str] = []
    in_class = False
    depth = 0
    closing = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            esc = pattern[i + 1 : i + 2]
            if esc == "z" and not in_class:
                out.append(GO_END)
            elif esc in PERL_CLASSES:
                out.append(PERL_CLASSES[esc] if in_class else f"[{PERL_CLASSES[esc]}]")
            elif esc.lower() in PERL_CLASSES and not in_class:
                out.append(f"[^{PERL_CLASSES[esc.lower()]}]")
            elif esc.isalnum() and esc not in "Aftnrv":
                raise fail(f"RE2 escape \\{esc} has no exact Python equivalent here")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i):
                raise fail("POSIX character classes are not supported by Python")
            in_class = c != "]"
            out.append(c)
            i += 1
            continue
        if c == "[":
            # A `]` right after `[` or `[^` is a literal.
            j = i + 1 + (pattern[i + 1 : i + 2] == "^")
            j += pattern[j : j + 1] == "]"
            out.append(pattern[i:j])
            in_class = True
            i = j
            continue
        elif c == "$":
            c = GO_END
        elif pattern.startswith("(?i)", i) and depth == 0 and not closing:
            # RE2 turns case folding on from here to the end; Python takes flags only at the start, or scoped.
            out.append("(?i:")
            closing = ")"
            i += 4
            continue
        elif pattern.startswith("(?", i) and not pattern.startswith(("(?:", "(?P<"), i):
            raise fail("RE2 flags or group syntax that Python reads differently")
        elif pattern.startswith("{,", i):
            raise fail("'{,' is a literal in RE2 but a quantifier in Python")
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        out.append(c)
        i += 1
    converted = "".join(out) + closing
    try:
        re.compile(converted)
    except re.error as e:
        raise fail(f"does not compile in Python as {converted!r}: {e}") from e
    return converted


def _require(schema: dict[str, Any], *names: str) -> None:
    required = schema.get("required", [])
    schema["required"] = [*required, *(n for n in names if n not in required)]


def _convert(node: dict[str, Any], where: str, counts: Counts, *, closed: bool) -> dict[str, Any]:
    """Translate one structural-schema node.

    ``closed`` is false inside value-validation junctors (``anyOf`` & co., which in a structural
    schema only restrict what the skeleton declares) and under the root ``metadata``: there an
    object without ``additionalProperties`` must not be closed.
    """
    unknown = node.keys() - KEPT_KEYS - DROPPED_KEYS - HANDLED_KEYS
    if unknown:
        raise GenerationError(f"{where}: unsupported schema keys {sorted(unknown)}")
    out: dict[str, Any] = {}
    for key in KEPT_KEYS & node.keys():
        value = node[key]
        if key == "properties":
            value = {k: _convert(v, f"{where}.{k}", counts, closed=closed) for k, v in value.items()}
        elif key in ("items", "not") or (key == "additionalProperties" and isinstance(value, dict)):
            value = _convert(value, f"{where}.{key}", counts, closed=closed)
        elif key in ("anyOf", "oneOf", "allOf"):
            value = [_convert(v, f"{where}.{key}[{n}]", counts, closed=False) for n, v in enumerate(value)]
        elif key == "pattern":
            value = python_pattern(value)
        out[key] = value

    # OpenAPI 3.0 exclusive bounds are booleans qualifying minimum/maximum.
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if node.get(exclusive):
            out[exclusive] = out.pop(bound)
    # Kubernetes' string formats (and the int32/int64 "formats", which it does not range-check)
    # differ from jsonschema's format checkers, so none is kept.

    rules = node.get("x-kubernetes-validations", [])
    counts.cel_rules += len(rules)
    counts.cel_transition_rules += sum(bool(re.search(r"\boldSelf\b", r["rule"])) for r in rules)

    list_type = node.get("x-kubernetes-list-type")
    if list_type == "set":
        out["uniqueItems"] = True
    elif list_type == "map":
        counts.list_map_keys += 1

    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
        if out.get("anyOf") == INT_OR_STRING:
            del out["anyOf"]

    if node.get("x-kubernetes-embedded-resource"):
        props = out.setdefault("properties", {})
        props.setdefault("apiVersion", {"type": "string", "minLength": 1})
        props.setdefault("kind", {"type": "string", "minLength": 1})
        props.setdefault("metadata", {"type": "object"})
        _require(out, "apiVersion", "kind")

    preserve = node.get("x-kubernetes-preserve-unknown-fields", False)
    if closed and out.get("type") == "object" and not preserve and "additionalProperties" not in out:
        out["additionalProperties"] = False

    # Like the API server, keep checking `enum` on null: a nullable enum must list null.
    if node.get("nullable") and "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = [*types, "null"]
    return out


def version_schema(crd: dict[str, Any], version: dict[str, Any], source: dict[str, str]) -> dict[str, Any]:
    """The JSON Schema for one served version of ``crd``, with its provenance block."""
    group, kind, name = crd["spec"]["group"], crd["spec"]["names"]["kind"], version["name"]
    root = dict(version["schema"]["openAPIV3Schema"])
    props = dict(root.get("properties", {}))
    # Metadata is validated separately against ObjectMeta; keep only what the CRD adds.
    metadata = props.pop("metadata", {"type": "object"})
    root["properties"] = props
    counts = Counts()
    schema = _convert(root, f"{kind}/{name}", counts, closed=True)
    schema["properties"].update(
        apiVersion={"const": f"{group}/{name}"},
        kind={"const": kind},
        metadata=_convert(metadata, f"{kind}/{name}.metadata", counts, closed=False),
    )
    _require(schema, "apiVersion", "kind")
    schema["$schema"] = DRAFT
    schema["x-policyc-source"] = {
        **source,
        "group": group,
        "kind": kind,
        "version": name,
        "deprecated": bool(version.get("deprecated", False)),
        "dropped_cel_rules": counts.cel_rules,
        "dropped_cel_transition_rules": counts.cel_transition_rules,
        "unchecked_list_map_keys": counts.list_map_keys,
    }
    return schema


def file_name(schema: dict[str, Any]) -> str:
    """``<group>_<kind lowercased>_<version>.json``, the name `policyc.k8s.crd_schemas` looks up."""
    src = schema["x-policyc-source"]
    return f"{src['group']}_{src['kind'].lower()}_{src['version']}.json"


def _readme_section(text: str, section: str | None) -> str | None:
    if section is None:
        return text
    match = re.search(rf"^## `{re.escape(section)}/`.*?(?=^## |\Z)", text, re.M | re.S)
    return match and match.group(0)


def provenance(readme: Path, section: str | None, crd_name: str) -> dict[str, str]:
    """Repository, ref, commit, upstream path and license of ``crd_name``, read from ``readme``."""
    whole = readme.read_text(encoding="utf-8")
    one_line = re.search(
        r"verbatim from (?P<repo>[\w.-]+/[\w.-]+) tag (?P<ref>\S+) \(commit (?P<commit>[0-9a-f]{40})\), "
        r"path (?P<path>[^\s,;]+)",
        whole,
    )
    if one_line and section is None and re.search(r"\bApache-2\.0\b", whole):  # a README of one sentence
        path = one_line["path"]
        return {
            "repository": f"https://github.com/{one_line['repo']}",
            "ref": one_line["ref"],
            "commit": one_line["commit"],
            "path": path + crd_name if path.endswith("/") else path,
            "license": "Apache-2.0",
        }
    text = _readme_section(whole, section)
    if text is None:
        raise GenerationError(f"{readme}: no section '## `{section}/`'")

    def find(what: str, *patterns: str, in_text: str = text) -> re.Match[str]:
        for p in patterns:
            if m := re.search(p, in_text, re.M):
                return m
        raise GenerationError(f"{readme}: cannot find the {what} of {crd_name}")

    ref = find(
        "tag/commit",
        r"tag `(?P<ref>[^`]+)`, commit `(?P<commit>[0-9a-f]{40})`",
        r"Branch / commit: `(?P<ref>[^`]+)` at `(?P<commit>[0-9a-f]{40})`",
    )
    name = re.escape(crd_name)
    row = find("upstream path", rf"^\| `{name}` \| `(?P<path>[^`]*/{name})` \|", r"path `(?P<dir>[^`]+/)`")
    find("Apache-2.0 license", r"^-? ?License[^:\n]*: Apache License 2\.0", in_text=whole)
    return {
        "repository": find("repository", r"^- Repository: (https://\S+)").group(1),
        "ref": ref["ref"],
        "commit": ref["commit"],
        "path": row.groupdict().get("path") or row["dir"] + crd_name,
        "license": "Apache-2.0",
    }


def _crd_files(folder: Path, globs: tuple[str, ...]) -> Iterator[Path]:
    for pattern in globs:
        matches = sorted(folder.glob(pattern))
        if not matches:
            raise GenerationError(f"no CRD matches {folder / pattern}")
        yield from matches


def generate(shared: Path) -> dict[str, str]:
    """Every output file (name -> text) generated from the CRDs under ``shared``."""
    # libyaml-backed parsing when ruamel.yaml.clib is installed (the pure-Python parser takes
    # ~2.5 s for these files); it falls back to the pure parser, which loads the same data.
    yaml = YAML(typ="safe")
    files: dict[str, str] = {}
    schemas: list[dict[str, Any]] = []
    for source in SOURCES:
        folder = shared / "crds" / source.folder
        for crd_path in _crd_files(folder, source.files):
            data = crd_path.read_bytes()
            origin = {
                **provenance(folder / "README.md", source.section, crd_path.name),
                "crd_file": crd_path.relative_to(shared).as_posix(),
                "crd_sha256": hashlib.sha256(data).hexdigest(),
            }
            crds = [c for c in yaml.load_all(data.decode("utf-8")) if c]
            kept = [c for c in crds if source.kinds is None or c["spec"]["names"]["kind"] in source.kinds]
            if source.kinds is not None and len(kept) != len(source.kinds):
                raise GenerationError(f"{crd_path}: not every kind of {source.kinds}")
            schemas.extend(_schemas(kept, origin, files))
    files["README.md"] = readme(schemas)
    return files


def _schemas(crds: list[dict[str, Any]], origin: dict[str, str], files: dict[str, str]) -> Iterator[dict[str, Any]]:
    """The schema of each served version of each of `crds`, added to `files` by name."""
    for crd in crds:
        for version in crd["spec"]["versions"]:
            if not version.get("served"):
                continue
            schema = version_schema(crd, version, origin)
            name = file_name(schema)
            if name in files:
                raise GenerationError(f"two CRDs generate {name}")
            files[name] = json.dumps(schema, indent=1, sort_keys=True) + "\n"
            yield schema


def readme(schemas: list[dict[str, Any]]) -> str:
    """``schemas/crds/README.md``: what each file is, where it comes from, what it leaves out."""
    rows = []
    totals = Counts()
    for schema in schemas:
        src = schema["x-policyc-source"]
        name = file_name(schema)
        deprecated = " (deprecated version)" if src["deprecated"] else ""
        rows.append(
            f"| `{name}` | `{src['group']}/{src['version']}` `{src['kind']}`{deprecated} "
            f"| {src['repository']} `{src['ref']}` (`{src['commit'][:12]}`), `{src['path']}` "
            f"| {src['license']} | {src['dropped_cel_rules']} ({src['dropped_cel_transition_rules']}) "
            f"| {src['unchecked_list_map_keys']} |"
        )
        totals.cel_rules += src["dropped_cel_rules"]
        totals.cel_transition_rules += src["dropped_cel_transition_rules"]
        totals.list_map_keys += src["unchecked_list_map_keys"]
    return "\n".join(
        [
            "# CRD schemas (generated: do not edit)",
            "",
            "Generated by `tools/gen_crd_schemas.py` from the upstream CustomResourceDefinitions in",
            "`../shared/crds/`. Regenerate with `python tools/gen_crd_schemas.py`;",
            "`python tools/gen_crd_schemas.py --check` (run by `tests/test_crd_schemas.py`) fails when",
            "these files are stale. policyc reads only these files at run time.",
            "",
            "Each file is a JSON Schema (draft 2020-12) for one served version of one kind. It",
            "validates a whole object as the API server's structural schema does, with strict field",
            "validation: unknown fields are rejected wherever the CRD does not preserve them.",
            "`apiVersion` and `kind` must equal the file's group/version and kind. Its",
            "`x-policyc-source` block records the upstream repository, ref, commit, path, license and",
            "the SHA-256 of the CRD file it was generated from. All sources are Apache-2.0.",
            "",
            "| File | API version, kind | Source (ref, commit, upstream path) | License "
            "| CEL rules not checked (of which transition rules) | list-map keys not checked |",
            "| --- | --- | --- | --- | --- | --- |",
            *rows,
            "",
            "## Not checked by these schemas",
            "",
            f"- CEL rules (`x-kubernetes-validations`): {totals.cel_rules} in total, counted per file",
            f"  above. {totals.cel_transition_rules} of them are transition rules (they use `oldSelf`),",
            "  which the API server evaluates only on update.",
            f"- Key uniqueness in the {totals.list_map_keys} `x-kubernetes-list-type: map` lists.",
            "  (`set` lists are checked, as `uniqueItems`.)",
            "- `format`: dropped everywhere. `int32`/`int64` are not validated by Kubernetes either;",
            "  Kubernetes string formats (`date-time`, ...) differ in detail from jsonschema's.",
            "- `metadata` beyond being an object (validate it against ObjectMeta separately).",
            "- Defaulting, and admission webhooks (Volcano, Kueue), which enforce more than the CRDs.",
            "",
            "Patterns are Go RE2 in the CRDs; the generator rewrites `$` to `$(?!\\n)`, and RE2's ASCII-only",
            "`\\d`, `\\s`, `\\w` to explicit classes, so that Python (and ECMA-262) match exactly what Go",
            "matches, and refuses patterns it cannot translate.",
            "",
        ]
    )


def check(expected: dict[str, str], out_dir: Path) -> list[str]:
    """Differences between ``out_dir`` and ``expected``, one line each."""
    actual = {p.name for p in out_dir.glob("*.json")} | {p.name for p in out_dir.glob("README.md")}
    problems = [f"missing: {n}" for n in sorted(expected.keys() - actual)]
    problems += [f"extra: {n}" for n in sorted(actual - expected.keys())]
    problems += [
        f"stale: {n}"
        for n in sorted(expected.keys() & actual)
        if (out_dir / n).read_text(encoding="utf-8") != expected[n]
    ]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="shared data folder")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if schemas/crds is stale")
    args = parser.parse_args(argv)
    try:
        expected = generate(args.shared)
    except GenerationError as e:
        print(f"gen_crd_schemas: error: {e}", file=sys.stderr)
        return 2
    if args.check:
        problems = check(expected, OUT_DIR)
        for line in problems:
            print(f"schemas/crds/{line}")
        if problems:
            print("run: python tools/gen_crd_schemas.py", file=sys.stderr)
        return 1 if problems else 0
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for old in OUT_DIR.glob("*.json"):
        if old.name not in expected:
            old.unlink()
    for name, text in expected.items():
        (OUT_DIR / name).write_text(text, encoding="utf-8", newline="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
