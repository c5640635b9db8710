"""PostgresStore: the Store's public methods for a memory on PostgreSQL,
one class per concern as the Store is composed: core.py (opening, connections, the lock, the
refusals), writes.py, reads.py, upkeep.py, policies.py (slot policies), cursors.py (the
flusher's cursors, undo_flush), links.py (links between facts, ``about``),
dedupe.py (near-duplicates, by words), episodes.py (episodes and their provenance),
retrievals.py (the retrieval log).

The decisions are the Store's, imported: validation and key forms (slotmem.validation), expiry
(validation.expiry), protection (the same ProtectedFact), unchanged detection (value,
confidence and expiry equal: no write, no history), the list orders, history versions,
restore (slotmem.storage.lifecycle), the search (slotmem.pg.search over slotmem.search),
retention's constants. What differs is how a write is made safe across hosts: a single-fact
write locks its row (``SELECT ... FOR UPDATE``, and ``INSERT ... ON CONFLICT`` for a new key,
whose conflict makes the loser re-read the winner's row), and a read-decide-write over many
rows (prune, import, ``transaction()``) holds the memory's advisory lock.

What only a file has (WAL checkpoints, file backups) raises one line: "file-only"."""

from __future__ import annotations

from .core import FILE_ONLY, Core, now_ms
from .cursors import Cursors
from .dedupe import Dedupe
from .episodes import Episodes
from .links import Links
from .policies import Policies
from .reads import Reads
from .retrievals import Retrievals
from .upkeep import Upkeep
from .writes import Writes

__all__ = ["FILE_ONLY", "PostgresStore", "now_ms"]


class PostgresStore(
    Dedupe, Episodes, Links, Cursors, Retrievals, Upkeep, Policies, Reads, Writes, Core
):
    """Facts in slots, in one schema of a PostgreSQL database. Safe to share between threads,
    processes and hosts."""
