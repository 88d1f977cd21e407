"""policyc: a policy-as-code compiler for shared GPU Kubernetes clusters.

The library API is one function, `compile`; the command line (`policyc.commands.cli`) is a thin layer over it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policyc.compiler import Compilation, StageHook

__version__ = "0.1.0"
__all__ = ["__version__", "compile"]


def compile(
    source: str | os.PathLike[str],
    *,
    name: str | None = None,
    on_stage: StageHook | None = None,
    prove_apart: bool = False,
    cluster: str | None = None,
) -> Compilation:
    """Compile a policy: `source` is its text (a str) or the path of its file (a `pathlib.Path` or other
    path-like). `name` is how diagnostics and generated file headers name it (default: the path, or '<policy>').

    Returns the `Compilation`: `.ok`, `.report.diagnostics`, `.artifacts` (the objects, with the policy lines they
    come from) and `.files` (path -> bytes, as `policyc build` writes them). Nothing is written, and the host's
    garbage-collector settings are as they were once it returns. `on_stage`, if given, is called as each stage ends
    (`policyc.compiler.STAGES`) with its name and the compilation so far, for a progress display. `prove_apart`: the
    proofs may run in a child process (`os.fork`) while this one verifies and renders, for a process that is the
    caller's own (the command line's): stages then end in the order verify, render, prove; so may the load of a
    large policy file, while this one imports the pipeline, and the checks of a large policy, while this one emits
    (emit then ends before check). `cluster` names a
    cluster document of a policy directory (a fleet, docs/teams.md) whose overrides apply.
    """
    from policyc.compiler import TEXT_NAME, compile_file, compile_text

    if isinstance(source, str):
        return compile_text(source, name or TEXT_NAME, on_stage, prove_apart=prove_apart)
    return compile_file(source, name, on_stage, cluster, prove_apart=prove_apart)
