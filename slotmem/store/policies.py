"""Each slot's policy: the retention ``prune`` applies (a default one for slots without their
own) and the floor of what reaches a prompt."""

from __future__ import annotations

import dataclasses

from .. import validation
from ..records import SlotPolicy
from ..search.relevance import DEFAULT_FLOOR
from ..storage import retention
from .core import Core, _translated


class Policies(Core):
    """Slots' policies: retention and relevance floors."""

    @_translated
    def policies(self) -> list[SlotPolicy]:
        rows = self.conn.execute("SELECT * FROM memory_slots ORDER BY slot").fetchall()
        return [SlotPolicy(*row) for row in rows]

    @_translated
    def policy(self, slot: str) -> SlotPolicy | None:
        row = self.conn.execute(
            "SELECT * FROM memory_slots WHERE slot = ?", (validation.slot(slot),)
        ).fetchone()
        return None if row is None else SlotPolicy(*row)

    @_translated
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
        """Set the retention policy `slotmem prune` applies to ``slot``, and the slot's floor
        for what reaches a prompt (``min_relevance``: a probability; ``"default"`` goes back to
        slotmem's default; None keeps what the slot had, as for ``description``)."""
        reset = min_relevance == "default"
        policy = validation.policy(
            validation.slot(slot),
            cap,
            min_age_days,
            min_access_count,
            description,
            None if reset else min_relevance,
        )
        floor = "NULL" if reset else "coalesce(excluded.min_relevance, min_relevance)"
        with self.transaction():
            self.conn.execute(
                "INSERT INTO memory_slots VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (slot) DO UPDATE "
                "SET cap = excluded.cap, min_age_days = excluded.min_age_days, "
                "min_access_count = excluded.min_access_count, "
                "description = coalesce(excluded.description, description), "
                f"min_relevance = {floor}",
                dataclasses.astuple(policy),
            )
            saved = self.policy(slot)
        assert saved is not None  # written in this transaction
        return saved

    @_translated
    def min_relevance(self, slot: str | None = None) -> float:
        """The floor of what reaches a prompt from ``slot``: its policy's, else the default
        (slotmem.search.relevance.DEFAULT_FLOOR, which no slot gives)."""
        policy = None if slot is None else self.policy(slot)
        if policy is None or policy.min_relevance is None:
            return DEFAULT_FLOOR
        return policy.min_relevance

    @_translated
    def default_policy(self) -> SlotPolicy:
        """The retention policy of every slot without one of its own (slot ``"*"``):
        slotmem.storage.retention.DEFAULT_POLICY until ``set_default_policy``."""
        return retention.default_policy(self.conn)

    @_translated
    def set_default_policy(
        self, *, cap: int, min_age_days: float = 30, min_access_count: int = 3
    ) -> SlotPolicy:
        """Set the policy ``prune`` applies to slots that have none of their own."""
        policy = validation.policy("*", cap, min_age_days, min_access_count)
        with self.transaction():
            retention.set_default(self.conn, policy)
        return self.default_policy()
