"""A page in the browser to see and correct the memory: `slotmem ui` (docs/ui.md)."""

from .server import UI

__all__ = ["UI"]
