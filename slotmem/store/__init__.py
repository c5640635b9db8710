"""Store: the facade over one slotmem .db file.

One class per concern, each in a module named for what it holds, composed into ``Store`` (the
one class callers name): core.py (opening the file, connections, transactions, error
translation), reads.py (get, list, history, search, slots, stats), writes.py (upsert, delete,
rate, pin, protect), policies.py (retention and relevance floors per slot), cursors.py (how far
the flusher has read each conversation), upkeep.py (prune, checkpoint, backup, restore, undo a
flush, export and import, duplicates, doctor, repair) and episodes.py (episodes, their
provenance, the retrieval log) and links.py (links between facts, ``about``). Only this package touches its classes' private members."""

from .core import Core, now_ms
from .cursors import Cursors
from .episodes import Episodes
from .links import Links
from .policies import Policies
from .reads import Reads
from .upkeep import Upkeep
from .writes import Writes


class Store(Episodes, Writes, Links, Upkeep, Policies, Cursors, Reads, Core):
    """Facts in slots, in one SQLite file. Safe to share between threads and processes.

    ``Store("postgresql://user@host:5432/db?memory=NAME")`` opens a memory on PostgreSQL
    instead: a ``slotmem.pg.store.PostgresStore`` (the same methods for the subset it supports;
    docs/scaling.md)."""

    def __new__(cls, path=None, *args, **kwargs):
        if isinstance(path, str) and path.startswith(("postgresql://", "postgres://")):
            from .. import pg  # psycopg is imported only for a PostgreSQL target

            return pg.open_store(path, *args, **kwargs)
        return super().__new__(cls)


__all__ = ["Store", "now_ms"]
