"""What backends produce: output files holding Kubernetes objects or text."""

from __future__ import annotations

from dataclasses import dataclass

from policyc.diagnostics import Path


@dataclass(frozen=True, slots=True, eq=False)
class Manifest:
    """One Kubernetes object and the policy paths it was built from (for `explain` and diagnostics)."""

    obj: dict
    sources: tuple[Path, ...] = ()


@dataclass(frozen=True, eq=False)
class Artifact:
    """One output file: Kubernetes objects (a multi-document YAML file) or text (scripts, data)."""

    path: str
    manifests: tuple[Manifest, ...] = ()
    text: str | None = None
    synced: bool = False
    """Part of what Argo CD applies: listed in kustomization.yaml and given a sync wave."""
    template: bool = False
    """A workload template for teams to copy; kept out of what Argo CD applies."""
    executable: bool = False
    sources: tuple[Path, ...] = ()
    """For a text file: the parts of the policy it is written from (an object's are on its `Manifest`)."""
