"""The AKS provisioner's rules on a policy: none of its own (the shared checks apply)."""

from __future__ import annotations

from policyc.backends.interface import Check

CHECKS: tuple[Check, ...] = ()
