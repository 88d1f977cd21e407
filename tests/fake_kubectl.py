"""A stand-in for kubectl in node-script tests: keeps nodes in a JSON file and records every call.

A node in the file is ``{"labels": {...}, "taints": [{"key", "value", "effect"}], "annotations": {...}}``
(annotations optional). Supports exactly what nodes/apply.sh uses:

- ``get nodes -o go-template=...``, answered in the line format that template prints: N node / L node key
  value / T node key effect, and R node labels|taints value for each record annotation the template names
  with ``{{with index . "NAME"}}R...`` whose value is not empty (``with`` skips ""); or, for nodes/release.sh's
  template: N node / P node value of the label it names with ``{{if eq $k "KEY"}}P`` / V node key[=value]:effect;
- ``taint node NAME --overwrite ARGS``; removing a taint the node does not have fails, as with kubectl, so a
  script that removes blindly is caught;
- ``patch node NAME --type merge -p JSON``: a JSON merge patch (RFC 7386: null deletes a key, an object is
  merged, anything else replaces) of the node as ``{"metadata": {labels, annotations}, "spec": {taints}}``.
  As the API server does, it refuses labels or annotations that are not strings.

tests/test_node_script.py checks the template answer and the merge patch against the real kubectl.
"""

from __future__ import annotations

import json
import os
import re
import sys

RECORD = re.compile(r'\{\{with index \. "([^"]+)"\}\}R\{\{"\\t"\}\}\{\{\$n\}\}\{\{"\\t"\}\}(\w+)')
"""A record annotation in the script's go-template, and the word that names it on its R lines."""


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


POOL_LABEL = re.compile(r'\{\{if eq \$k "([^"]+)"\}\}P')
"""The label nodes/release.sh's go-template prints on its P lines."""


def get_release(nodes: dict, template: str) -> None:
    [label] = POOL_LABEL.findall(template)
    for name, node in nodes.items():
        sys.stdout.write(f"N\t{name}\n")
        if label in node["labels"]:
            sys.stdout.write(f"P\t{name}\t{node['labels'][label]}\n")
        for t in node["taints"]:
            value = f"={t['value']}" if t.get("value") else ""
            sys.stdout.write(f"V\t{name}\t{t['key']}{value}:{t['effect']}\n")


def get(nodes: dict, template: str) -> None:
    if POOL_LABEL.search(template):
        get_release(nodes, template)
        return
    records = RECORD.findall(template)
    for name, node in nodes.items():
        sys.stdout.write(f"N\t{name}\n")
        for key, value in sorted(node["labels"].items()):  # as go templates range over a map
            sys.stdout.write(f"L\t{name}\t{key}\t{value}\n")
        for taint in node["taints"]:
            sys.stdout.write(f"T\t{name}\t{taint['key']}\t{taint['effect']}\n")
        for annotation, kind in records:
            if node.get("annotations", {}).get(annotation):
                sys.stdout.write(f"R\t{name}\t{kind}\t{node['annotations'][annotation]}\n")


def taint(node: dict, args: list[str]) -> str | None:
    """Apply `args` to `node`; an error message if kubectl would refuse them."""
    for arg in args:
        if arg.endswith("-"):
            key, _, effect = arg[:-1].partition(":")
            kept = [t for t in node["taints"] if not (t["key"] == key and (not effect or t["effect"] == effect))]
            if len(kept) == len(node["taints"]):
                return f"error: taint {arg[:-1]!r} not found"
            node["taints"] = kept
        else:
            spec, effect = arg.rsplit(":", 1)
            key, _, value = spec.partition("=")
            node["taints"] = [t for t in node["taints"] if not (t["key"] == key and t["effect"] == effect)]
            node["taints"].append({"key": key, "value": value, "effect": effect})
    return None


def patch(node: dict, text: str) -> str | None:
    """Merge-patch `node` with `text`; an error message if the API server would refuse it."""
    obj = {
        "metadata": {"labels": node["labels"], "annotations": node.get("annotations", {})},
        "spec": {"taints": node["taints"]},
    }
    obj = merge_patch(obj, json.loads(text))
    metadata, spec = obj.get("metadata", {}), obj.get("spec", {})
    for field in ("labels", "annotations"):
        values = metadata.get(field, {})
        if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
            return f"Error from server (BadRequest): metadata.{field} must map strings to strings"
    node["labels"] = metadata.get("labels", {})
    node["taints"] = spec.get("taints", [])
    if metadata.get("annotations"):
        node["annotations"] = metadata["annotations"]
    else:
        node.pop("annotations", None)
    return None


def main(argv: list[str]) -> int:
    state_file, log_file = os.environ["FAKE_KUBECTL_STATE"], os.environ["FAKE_KUBECTL_LOG"]
    with open(log_file, "a") as log:
        log.write(json.dumps(argv) + "\n")
    with open(state_file) as f:
        nodes = json.load(f)
    if argv[:3] == ["get", "nodes", "-o"] and len(argv) == 4 and argv[3].startswith("go-template="):
        get(nodes, argv[3].removeprefix("go-template="))
        return 0
    if len(argv) >= 4 and argv[:2] == ["taint", "node"] and argv[3] == "--overwrite":
        change, arg = taint, argv[4:]
    elif len(argv) == 7 and argv[:2] == ["patch", "node"] and argv[3:6] == ["--type", "merge", "-p"]:
        change, arg = patch, argv[6]
    else:
        print(f"fake kubectl: unsupported call {argv}", file=sys.stderr)
        return 1
    name = argv[2]
    if name not in nodes:
        print(f'Error from server (NotFound): nodes "{name}" not found', file=sys.stderr)
        return 1
    error = change(nodes[name], arg)
    if error:
        print(error, file=sys.stderr)
        return 1
    with open(state_file, "w") as f:
        json.dump(nodes, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
