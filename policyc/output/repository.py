"""Where an output directory lies in its git repository: the path a fleet's ApplicationSet names for it.

Asked of git itself (`git rev-parse`, `git config`), read-only; without git, or outside a work tree, nothing is known.
The repository's remote is only a suggestion for the user: it differs between clones (a developer's SSH URL, CI's
HTTPS one), and what is built must not.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Location:
    url: str | None
    """The URL of this clone's remote `origin`, None without one."""
    path: str
    """The directory's path from the top of the work tree, with '/' between parts ('' for the top itself)."""


def locate(directory: str | os.PathLike[str]) -> Location | None:
    """Where `directory` (which need not exist yet) lies in the git work tree holding it; None outside one, or where
    git cannot be run."""
    target = Path(os.path.abspath(directory))
    existing = next(p for p in (target, *target.parents) if p.is_dir())
    top = _git(existing, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    # git prints the top with symbolic links resolved; so is the directory before it is made relative to it
    relative = (existing.resolve() / target.relative_to(existing)).relative_to(Path(top).resolve())
    path = "" if relative == Path() else relative.as_posix()
    return Location(_git(existing, "config", "--get", "remote.origin.url"), path)


def _git(cwd: Path, *args: str) -> str | None:
    """What git prints for `args` in `cwd`, stripped; None if it fails or cannot be run."""
    try:
        done = subprocess.run(
            ["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None
