"""The flusher's defaults, in a module of their own: ``slotmem --help`` and every other command
show them without importing what the flusher needs (llm, pydantic)."""

DEFAULT_SLOTS = ("user", "project", "agent")
DEFAULT_CHUNK_CHARS = 12_000
DEFAULT_MIN_CONFIDENCE = 0.4
