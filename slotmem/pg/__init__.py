"""The same memory on PostgreSQL (issue 26): ``Store("postgresql://...")``.

``target.py`` reads the URL (``?memory=NAME``: one PostgreSQL schema per memory),
``server.py`` holds the connections, the numbered SQL migrations in ``migrations/`` (applied
under an advisory lock) and the translation of driver errors, ``tokens.py`` turns a fact into
the terms FTS5 would index, ``search.py`` scores them with the file's exact lexical score,
``tags.py`` holds fact tags, ``policies.py`` slot policies, ``cursors.py`` the flusher's cursors
and undo-flush, ``links.py`` links between facts, ``dedupe.py`` duplicates, ``retrievals.py``
the retrieval log, ``transfer.py`` moves a memory between a file and a server through the JSONL
export format, ``vectors.py`` is the semantic leg (the file's, over pgvector), ``hybrid.py``
fuses the two legs with the file's code, and ``store.py`` is ``PostgresStore``, the Store's
public methods for the supported subset.
psycopg is imported only when a PostgreSQL target is opened. See docs/scaling.md."""

from __future__ import annotations

SCHEMES = ("postgresql://", "postgres://")


def is_target(target) -> bool:
    """Does ``target`` name a PostgreSQL memory (a ``postgresql://`` URL) rather than a file?"""
    return isinstance(target, str) and target.startswith(SCHEMES)


def open_store(target: str, **options):
    """A PostgresStore for ``target`` (psycopg is imported here, not before)."""
    from .store import PostgresStore

    return PostgresStore(target, **options)
