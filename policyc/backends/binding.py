"""How a scheduler backend binds a workload to its queue: the one thing workload templates need from it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Binding:
    scheduler_name: str | None
    """`schedulerName` of the pods (None: the default scheduler)."""
    queue: str
    """Queue the workload is submitted to."""
    object_labels: dict[str, str] = field(default_factory=dict)
    """Labels on the workload object itself."""
    object_annotations: dict[str, str] = field(default_factory=dict)
    """Annotations on the workload object itself."""
    pod_annotations: dict[str, str] = field(default_factory=dict)
    """Annotations on the pods."""
    suspend: bool = False
    """Create the workload suspended (an admission controller resumes it)."""
    spec_queue: bool = False
    """The scheduler reads the queue from the object's own queue field (`workloads.Kind.queue_path`), so a workload
    must name it there (elsewhere the field only has to name the right queue where it is set)."""
