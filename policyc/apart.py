"""Work in a forked child process while this one goes on: a build as a process of its own loads its policy while it
imports the pipeline, and proves the emitted objects while it verifies and renders them (`policyc.compiler`), so
that it takes about the time of the longer path on two cores, not of both."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Apart(Generic[T]):
    """Work run in a child process (`os.fork`). Only a process that is policyc's own asks for it (the command line's
    entry point): a fork copies whatever a host process holds. It is not taken where a process cannot fork, or runs
    other threads (a progress display), which a fork would leave behind half-way: the caller then does the work
    itself, in order.

    The child sends back what the work returns, or the exception it raised, pickled through a pipe, and ends without
    the interpreter's shutdown; its memory is this process's, shared until either writes to it."""

    def __init__(self, pid: int, reader: int, process: str):
        self.pid, self.reader, self.process = pid, reader, process

    @classmethod
    def start(cls, work: Callable[[], T], process: str) -> Apart[T] | None:
        """`work` started in a child process (`process` says which, in errors: "the proofs' process"), or None where
        it cannot be (it is then for the caller to run)."""
        import threading

        if not hasattr(os, "fork") or threading.active_count() > 1:
            return None
        reader, writer = os.pipe()
        pid = os.fork()
        if pid:
            os.close(writer)
            return cls(pid, reader, process)
        code = 1
        try:
            os.close(reader)
            payload = _outcome(work, process)
            with open(writer, "wb") as out:
                out.write(payload)
            code = 0
        finally:
            os._exit(code)

    def result(self) -> T:
        """What the work returned, once the child has ended; the exception it raised is raised here."""
        import pickle

        try:
            with open(self.reader, "rb") as child:
                payload = child.read()
        finally:
            _, status = os.waitpid(self.pid, 0)
        if not payload:
            code = os.waitstatus_to_exitcode(status)
            ended = f"signal {-code}" if code < 0 else f"exit code {code}"
            raise RuntimeError(f"{self.process} ended without a result ({ended})")
        done, value = pickle.loads(payload)
        if done:
            return value
        raise value

    def cancel(self) -> None:
        """Stop the child (this process failed before it needed the result)."""
        import signal

        os.close(self.reader)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def _outcome(work: Callable[[], object], process: str) -> bytes:
    """(True, what `work` returns) or (False, the exception it raised, with its traceback as a note), pickled; an
    exception that cannot be pickled and read back goes as a RuntimeError of the same text."""
    import pickle
    import traceback

    try:
        return pickle.dumps((True, work()), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as e:
        e.add_note(f"in {process}:\n{traceback.format_exc()}")
        try:
            payload = pickle.dumps((False, e))
            pickle.loads(payload)  # an exception whose class takes other arguments than it keeps fails here
            return payload
        except Exception:
            failure = RuntimeError(f"{type(e).__name__}: {e}")
            failure.add_note(e.__notes__[-1])
            return pickle.dumps((False, failure))
