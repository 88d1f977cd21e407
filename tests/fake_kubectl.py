"""A stand-in for kubectl in node-script tests: keeps nodes in a JSON file and records every call.

Supports exactly what nodes/apply.sh uses: ``get nodes -o go-template=...`` (answered in the
N/L/T line format that template prints), ``label node NAME --overwrite ARGS`` and
``taint node NAME --overwrite ARGS``. Taint removal of a taint the node does not have fails, as with
kubectl, so a script that removes blindly is caught.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    state_file, log_file = os.environ["FAKE_KUBECTL_STATE"], os.environ["FAKE_KUBECTL_LOG"]
    with open(log_file, "a") as log:
        log.write(json.dumps(argv) + "\n")
    with open(state_file) as f:
        nodes = json.load(f)
    if argv[:2] == ["get", "nodes"] and argv[2] == "-o" and argv[3].startswith("go-template="):
        for name, node in nodes.items():
            sys.stdout.write(f"N\t{name}\n")
            for key, value in node["labels"].items():
                sys.stdout.write(f"L\t{name}\t{key}\t{value}\n")
            for taint in node["taints"]:
                sys.stdout.write(f"T\t{name}\t{taint['key']}\t{taint['effect']}\n")
        return 0
    if len(argv) >= 4 and argv[0] in ("label", "taint") and argv[1] == "node" and argv[3] == "--overwrite":
        name = argv[2]
        if name not in nodes:
            print(f'Error from server (NotFound): nodes "{name}" not found', file=sys.stderr)
            return 1
        node = nodes[name]
        for arg in argv[4:]:
            if argv[0] == "label":
                if arg.endswith("-"):
                    node["labels"].pop(arg[:-1], None)
                else:
                    key, value = arg.split("=", 1)
                    node["labels"][key] = value
            elif arg.endswith("-"):
                key, _, effect = arg[:-1].partition(":")
                kept = [t for t in node["taints"] if not (t["key"] == key and (not effect or t["effect"] == effect))]
                if len(kept) == len(node["taints"]):
                    print(f"error: taint {arg[:-1]!r} not found", file=sys.stderr)
                    return 1
                node["taints"] = kept
            else:
                spec, effect = arg.rsplit(":", 1)
                key, _, value = spec.partition("=")
                node["taints"] = [t for t in node["taints"] if not (t["key"] == key and t["effect"] == effect)]
                node["taints"].append({"key": key, "value": value, "effect": effect})
        with open(state_file, "w") as f:
            json.dump(nodes, f, indent=1, sort_keys=True)
        return 0
    print(f"fake kubectl: unsupported call {argv}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
