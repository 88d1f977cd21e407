"""The sized provisioner's rules."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES = (Rule(None, "sized-without-instance-type", Severity.WARNING, "A sized pool that names no instance type."),)
