"""Each fact's weight in memory, for the threats of the search by words alone (``pruned.py``).

``pruned._threats`` asks, of the facts whose bound could still reach the first rows' floor (a
sentence at 100k facts: about 1,400 in one slot, 4,400 across slots), which do with their own
confidence, feedback and recency and pass the expiry and slot tests: a SQL lookup each, about
1.5 µs, 2-6 ms a search (docs/benchmarks.md, "Where a hybrid search's time goes now").
``Weights`` holds the columns that decide it (slot, confidence, quality, updated_at,
expires_at) as arrays, and ``threats`` answers from them in numpy with the statement's
arithmetic in its order; it keeps a hair more (``SLACK``), since a threat is only scored: one
more changes no row, one fewer could.

Fresh against the file: each use reads, in the search's snapshot, the count migration 0020's
triggers keep (an update of those columns, a delete) and the largest seq. A new count reads every
row again; a larger seq alone reads the new rows (AUTOINCREMENT: a new fact's seq is above every
held one). Reading every row costs about 180 ms at 100k facts, so it waits until the
statement has tested as many facts since the copy went stale (``PATIENCE``): whatever the mix
of writes and searches, the copy costs at most about twice what the statement would, and one
command's single search never reads it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from . import common
from .lexical import DAY_MS, FEEDBACK_FLOOR, FEEDBACK_STEP

ENABLED = True  # False: the statement decides every threat (tests compare)
# facts the statement tests while the copy is missing or stale, per fact in the file, before
# every row is read: reading one costs about what testing one does (1.8 µs against 1.5), so
# the copy never costs much more than twice what the statement alone would have
PATIENCE = 1.0
MIN_FACTS = 256  # fewer facts to test: the statement costs less than looking the copy up
SLACK = 1e-9  # kept when this close under the floor (SQL's constants are parsed from text)
NEVER = 2**63 - 1  # expires_at NULL

COLUMNS = "seq, slot, confidence, quality, updated_at, ifnull(expires_at, ?)"
SIGNAL_SQL = (
    "SELECT (SELECT changes FROM memory_weight_changes WHERE id = 1), "
    "(SELECT max(seq) FROM memory_facts)"
)


@dataclass
class Held:
    """The columns of every fact (rows by seq), as of ``changes`` and ``top`` (the count and the
    largest seq when they were read)."""

    seqs: Any  # sorted int64
    slots: Any  # int64 codes into ``names``
    confidence: Any  # float64
    quality: Any  # int64
    updated: Any  # int64
    expires: Any  # int64 (``NEVER``: no expiry)
    names: dict[str, int]
    changes: int
    top: int


class Weights:
    """One Store's copy (kept beside its document frequencies: ``of``)."""

    def __init__(self):
        self._held: Held | None = None
        self._room: dict[str, Any] | None = None  # arrays with room for new facts (``_extend``)
        self._owed = 0
        self._lock = threading.Lock()

    def held(self, conn, asked: int) -> Held | None:
        """The copy as fresh as the file in the caller's snapshot, for a search that tests
        ``asked`` facts; or None: not yet worth reading (``PATIENCE``), another thread reading
        it now, or a file without migration 0020's count."""
        try:
            changes, top = conn.execute(SIGNAL_SQL).fetchone()
        except Exception:  # noqa: BLE001 - no such table: a file read-only, before migration 0020
            return None
        if changes is None or not self._lock.acquire(blocking=False):
            return None  # (a thread reading every row: the statement meanwhile, not a wait)
        try:
            top = top or 0
            held = self._held
            if held is not None and held.changes == changes and held.top <= top:
                if held.top < top:  # new facts only
                    held = self._held = self._extend(conn, held, top)
                return held
            self._owed += asked  # what the statement tests instead
            if self._owed < PATIENCE * top:  # (top: the facts, give or take the deleted)
                return None
            self._owed = 0
            self._held, self._room = _read(conn, changes, top), None
            return self._held
        finally:
            self._lock.release()

    def decide(self, conn, ranking, seqs, scaled, least: float, options: dict):
        """``threats``, from the copy (``held``), or None, the statement's to decide: off
        (``ENABLED``), too few facts to be worth it (``MIN_FACTS``), a test the copy cannot make
        (``usable``; nor counted toward reading it), or no copy to use now."""
        if not ENABLED or len(seqs) < MIN_FACTS or not usable(options):
            return None
        copy = self.held(conn, len(seqs))
        return None if copy is None else threats(copy, ranking, seqs, scaled, least, options)

    def _extend(self, conn, held: Held, top: int) -> Held:
        """``held`` with the facts above its largest seq, written after its rows in arrays
        that double when full (0.1 ms for a new fact at 100k facts, where copying every row
        took 4); a copy handed out before keeps its rows, the new ones lie beyond them."""
        np = common.numpy()
        found = conn.execute(
            f"SELECT {COLUMNS} FROM memory_facts WHERE seq > ? ORDER BY seq", (NEVER, held.top)
        )
        new = _held(found, dict(held.names), held.changes, top)
        size, end = len(held.seqs), len(held.seqs) + len(new.seqs)
        room = self._room
        if room is None or len(room["seqs"]) < end:
            room = {name: np.empty(max(2 * end, 1024), dtype) for name, dtype in zip(ARRAYS, TYPES)}
            for name in ARRAYS:
                room[name][:size] = getattr(held, name)
            self._room = room
        for name in ARRAYS:
            room[name][size:end] = getattr(new, name)
        arrays = {name: room[name][:end] for name in ARRAYS}
        return Held(**arrays, names=new.names, changes=held.changes, top=top)


