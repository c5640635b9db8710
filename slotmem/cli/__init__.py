"""The slotmem command line: parse, call the Store, print. One module per topic; ``app`` holds
the group, the shared options and which module holds each command (imported when it is used)."""

from .app import cli

__all__ = ["cli"]
