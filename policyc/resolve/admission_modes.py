"""`spec.admission` and each tenant's `admission`: the mode of the admission policies, defaulted by Kubernetes
version (`policyc.k8s.versions`), and whether the cluster turns MutatingAdmissionPolicy's beta on."""

from __future__ import annotations

from policyc.diagnostics import Path, diag
from policyc.k8s import versions
from policyc.language.model import policy as m
from policyc.resolve.context import Context


def default_mode(ctx: Context) -> str:
    """The mode of tenants that state none: `spec.admission.mode`, else the version's default."""
    stated = mode(ctx, ctx.spec.admission, ("spec", "admission", "mode"))
    return stated or versions.default_admission_mode(ctx.spec.kubernetes_version)


def mode(ctx: Context, stated: m.Admission | m.TenantAdmission | None, path: Path) -> str | None:
    """The mode stated at `path` (None when nothing is stated there); off, with an error, where the API server has no
    ValidatingAdmissionPolicy v1."""
    if stated is None or stated.mode is None:
        return None
    version, api = ctx.spec.kubernetes_version, versions.VALIDATING_ADMISSION_POLICY
    if stated.mode != "off" and not versions.serves(version, api):
        ctx.report(
            diag(
                "admission-needs-newer-kubernetes",
                f"admission mode {stated.mode} needs {api.kind} {api.version}, which Kubernetes {version} does not "
                f"serve (1.{api.since} and later do)",
                path,
                hint=f"set mode: off, or raise kubernetesVersion to 1.{api.since} or later",
            )
        )
        return "off"
    return stated.mode


def mutating_beta(ctx: Context) -> bool:
    """`spec.admission.mutatingAdmissionPolicyBeta`; an error where the version has no such beta to turn on."""
    stated = ctx.spec.admission is not None and ctx.spec.admission.mutating_admission_policy_beta
    version, api = ctx.spec.kubernetes_version, versions.MUTATING_ADMISSION_POLICY
    if stated and not versions.can_turn_on_beta(version, api):
        ctx.report(
            diag(
                "mutating-admission-needs-newer-kubernetes",
                f"Kubernetes {version} has no {api.kind} {api.beta_version} (1.{api.beta_since} and later have it, "
                "behind a feature gate)",
                ("spec", "admission", "mutatingAdmissionPolicyBeta"),
                hint=f"remove mutatingAdmissionPolicyBeta, or raise kubernetesVersion to 1.{api.beta_since} or later",
            )
        )
    return stated