def usable(options: dict) -> bool:
    """Whether the copy can decide a search's threats: not with a window or tags (tests the
    statement makes from columns and a table it does not hold)."""
    return options.get("since") is None and options.get("until") is None and not options["tags"]


def of(freqs) -> Weights | None:
    """The Store's copy, kept on its ``DocFreqs`` (None without one: no copy to keep)."""
    if freqs is None:
        return None
    if not isinstance(getattr(freqs, "weights", None), Weights):
        freqs.weights = Weights()
    return freqs.weights


def threats(held: Held, ranking, seqs, scaled, least: float, options: dict) -> list[int] | None:
    """``pruned._threats``'s facts from the copy: of ``seqs`` (with their bounds ``scaled``,
    integers, as the statement reads them), those whose bound times confidence × feedback ×
    recency reaches ``least`` and that pass the statement's tests (not expired at ``now``, in
    the slots asked), for ``options`` it can decide (``usable``). None when it does not hold
    one of the seqs."""
    np = common.numpy()
    if not len(held.seqs):
        return None
    at = np.minimum(np.searchsorted(held.seqs, seqs), len(held.seqs) - 1)
    if not np.array_equal(held.seqs[at], seqs):
        return None
    now = options["now"]
    # as the statement: (bound * confidence * feedback) * recency, left to right, in doubles
    value = scaled.astype(np.float64) * held.confidence[at]
    value *= np.maximum(FEEDBACK_FLOOR, 1 + FEEDBACK_STEP * held.quality[at])
    if ranking.half_life_days:
        half_life_ms = float(ranking.half_life_days) * DAY_MS
        value *= 1.0 / (1.0 + np.maximum(0, now - held.updated[at]) / half_life_ms)
    keep = (value >= least * (1 - SLACK)) & (held.expires[at] > now)
    if options["slots"]:
        codes = [held.names[slot] for slot in options["slots"] if slot in held.names]
        keep &= np.isin(held.slots[at], codes)
    return seqs[keep].tolist()


def _read(conn, changes: int, top: int) -> Held:
    """Every fact's columns (in the caller's snapshot)."""
    found = conn.execute(f"SELECT {COLUMNS} FROM memory_facts ORDER BY seq", (NEVER,))
    return _held(found, {}, changes, top)


ARRAYS = ("seqs", "slots", "confidence", "quality", "updated", "expires")  # Held's arrays
TYPES = ("int64", "int64", "float64", "int64", "int64", "int64")
CHUNK = 65_536  # rows made into arrays at a time (a million rows' tuples at once: 200 MB)


def _held(cursor, names: dict[str, int], changes: int, top: int) -> Held:
    """The rows of ``cursor`` (``COLUMNS``) as arrays, new slot names added to ``names``."""
    np = common.numpy()
    chunks: list[list] = [[] for _ in ARRAYS]
    while rows := cursor.fetchmany(CHUNK):
        seqs, slots, *rest = zip(*rows)
        codes = [names.setdefault(slot, len(names)) for slot in slots]
        for chunk, values, dtype in zip(chunks, [seqs, codes, *rest], TYPES):
            chunk.append(np.array(values, dtype=dtype))
    arrays = {
        name: np.concatenate(chunk) if chunk else np.zeros(0, dtype)
        for name, chunk, dtype in zip(ARRAYS, chunks, TYPES)
    }
    return Held(**arrays, names=names, changes=changes, top=top)
