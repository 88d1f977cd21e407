"""Node provisioners of the tests, and `registered`, which adds one to the registry in-process (and takes it away)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from policyc import codes, registry
from policyc.language.model import policy


def _forget() -> None:
    """Drop what was built from the registry: the faces imported, the catalogue, the language's models."""
    registry.face.cache_clear()
    codes._catalogue.cache_clear()
    policy.policy_model.cache_clear()


@contextmanager
def registered(name: str = "sized", package: str = "tests.provisioners.sized") -> Iterator[None]:
    """The registry with provisioner `name` (its package `package`) added, for the block's duration."""
    registry.PROVISIONERS[name] = package
    _forget()
    try:
        yield
    finally:
        del registry.PROVISIONERS[name]
        _forget()
