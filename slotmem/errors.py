"""The slotmem error family: every failure a caller should handle is a SlotmemError, and each
message names the file (when there is one) and what to do."""


class SlotmemError(Exception):
    """Base class of every error slotmem raises on purpose."""


class InvalidInput(SlotmemError, ValueError):
    """A slot, key, value, path or option was rejected; nothing was written."""


class NotPermitted(SlotmemError):
    """An agent asked for what it was not given: a slot outside its scope, a write through a
    read-only surface; nothing was written."""


class ProtectedFact(NotPermitted):
    """The fact was protected by a person: agents cannot overwrite or forget it."""


class SchemaTooNew(SlotmemError):
    """The file was written by a newer slotmem than this one."""


class CorruptDatabase(SlotmemError):
    """The file is not a SQLite database, or it is damaged."""


class ForeignDatabase(SlotmemError):
    """The file is another application's SQLite database; slotmem leaves it untouched."""


class StoreBusy(SlotmemError):
    """Another process held the write lock for longer than the busy timeout."""


class ModelError(SlotmemError):
    """An llm model failed (unknown model, missing key, network, unparseable reply)."""


class StorageError(SlotmemError):
    """The file cannot be opened, read or written (I/O error, permissions, missing directory)."""


class DatabaseNotFound(StorageError):
    """There is no file at the path, and creating one was not asked for."""


class ReadOnlyDatabase(StorageError):
    """A write to a file this process may only read (the file or its directory)."""


class DiskFull(StorageError):
    """The disk holding the file is full; the write was rolled back."""


class ReplicationError(SlotmemError):
    """Litestream is missing, or a replication, restore or follow failed."""


def protected_error(slot: str, key: str, verb: str) -> ProtectedFact:
    """The error an agent's change to a person's fact raises (every part of the Store, on
    every backend)."""
    return ProtectedFact(
        f"{slot}/{key} is protected (a person wrote it): an agent cannot {verb} it. Ask the "
        f"person, or they can run 'slotmem unprotect {slot}/{key}'"
    )


def file_only(name: str) -> SlotmemError:
    """What a memory on PostgreSQL answers for what only a file has (slotmem.pg)."""
    return SlotmemError(
        f"{name} is file-only (Litestream/WAL/backups/followers): it does not apply to "
        "PostgreSQL (use pg_dump, replication and PostgreSQL's own tools)"
    )
