"""One helper thread that runs functions in turn, for a search's parts that run beside it.

Not concurrent.futures' ThreadPoolExecutor: its module holds a lock of its own through every
fork (its ``os.register_at_fork`` handler, registered when it is first imported, after
slotmem's, so run before it), and ``submit`` takes that lock. A search on another thread that
submitted while slotmem's handler waited for it to leave slotmem (storage/forks.py) waited for
the fork in turn: every such fork waited its full ``QUIET_SECONDS``, and its child could not use
the file (tests/forking.py, "asked"). A ``Worker`` holds no lock through a fork; its owner makes
a new one in a child (which has none of its parent's threads).

Its thread is a daemon (a Store never closed does not keep its process from exiting), and the
process's exit lets it finish the calls queued on it first (``FINISH_SECONDS`` at most): a
daemon thread still inside a C++ extension (a question's onnxruntime run, say) when the
interpreter goes ended the process with "terminate called without an active exception" and
SIGABRT, where an exception raised meanwhile (Ctrl-C in a search) should have ended it with its
own status (tests/exiting.py).
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any


class Job:
    """A function's call under way on a ``Worker``: ``result()`` waits for it."""

    def __init__(self, function: Callable[[], Any]):
        self._function = function
        self._finished = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def run(self, ended: Callable[[], None] | None = None) -> None:
        """Call the function; then ``ended()``, before ``result()`` returns in the caller."""
        try:
            self._value = self._function()
        except BaseException as e:  # noqa: BLE001 - raised again in the caller, by result()
            self._error = e
        finally:
            self._function = None  # type: ignore[assignment]
            if ended is not None:
                ended()
            self._finished.set()

    def done(self) -> bool:
        return self._finished.is_set()

    def result(self) -> Any:
        """The function's value; what it raised is raised here, in the caller."""
        self._finished.wait()
        if self._error is not None:
            raise self._error
        return self._value


class _Tally:
    """The calls a ``Worker``'s thread has still to run to their end (the thread holds this and
    the queue, not the ``Worker``, so a ``Worker`` nobody holds is collected and its thread
    ends)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pending = 0

    def ended(self) -> None:
        with self.lock:
            self.pending -= 1


FINISH_SECONDS = 10.0  # the longest a process's exit waits for its workers' calls under way
_threads: dict[threading.Thread, queue.SimpleQueue] = {}  # this process's, with their queues
_threads_lock = threading.Lock()
_exiting = False  # set at exit: from then on every call runs in its caller


def _serve(jobs: queue.SimpleQueue, tally: _Tally) -> None:
    try:
        while (job := jobs.get()) is not None:
            job.run(tally.ended)
    finally:
        with _threads_lock:
            _threads.pop(threading.current_thread(), None)


@atexit.register
def _finish() -> None:
    """At exit (after the interpreter joined its other threads, before it goes): every worker
    thread ends once the calls queued so far have run, and the exit waits for that; a call
    submitted later (by another exit handler's search) runs in its caller."""
    global _exiting
    with _threads_lock:
        _exiting = True
        running = list(_threads.items())
    deadline = time.monotonic() + FINISH_SECONDS
    for _, jobs in running:
        jobs.put(None)
    for thread, _ in running:
        if thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))


def _in_child() -> None:
    """A child has none of its parent's threads, and a fresh lock (the parent's may be held)."""
    global _threads_lock
    _threads.clear()
    _threads_lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_in_child)


class Worker:
    """A daemon thread (named ``name``), started by the first ``submit`` of this process, ended
    by ``shutdown`` or once the ``Worker`` is collected."""

    def __init__(self, name: str):
        self.name = name
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._pid = os.getpid()
        self._tally = _Tally()
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, function: Callable[[], Any], *, idle: bool = False) -> Job | None:
        """The call under way on the thread; with ``idle``, None (and nothing done) while the
        thread has a call to run already (the caller runs it itself rather than wait). After
        ``shutdown``: with ``idle`` None, else the call run here, before this returns."""
        if self._pid != os.getpid():
            raise RuntimeError("a Worker of the parent process: make a new one in a child")
        job = Job(function)
        tally = self._tally
        with tally.lock:
            closed = self._closed or _exiting
            if not closed:
                if idle and tally.pending:
                    return None
                tally.pending += 1
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=_serve, args=(self._jobs, tally), name=self.name, daemon=True
                    )
                    self._thread.start()
                    with _threads_lock:
                        _threads[self._thread] = self._jobs
                    # not at exit: _finish ends the thread then (a finalizer's put at exit,
                    # after _finish, would leave a later call queued with no thread to run it)
                    weakref.finalize(self, self._jobs.put, None).atexit = False
                # queued under the lock: a shutdown cannot end the thread between the count
                # and the queue, leaving this call never run and its caller waiting
                self._jobs.put(job)
        if closed:
            if idle:
                return None
            job.run()
        return job

    def shutdown(self) -> None:
        """Let the thread end once the calls submitted so far have run; later calls run in
        their caller."""
        with self._tally.lock:
            self._closed = True
            if self._thread is not None and self._pid == os.getpid():
                self._jobs.put(None)
                self._thread = None
