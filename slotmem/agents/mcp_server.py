"""The same memory over MCP: `slotmem mcp -d agent.db` serves recall, remember, forget and
context on stdio. Needs the mcp extra: pip install 'slotmem[mcp]'."""

from __future__ import annotations

import functools

from ..errors import SlotmemError
from . import tools
from .context import DEFAULT_BUDGET_TOKENS, build_context

SOURCE = "mcp"


def _as_tool_errors(function):
    """SlotmemErrors are anticipated failures: their message goes back to the model."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except SlotmemError as e:
            raise ToolError(str(e)) from e

    return wrapper


def build_server(store):
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        raise SlotmemError(
            "the MCP server needs the mcp package: pip install 'slotmem[mcp]'"
        ) from None

    server = MCPServer(
        "slotmem",
        instructions="Long-term memory. Recall facts before answering; remember durable facts "
        "(user preferences, project decisions, lessons learned) under short keys.",
    )

    @server.tool()
    @_as_tool_errors
    def recall(
        query: str, slot: str = "", limit: int = 10, min_relevance: float | None = None
    ) -> list[dict]:
        """Facts relevant to the query, best first (empty when nothing remembered is).
        slot: user, project, agent, or empty for all. min_relevance: 0 to 1, the least
        likelihood of being relevant a fact needs (default: each slot's floor)."""
        return tools.recall(store, query, slot, limit, min_relevance)

    @server.tool()
    @_as_tool_errors
    def remember(slot: str, key: str, value: str, confidence: float = 0.8) -> str:
        """Store a durable fact under slot/key; reusing a key replaces the value (kept in history)."""
        return tools.remember(store, slot, key, value, confidence, SOURCE)

    @server.tool()
    @_as_tool_errors
    def forget(slot: str, key: str) -> str:
        """Delete the fact slot/key; its last value stays in history."""
        return tools.forget(store, slot, key, SOURCE)

    @server.tool()
    @_as_tool_errors
    def context(message: str, budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> str:
        """The markdown memory sections an agent's prompt would get for this message: pinned
        facts, then the relevant ones, within budget_tokens (estimated)."""
        return build_context(store, message, budget_tokens=budget_tokens) or "(no relevant facts)"

    return server
