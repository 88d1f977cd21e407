"""The KAI Scheduler's diagnostic rules, part of the catalogue in `policyc.codes`."""

from __future__ import annotations

from policyc.codes import Rule, Severity

RULES: tuple[Rule, ...] = (
    Rule(
        "PC801",
        "resource-not-in-kai-queues",
        Severity.ERROR,
        "A queue guarantee or capability of a resource KAI queues cannot express: they know only gpu, cpu and memory.",
    ),
    Rule(
        "PC802",
        "queue-field-ignored-by-kai",
        Severity.WARNING,
        "A queue field KAI has no equivalent for (reclaimable: false, a deserved share other than the guarantee); "
        "it is not compiled.",
    ),
    Rule(
        "PC803",
        "kai-queue-name-taken",
        Severity.ERROR,
        "A tenant's queue would have the name of the policy's parent queue, or of a queue KAI's Helm chart creates "
        "(default-queue, default-parent-queue).",
    ),
    Rule(
        "PC804",
        "non-preemptible-above-quota",
        Severity.ERROR,
        "A workload KAI runs as non-preemptible (priority 100 or more) needs more than its queue's quota; KAI runs "
        "non-preemptible work only within quota.",
    ),
    Rule(
        "PC805",
        "gpu-resource-not-in-kai-queues",
        Severity.WARNING,
        "The policy's GPU resource is not nvidia.com/gpu: KAI queues count NVIDIA GPU devices only, so their gpu "
        "quota and limit do not bound it.",
    ),
)
