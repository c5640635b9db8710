"""The slotmem command line: parse, call the Store, print. One module per topic; ``app`` holds
the group and the shared options."""

from . import (  # noqa: F401 - they register commands
    demo,
    episodes,
    facts,
    flush,
    importers,
    lifecycle,
    recall,
    replicate,
    serve,
    ui,
    upkeep,
)
from .app import cli

__all__ = ["cli"]
