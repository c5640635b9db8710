"""A process whose hybrid search raises exits with that exception's status and traceback, and
nothing else. Run by tests/test_workers.py in a process of its own:

    python tests/exiting.py SCENARIO DATABASE MARKER

SCENARIO: slow (a fake model takes a second over the question and then writes MARKER: the
search's planning raises meanwhile, and the exit must wait for the worker's call), default (the
default model, the file reopened: the objects the fork handlers hold weakly are collected at
the exit). Nothing catches the RuntimeError("boom"). atexit: no exception; an exit handler
that runs after the workers' own (registered before they are imported) searches, and prints
what it found: its question must run in its caller, not wait for a worker that has ended.
"""

from __future__ import annotations

import atexit
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from slotmem import Store
from slotmem.search import plan
from slotmem.vectors import semantic

SCENARIO, DATABASE, MARKER = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
FACTS = [{"slot": "user", "key": f"k{i}", "value": f"tea coffee deploy {i}"} for i in range(50)]


def boom(*args, **kwargs):
    raise RuntimeError("boom")


def slow_model():
    import llm

    from tests.test_hybrid_share import Plugin, WordVectors

    class SlowVectors(WordVectors):
        model_id = "fake-words-slow"
        slow = False

        def embed_batch(self, items):
            vectors = list(super().embed_batch(items))
            if SlowVectors.slow:
                time.sleep(1.0)
                MARKER.write_text("embedded")
            yield from vectors

    llm.pm.register(Plugin(SlowVectors), name="word-vectors-slow")
    return SlowVectors


opened: list = []


def search_at_exit() -> None:
    store = opened[0]
    store.semantic.forget_query_vectors()  # a new question: the worker would embed it
    hits = store.query_facts("when do we deploy the tea", track_access=False)
    print(f"{len(hits)} hits at exit", flush=True)


if SCENARIO == "atexit":
    assert "slotmem.storage.workers" not in sys.modules  # its handler is registered after this
    atexit.register(search_at_exit)  # so it runs after the workers' (last in, first out)
model = None
if SCENARIO in ("slow", "atexit"):
    model = slow_model()
    semantic.os.cpu_count = lambda: 2  # a worker even on one core
with Store(DATABASE, create=True) as store:
    store.upsert_many(FACTS)
    store.semantic.reindex(model.model_id if model else None)
if SCENARIO == "atexit":
    opened.append(Store(DATABASE))
    assert opened[0].query_facts("deploy", track_access=False)  # the worker ran
    sys.exit(0)
if model:
    model.slow = True  # the search's question, not the facts, takes a second
plan.plan = boom
with Store(DATABASE) as store:
    assert store.semantic.leg() is not None  # the semantic leg is on
    store.query_facts("when do we deploy the tea", track_access=False)
