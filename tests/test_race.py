"""Searches while another process writes: the plan's N and its document frequencies come from one
snapshot, so a word in nearly every fact never has df > N (which took the log of a negative)."""

import multiprocessing
import time
from types import SimpleNamespace

from slotmem import Store
from slotmem.search import plan as planner
from slotmem.search import terms
from slotmem.search.lexical import Ranking, fts5_idf


def _write_names(path, stop, started):
    with Store(path, create=True) as store:
        started.set()
        i = 0
        while not stop.is_set():
            store.upsert_many(
                [
                    {"slot": "user", "key": f"note{i}.{j}", "value": f"Maja said {i} {j}"}
                    for j in (0, 1)
                ]
            )
            i += 1


def test_search_never_raises_while_another_process_writes(db_path):
    with Store(db_path, create=True) as store:
        store.upsert_many(
            [{"slot": "user", "key": f"seed{i}", "value": f"Maja likes {i}"} for i in range(20)]
        )
    ctx = multiprocessing.get_context("spawn")
    stop, started = ctx.Event(), ctx.Event()
    writer = ctx.Process(target=_write_names, args=(db_path, stop, started))
    writer.start()
    errors, searches = [], 0
    try:
        assert started.wait(60)
        with Store(db_path, create=True) as store:
            deadline = time.monotonic() + 4
            while time.monotonic() < deadline:
                for text in ("Maja", "what did Maja say", "Maja likes 3"):
                    try:
                        store.query_facts(text, track_access=False)
                    except Exception as e:  # noqa: BLE001 - counted, then reported
                        errors.append(repr(e))
                    searches += 1
    finally:
        stop.set()
        writer.join(30)
    assert searches > 100 and errors == [], f"{len(errors)} of {searches}: {errors[:3]}"


class WriteBetweenReads:
    """A connection that lets another process write right after the plan reads N."""

    def __init__(self, conn, other: Store):
        self.conn, self.other, self.fired = conn, other, False

    def __getattr__(self, name):
        return getattr(self.conn, name)

    def execute(self, sql, *args):
        cursor = self.conn.execute(sql, *args)
        if "WHERE id = 1" in sql and not self.fired:  # the averages record: N
            rows = cursor.fetchall()
            self.fired = True
            self.other.upsert_many(
                [{"slot": "user", "key": f"late{i}", "value": "Maja again"} for i in range(5)]
            )
            return SimpleNamespace(fetchone=lambda: rows[0] if rows else None)
        return cursor


def test_plan_reads_n_and_df_from_one_snapshot(db_path):
    with Store(db_path, create=True) as store, Store(db_path, create=True) as other:
        store.upsert_many([{"slot": "user", "key": f"k{i}", "value": "Maja"} for i in range(5)])
        chosen = planner.plan(WriteBetweenReads(store.conn, other), terms.parse("Maja"))
        assert chosen.facts == 5 and [arm.df for arm in chosen.arms] == [5]


def test_idf_never_takes_the_log_of_a_negative():
    assert fts5_idf(10, 12) > 0
    assert Ranking().idf(10, 12) >= 0
