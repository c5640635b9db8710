"""slotmem for the llm tool ecosystem: a memory Toolbox any tool-using model can call, and
slotmem's offline default embedding model.

    llm -T 'Slotmem("agent.db")' "Remember that I deploy on Tuesdays" --td
    llm -T 'Slotmem("agent.db", slots=["project"], read_only=True)' "When do we deploy?"
"""

from __future__ import annotations

import json

import llm

from .context import DEFAULT_BUDGET_TOKENS
from .tools import WRITES, AgentMemory, scope

SOURCE = "llm-tool"


class Slotmem(llm.Toolbox):
    """Long-term memory in a slotmem file: recall, get, list, history and context; remember,
    forget, rate and flush unless read-only. ``slots`` limits it to those slots; facts a person
    protected stay unchanged unless ``allow_protected``. ``flush_model`` is the model the flush
    tool extracts facts with (default: llm's default model). Contexts come inside a ``<memory>``
    element that marks them as data unless ``delimit=False``."""

    def __init__(
        self,
        database: str | None = None,
        slots: list[str] | str | None = None,
        read_only: bool = False,
        allow_protected: bool = False,
        flush_model: str | None = None,
        delimit: bool = True,
    ):
        from ..storage.db import default_path

        self.database = database or str(default_path())
        self.slots = scope(slots)  # bad slot names fail here, before any file is made
        self.read_only = read_only
        self.allow_protected = allow_protected
        self.flush_model = flush_model
        self.delimit = delimit  # contexts inside <memory> (slotmem.agents.framing)
        self._memory: AgentMemory | None = None

    def tools(self):
        """A read-only toolbox offers no writing tool at all."""
        hidden = {f"{type(self).__name__}_{name}" for name in WRITES} if self.read_only else ()
        return [tool for tool in super().tools() if tool.name not in hidden]

    def _agent(self) -> AgentMemory:
        if self._memory is None:
            from ..store import Store

            # an agent's memory starts empty; a read-only one reads what exists
            store = Store(self.database, create=not self.read_only)
            self._memory = AgentMemory(
                store,
                slots=self.slots,
                read_only=self.read_only,
                allow_protected=self.allow_protected,
                source=SOURCE,
                delimit=self.delimit,
            )
        return self._memory

    def recall(
        self, query: str, slot: str = "", limit: int = 10, min_relevance: float | None = None
    ) -> str:
        """Search memory for facts relevant to the query, best first, as JSON (an empty list
        when nothing remembered is), each with its match (strong: very likely what was asked
        for; good; weak: related at best), rank, relevance (0 to 1), updated_at and source.
        slot: user, project, agent or another slot name; empty searches every slot.
        min_relevance: 0 to 1 (default: each slot's floor)."""
        return _json(self._agent().recall(query, slot or None, limit, min_relevance))

    def get(self, slot: str, key: str) -> str:
        """The fact stored under slot/key, exactly, as JSON."""
        return _json(self._agent().get(slot, key))

    def history(self, slot: str, key: str, limit: int = 10) -> str:
        """Old values of slot/key, newest first (overwrites, deletions, prunes), as JSON."""
        return _json(self._agent().history(slot, key, limit))

    def context(self, message: str, budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> str:
        """The markdown memory sections a prompt would get for this message."""
        return self._agent().context(message, budget_tokens) or "(no relevant facts)"

    def remember(self, slot: str, key: str, value: str, confidence: float = 0.8) -> str:
        """Store a durable fact under slot/key (user: about the user; project: decisions and
        constraints; agent: lessons learned). Reusing a key replaces the old value, which is
        kept in history; a fact a person protected cannot be replaced."""
        done = self._agent().remember(slot, key, value, confidence)
        return f"{done['action']}: {slot}/{key}"

    def forget(self, slot: str, key: str) -> str:
        """Delete the fact slot/key (its last value stays in history)."""
        done = self._agent().forget(slot, key)
        return f"forgot: {slot}/{key}" if done["action"] == "forgot" else f"no fact {slot}/{key}"

    def rate(self, slot: str, key: str, rating: int, comment: str | None = None) -> str:
        """Pass on the user's feedback about a fact: -3 (wrong or harmful) to 3 (exactly
        right); its quality weighs in its ranking. A fact a person protected cannot be rated."""
        fact = self._agent().rate(slot, key, rating, comment)
        return f"rated {slot}/{key}: quality is now {fact['quality']}"

    def flush(self, conversation: str, conversation_id: str = "") -> str:
        """Remember the conversation so far: extract its durable facts (user preferences,
        project decisions, lessons learned) and store them. conversation: its text, or a JSON
        list of {role, content} messages; send all of it each time with the same
        conversation_id, and what was read before is skipped."""
        done = self._agent().flush(conversation, self.flush_model, conversation_id or None)
        lines = [
            f"{f['action']}: {f['slot']}/{f['key']}" + (f" ({f['reason']})" if f["reason"] else "")
            for f in done["facts"]
        ]
        return "\n".join(lines) or "nothing worth remembering"

    def list(self, slot: str = "", limit: int = 20) -> str:
        """The facts of a slot (empty: of every slot), most recently updated first, as JSON."""
        return _json(self._agent().list_facts(slot or None, limit))


def _json(data) -> str:
    return json.dumps(data, ensure_ascii=False)


@llm.hookimpl
def register_tools(register):
    register(Slotmem)


@llm.hookimpl
def register_embedding_models(register):
    from ..vectors.embedders import llm_class

    register(llm_class()())
