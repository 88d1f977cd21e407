"""What a Kubernetes minor version serves that policyc's output depends on, and the defaults that follow from it.

This is the one rule every version-dependent choice reads (the admission mode a policy does not state, the
MutatingAdmissionPolicy API that injection uses, whether DRA tiers are possible); the "Kubernetes versions"
table of docs/language.md states it, and a test holds the two to each other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, eq=False)
class Api:
    """An API policyc emits objects of, from the minor version on which it is served by default."""

    kind: str
    group_version: str
    since: int
    """The first minor version (1.<since>) that serves it without a feature gate."""
    beta: str | None = None
    """An earlier group/version a cluster can turn on, from `beta_since` (feature gate and runtime-config)."""
    beta_since: int | None = None

    @property
    def version(self) -> str:
        """Its version alone (v1), as messages name it beside the kind."""
        return self.group_version.rpartition("/")[2]

    @property
    def beta_version(self) -> str | None:
        return self.beta.rpartition("/")[2] if self.beta else None


VALIDATING_ADMISSION_POLICY = Api("ValidatingAdmissionPolicy", "admissionregistration.k8s.io/v1", 30)
"""GA in 1.30: each tenant's contract (`policyc.tenancy.policies`)."""
MUTATING_ADMISSION_POLICY = Api(
    "MutatingAdmissionPolicy",
    "admissionregistration.k8s.io/v1",
    36,
    beta="admissionregistration.k8s.io/v1beta1",
    beta_since=34,
)
"""GA and on by default in 1.36; v1beta1 from 1.34 behind the MutatingAdmissionPolicy feature gate and the
admissionregistration.k8s.io/v1beta1 API (runtime-config): injection (`policyc.tenancy.injection`)."""
DYNAMIC_RESOURCE_ALLOCATION = Api("DeviceClass", "resource.k8s.io/v1", 34)
"""GA in 1.34: DRA tiers (`policyc.gpu.dra`)."""


def minor(version: str) -> int:
    """The minor number of a version such as "1.33" (the model only admits 1.x)."""
    return int(version.split(".")[1])


def serves(version: str, api: Api) -> bool:
    """Whether Kubernetes `version` serves `api` by default."""
    return minor(version) >= api.since


def can_turn_on_beta(version: str, api: Api) -> bool:
    """Whether a cluster of `version` can serve `api`'s beta (it does only when its operator turns it on)."""
    return api.beta_since is not None and minor(version) >= api.beta_since


def default_admission_mode(version: str) -> str:
    """The admission mode of a policy or tenant that states none: warn where ValidatingAdmissionPolicy v1 is served,
    off before (a policy without `spec.admission` is valid on every version)."""
    return "warn" if serves(version, VALIDATING_ADMISSION_POLICY) else "off"


def mutating_admission_api(version: str, beta_turned_on: bool) -> str | None:
    """The MutatingAdmissionPolicy group/version injection uses on `version` (`beta_turned_on`: the policy says the
    cluster turned v1beta1 on), or None: no injection."""
    api = MUTATING_ADMISSION_POLICY
    if serves(version, api):
        return api.group_version
    if beta_turned_on and can_turn_on_beta(version, api):
        return api.beta
    return None
