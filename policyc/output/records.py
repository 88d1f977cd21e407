"""Build records: a cluster's previous output reused, without compiling it, when nothing its compilation reads has
changed since the build that wrote it (docs/teams.md, "What a rebuild reuses").

A record per cluster output directory (`OUT`, or a fleet's `OUT/<cluster>`) lives in the cache directory, outside the
output: `$POLICYC_CACHE_DIR`, else `$XDG_CACHE_HOME/policyc`, else `~/.cache/policyc`. It holds the key of the
compilation that wrote it, each output file's path, size, sha256 and executable bit, and the compilation's diagnostics
(warnings and notes are shown again as the compile showed them). The key covers everything a cluster's compilation
depends on: policyc's identity (its version, a digest of its own files, the Python version and the distributions
installed), the
cluster's name, how the policy is named in diagnostics and headers, and the relative path and bytes of every file its
policy takes in (`policyc.language.teams.compiled_from`; a policy file: that file).

A record is used only when its key is the build's and the output directory still holds exactly the recorded files
with their digests; their bytes are read from there, so the writer links them as unchanged. A record that cannot be
read or parsed is a miss; one that cannot be written (a read-only home, a full disk) is not kept, and the build goes
on. Records are written whole (a temporary file renamed over the old one).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import stat
import sys
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from policyc import __version__
from policyc.codes import Severity
from policyc.diagnostics import Diagnostic, ObjectRef
from policyc.output.write import OutputFile


def installed() -> list[str]:
    """Every distribution installed where this Python imports from, by its metadata directory's name (name and
    version, e.g. pydantic-2.9.2.dist-info): a build's dependencies and theirs among them, read in a fraction of a
    millisecond (importlib.metadata takes some for each). More than a build needs: an unrelated install is a miss."""
    names = []
    for entry in sys.path:
        with contextlib.suppress(OSError):
            names += sorted(n for n in os.listdir(entry or ".") if n.endswith((".dist-info", ".egg-info")))
    return names


def cache_directory() -> Path:
    """Where build records live: `$POLICYC_CACHE_DIR`, else `$XDG_CACHE_HOME/policyc`, else `~/.cache/policyc`."""
    if os.environ.get("POLICYC_CACHE_DIR"):
        return Path(os.environ["POLICYC_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "policyc"
    return Path.home() / ".cache" / "policyc"


@functools.cache
def identity() -> str:
    """policyc's identity, once per process: its version, the Python version, the distributions installed
    (`installed`), and a digest of every file of the package and of its schemas (about 240 files: a few
    milliseconds)."""
    from policyc.resources import schemas_dir

    digest = hashlib.sha256()
    digest.update(json.dumps([__version__, sys.version, sys.implementation.cache_tag, installed()]).encode())
    package = Path(__file__).resolve().parents[1]
    for root in dict.fromkeys([package, schemas_dir().resolve()]):  # the schemas are in the package when installed
        for directory, subdirectories, files in os.walk(root):
            subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(directory, name)
                digest.update(f"{os.path.relpath(path, root.parent)}\0".encode())
                with open(path, "rb") as f:
                    digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()


@dataclass(frozen=True)
class Reused:
    """What a record gives back: the output files, read from disk, and the diagnostics of the compilation."""

    files: dict[str, OutputFile]
    diagnostics: list[Diagnostic]


class Records:
    """The build records of one build of `policy` (named `name`): the key of each cluster that may be reused."""

    def __init__(self, policy: str | os.PathLike[str], name: str, directory: Path | None = None):
        self.name, self.keys = name, {}
        self.directory = Path(os.devnull)
        try:
            self.directory = (directory or cache_directory()) / "builds"
            self.keys = _keys(policy, name)
        except (OSError, RuntimeError):  # no home, or policyc's own files unreadable: nothing reused nor recorded
            pass

    def reused(self, cluster: str | None, output: str | os.PathLike[str]) -> Reused | None:
        """The previous output of `cluster` in `output` (its own directory), if its record holds and the directory
        holds exactly the recorded files; else None (compile it)."""
        key = self.keys.get(cluster)
        if key is None:
            return None
        try:
            with open(self._record(output), "rb") as f:
                record = json.loads(f.read())
            if record["key"] != key:
                return None
            recorded = {path: (size, digest, executable) for path, size, digest, executable in record["files"]}
            diagnostics = [_decoded(d) for d in record["diagnostics"]]
        except (OSError, ValueError, KeyError, TypeError):  # none, unreadable or corrupt: a miss
            return None
        files = _on_disk(Path(output), recorded)
        return None if files is None else Reused(files, diagnostics)

    def keep(
        self,
        cluster: str | None,
        output: str | os.PathLike[str],
        files: dict[str, OutputFile],
        diagnostics: list[Diagnostic],
    ) -> None:
        """Record that `cluster` compiles to `files` with `diagnostics`; nothing if it cannot (the build goes on)."""
        key = self.keys.get(cluster)
        if key is None:
            return
        record = {
            "key": key,
            "files": [
                [path, len(f.data), hashlib.sha256(f.data).hexdigest(), f.executable]
                for path, f in sorted(files.items())
            ],
            "diagnostics": [_encoded(d) for d in diagnostics],
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".record-", dir=self.directory)
        except OSError:
            return
        try:
            with open(handle, "wb") as f:
                f.write(json.dumps(record, separators=(",", ":")).encode())
            os.replace(temporary, self._record(output))
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)

    def _record(self, output: str | os.PathLike[str]) -> Path:
        """The record of the output directory `output`: one per directory, replaced by each build of it."""
        return self.directory / f"{hashlib.sha256(os.fsencode(os.path.abspath(output))).hexdigest()}.json"


def _keys(policy: str | os.PathLike[str], name: str) -> dict[str | None, str]:
    """The key of each cluster of `policy` that may be reused (`compiled_from`); a cluster whose files cannot be
    read has none."""
    if os.path.isdir(policy):
        from policyc.language.teams import compiled_from

        inputs = {c: [(f, os.path.join(policy, f)) for f in files] for c, files in compiled_from(policy).items()}
    else:
        inputs = {None: [(os.path.basename(policy), os.fspath(policy))]}
    digests: dict[str, str | None] = {}
    keys = {}
    for cluster, files in inputs.items():
        for _, path in files:
            if path not in digests:
                digests[path] = _digest(path)
        if any(digests[path] is None for _, path in files):
            continue
        read = [[relative, digests[path]] for relative, path in files]
        key = json.dumps([identity(), cluster, name, read])
        keys[cluster] = hashlib.sha256(key.encode()).hexdigest()
    return keys


def _digest(path: str) -> str | None:
    """The sha256 of the regular file `path` of at most `MAX_FILE_BYTES`, or None (a device, a FIFO, a file too large
    or unreadable: its compilation says what is wrong, and nothing is reused)."""
    from policyc.language.load import MAX_FILE_BYTES

    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
                return None
            return hashlib.sha256(f.read(MAX_FILE_BYTES + 1)).hexdigest()
    except OSError:
        return None


def _on_disk(directory: Path, recorded: dict[str, tuple[int, str, bool]]) -> dict[str, OutputFile] | None:
    """The files of `directory`, if they are exactly `recorded` (path -> size, sha256, executable bit): regular files,
    no other file, no symbolic link; else None."""
    found: dict[str, OutputFile] = {}
    pending = [""]
    try:
        while pending:
            relative = pending.pop()
            with os.scandir(directory / relative) as entries:
                for entry in entries:
                    path = f"{relative}/{entry.name}" if relative else entry.name
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(path)
                        continue
                    wanted = recorded.get(path)
                    if wanted is None or not entry.is_file(follow_symlinks=False):
                        return None
                    size, digest, executable = wanted
                    with open(os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as f:
                        st = os.fstat(f.fileno())
                        if st.st_size != size or bool(st.st_mode & stat.S_IXUSR) != executable:
                            return None
                        data = f.read(size + 1)
                    if hashlib.sha256(data).hexdigest() != digest:
                        return None
                    found[path] = OutputFile(data, executable)
    except OSError:
        return None
    return dict(sorted(found.items())) if len(found) == len(recorded) else None


def _encoded(d: Diagnostic) -> dict:
    out = {f.name: getattr(d, f.name) for f in fields(Diagnostic)}
    out.update(severity=d.severity.value, path=list(d.path), related=None if d.related is None else list(d.related))
    out["subject"] = None if d.subject is None else asdict(d.subject)
    return out


_TYPES = {
    "code": str, "message": str, "hint": (str, type(None)), "at_key": bool, "line": (int, type(None)),
    "column": (int, type(None)), "file": (str, type(None)),
}  # fmt: skip
"""The type of each plain field of a recorded diagnostic; the others are converted (`_decoded`)."""


def _decoded(data: dict) -> Diagnostic:
    """The diagnostic `_encoded` wrote; ValueError, KeyError or TypeError for anything else."""
    from policyc.codes import RULES

    if set(data) != {f.name for f in fields(Diagnostic)} or data["code"] not in RULES:
        raise ValueError("not a recorded diagnostic")
    for name, kind in _TYPES.items():
        if not isinstance(data[name], kind):
            raise TypeError(name)
    subject = data["subject"]
    if subject is not None and not all(isinstance(v, str | None) for v in subject.values()):
        raise TypeError("subject")
    return Diagnostic(
        **{name: data[name] for name in _TYPES},
        severity=Severity(data["severity"]),
        path=_path(data["path"]),
        related=None if data["related"] is None else _path(data["related"]),
        subject=None if subject is None else ObjectRef(**subject),
    )


def _path(items: list) -> tuple[str | int, ...]:
    if not all(isinstance(p, str | int) and not isinstance(p, bool) for p in items):
        raise TypeError("path")
    return tuple(items)
