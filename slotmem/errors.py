"""The slotmem error family: every failure a caller should handle is a SlotmemError."""


class SlotmemError(Exception):
    """Base class of every error slotmem raises on purpose."""


class InvalidInput(SlotmemError, ValueError):
    """A slot, key, value or option was rejected; nothing was written."""


class SchemaTooNew(SlotmemError):
    """The file was written by a newer slotmem than this one."""


class CorruptDatabase(SlotmemError):
    """The file is not a SQLite database, or it is damaged."""


class StoreBusy(SlotmemError):
    """Another process held the write lock for longer than the busy timeout."""


class ModelError(SlotmemError):
    """An llm model failed (unknown model, missing key, network, unparseable reply)."""
