"""The slotmem command line: parse, call the Store, print. One module per topic; ``app`` holds
the group and the shared options."""

from . import demo, facts, flush, recall, replicate, serve, upkeep  # noqa: F401 - they register commands
from .app import cli

__all__ = ["cli"]
