"""A forked child starts with a copy of its parent's memory and one thread, the one that called
``fork``: a lock another thread held at that moment stays held in the child for good, and the
threads that would have emptied a queue are gone. So every object of slotmem's that holds
locks, threads or queues registers here, and ``os.register_at_fork`` recreates them in the
child before any of its code runs: new locks, no threads (started again when needed), empty
queues (what the parent queued is the parent's to write). Connections are not closed in the
child but the forking thread's (storage/db.py): the child opens its own.

SQLite is not fork-safe either: a child inherits the memory where SQLite keeps its own
mutexes and the locks the process holds on the file, so a thread inside SQLite at the fork, or
holding the write lock, would leave them held in the child for good. So every call into slotmem
(``calling``: each Store method, the access thread's writes) and every write transaction counts
itself here, and a fork waits (up to ``QUIET_SECONDS``) until no other thread is inside one;
none starts until the fork is done. The forking thread's own connection is then closed in the
child (storage/db.py), which lets go of a transaction it had open in the parent.

A fork that waited ``QUIET_SECONDS`` in vain goes ahead (a fork handler never waits without
end), and the child may not call into SQLite at all (``usable``): the other thread may have
held one of SQLite's process-wide locks, and the child would wait for it forever. Its first
call into slotmem raises StorageError at once instead.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable

# The write scan's multilingual reader holds its engine's lock through a fork (so a child
# inherits an idle engine) and registers its fork handlers when first imported: here, before
# this module registers its own below. os.register_at_fork runs the "before" handlers in the
# reverse order, so ours waits first for the threads inside slotmem (one may be scanning, and
# would wait for the engine's lock if the reader's handler held it already), then the reader's
# waits for the engine (tests/test_multilingual.py, "inside").
from ..safety import multilingual as _scan_reader  # noqa: F401 - for its fork handlers' order


def warn(message: str, *, failed: bool = False) -> None:
    """``message`` to the ``slotmem`` logger when this process has imported logging (``failed``:
    with the exception being handled), else to standard error, as logging's last resort would
    write it. The fork handlers import nothing (an import in a child can wait forever on a lock
    another thread held at the fork), and a read imports no logging."""
    logging = sys.modules.get("logging")
    if logging is None:
        reason = f" ({sys.exc_info()[1]!r})" if failed else ""
        sys.stderr.write(f"{message}{reason}\n")
    elif failed:
        logging.getLogger("slotmem").exception(message)
    else:
        logging.getLogger("slotmem").warning(message)


# objects' reset methods, each as (a weak reference to its object, its function): not
# weakref.WeakMethod, whose own callback raised AttributeError (printed as "Exception ignored")
# when the interpreter collected a Store and its WeakMethod together at exit
_methods: list[tuple[weakref.ref, Callable]] = []
_callbacks: list[Callable[[], None]] = []  # for locks held by classes and modules
_before_callbacks: list[Callable[[], None]] = []
QUIET_SECONDS = 5.0  # the longest a fork waits for other threads to leave slotmem


class _Calls:
    """Calls into slotmem and write transactions open in this process, per thread."""

    def __init__(self):
        self.changed = threading.Condition()
        self.open: collections.Counter = collections.Counter()
        self.quiet = True  # did the last fork find no other thread inside slotmem?
        self.unsafe = False  # a child (or its child) of a fork that was not quiet
        self.forking = False  # a fork waits: no thread enters slotmem meanwhile


_calls = _Calls()


@contextlib.contextmanager
def calling():
    """Held while a thread is inside slotmem (it may be inside SQLite) or holds a write
    transaction: a fork waits for other threads' (see the module)."""
    me, calls = threading.get_ident(), _calls
    with calls.changed:
        while calls.forking and not calls.open[me]:  # (a thread inside goes on: nested calls)
            calls.changed.wait()
        calls.open[me] += 1
    try:
        yield
    finally:
        with calls.changed:
            calls.open[me] -= 1
            if not calls.open[me]:
                del calls.open[me]
                calls.changed.notify_all()


def quiet() -> bool:
    """In a child: was no other thread of the parent inside slotmem at the fork?"""
    return _calls.quiet


def usable() -> bool:
    """May this process call into SQLite? Not when it was forked (or its parent was) while
    another thread was inside slotmem: that thread may have held one of SQLite's own locks
    (the one around its memory allocator, or around opening files), which then stays held in
    the child for good, and the child's first call into SQLite would wait forever."""
    return not _calls.unsafe


def _before() -> None:
    """Hold the count through the fork, once no other thread is inside slotmem (or once
    ``QUIET_SECONDS`` have passed: the fork then goes ahead, and the child will not touch what
    it inherited)."""
    changed, me = _calls.changed, threading.get_ident()
    changed.acquire()
    deadline = time.monotonic() + QUIET_SECONDS
    _calls.quiet, _calls.forking = True, True
    while any(n for thread, n in _calls.open.items() if thread != me):
        left = deadline - time.monotonic()
        if left <= 0:
            _calls.quiet = False
            warn("slotmem: forking while another thread is inside slotmem")
            break
        changed.wait(left)
    for callback in _before_callbacks:
        _reset(callback)


def _after_in_parent() -> None:
    _calls.forking = False
    _calls.changed.notify_all()
    _calls.changed.release()


def register(method: Callable[[], None]) -> None:
    """Call ``method`` (an object's bound method, held weakly) in every child forked while its
    object lives."""
    owner, function = method.__self__, method.__func__  # type: ignore[attr-defined]
    _methods.append((weakref.ref(owner, _forget), function))


def _forget(ref: weakref.ref) -> None:
    for i, (held, _) in enumerate(_methods or ()):  # (None once the module is torn down)
        if held is ref:
            del _methods[i]
            return


def before_fork(callback: Callable[[], None]) -> None:
    """Call ``callback()`` in the parent just before each fork, once no other thread is inside
    slotmem (to note what the child will need to know of that moment)."""
    _before_callbacks.append(callback)


def at_fork(callback: Callable[[], None]) -> None:
    """Call ``callback()`` in every child (a class's or a module's locks)."""
    _callbacks.append(callback)


def _in_child() -> None:
    global _calls
    parent, _calls = _calls, _Calls()  # the parent's threads are not the child's
    _calls.quiet, _calls.unsafe = parent.quiet, parent.unsafe or not parent.quiet
    for callback in _callbacks:
        _reset(callback)
    alive = [(ref, function, ref()) for ref, function in _methods]
    _methods[:] = [(ref, function) for ref, function, owner in alive if owner is not None]
    for _, function, owner in alive:
        if owner is not None:
            _reset(functools.partial(function, owner))


def _reset(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # noqa: BLE001 - one failure must not leave the others held (warn logs it)
        with contextlib.suppress(Exception):
            warn(f"slotmem: resetting {callback!r} after fork failed", failed=True)


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(before=_before, after_in_parent=_after_in_parent, after_in_child=_in_child)
