"""PostgresStore's slot policies (``memory_slots``, migrations/0004_policies.sql): the retention
``prune`` applies to each slot (the default policy for slots without one) and each slot's floor
of what reaches a prompt, with slotmem.store.policies' validation and semantics."""

from __future__ import annotations

import dataclasses
import json

from .. import validation
from ..records import SlotPolicy
from ..search.relevance import DEFAULT_FLOOR
from ..storage import retention
from . import server
from .reads import Reads

FIELDS = tuple(f.name for f in dataclasses.fields(SlotPolicy))
SET_SQL = f"""INSERT INTO memory_slots ({", ".join(FIELDS)}) VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (slot) DO UPDATE SET cap = excluded.cap, min_age_days = excluded.min_age_days,
    min_access_count = excluded.min_access_count,
    description = coalesce(excluded.description, memory_slots.description),
    min_relevance = {{floor}}"""


class Policies(Reads):
    """Slots' policies: retention and relevance floors."""

    @server.translated
    def policies(self) -> list[SlotPolicy]:
        rows = self.conn.execute(f"SELECT {', '.join(FIELDS)} FROM memory_slots ORDER BY slot")
        return [SlotPolicy(**row) for row in rows]

    @server.translated
    def policy(self, slot: str) -> SlotPolicy | None:
        row = self.conn.execute(
            f"SELECT {', '.join(FIELDS)} FROM memory_slots WHERE slot = %s",
            (validation.slot(slot),),
        ).fetchone()
        return None if row is None else SlotPolicy(**row)

    @server.translated
    def set_policy(
        self,
        slot: str,
        *,
        cap: int,
        min_age_days: float = 30,
        min_access_count: int = 3,
        description: str | None = None,
        min_relevance: float | str | None = None,
    ) -> SlotPolicy:
        """As Store.set_policy: the retention policy of ``slot`` and its floor for what
        reaches a prompt (``"default"``: slotmem's default; None keeps the slot's, as for
        ``description``)."""
        self._writable()
        reset = min_relevance == "default"
        policy = validation.policy(
            validation.slot(slot),
            cap,
            min_age_days,
            min_access_count,
            description,
            None if reset else min_relevance,
        )
        floor = "NULL" if reset else "coalesce(excluded.min_relevance, memory_slots.min_relevance)"
        with self.transaction():
            self.conn.execute(SET_SQL.format(floor=floor), dataclasses.astuple(policy))
            saved = self.policy(policy.slot)
        assert saved is not None  # written in this transaction
        return saved

    def min_relevance(self, slot: str | None = None) -> float:
        """The floor of what reaches a prompt from ``slot``: its policy's, else the default."""
        policy = None if slot is None else self.policy(slot)
        if policy is None or policy.min_relevance is None:
            return DEFAULT_FLOOR
        return policy.min_relevance

    @server.translated
    def default_policy(self) -> SlotPolicy:
        """The policy of every slot without one of its own (slot ``"*"``)."""
        row = self.conn.execute(
            "SELECT value FROM memory_settings WHERE name = %s", (retention.DEFAULT_SETTING,)
        ).fetchone()
        if row is None:
            return retention.DEFAULT_POLICY
        saved = json.loads(row["value"])
        return SlotPolicy(
            "*",
            saved["cap"],
            saved["min_age_days"],
            saved["min_access_count"],
            retention.DEFAULT_DESCRIPTION,
        )

    def has_default_policy(self) -> bool:
        """Was the default policy set in this memory (else retention.DEFAULT_POLICY applies)?"""
        row = self.conn.execute(
            "SELECT 1 FROM memory_settings WHERE name = %s", (retention.DEFAULT_SETTING,)
        ).fetchone()
        return row is not None

    @server.translated
    def set_default_policy(
        self, *, cap: int, min_age_days: float = 30, min_access_count: int = 3
    ) -> SlotPolicy:
        """Set the policy ``prune`` applies to slots that have none of their own."""
        self._writable()
        policy = validation.policy("*", cap, min_age_days, min_access_count)
        with self.transaction():
            save_default(self.conn, policy)
        return self.default_policy()


def save_default(conn, policy: SlotPolicy) -> None:
    """Inside the caller's transaction: ``policy`` becomes the default policy."""
    value = json.dumps(
        {name: getattr(policy, name) for name in ("cap", "min_age_days", "min_access_count")}
    )
    conn.execute(
        "INSERT INTO memory_settings (name, value) VALUES (%s, %s) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (retention.DEFAULT_SETTING, value),
    )


def save(conn, policy: SlotPolicy) -> None:
    """Inside the caller's transaction: ``policy`` set as it is (an import's)."""
    conn.execute(SET_SQL.format(floor="excluded.min_relevance"), dataclasses.astuple(policy))
