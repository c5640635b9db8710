"""Conversations logged by the ``llm`` tool (``llm chat``, ``llm prompt``), read from its logs
database, read-only, with the stdlib driver (the file is llm's, not slotmem's)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from .dates import timestamp
from .transcripts import Transcript, TranscriptError, Turn, make_transcript


def llm_logs_path() -> Path:
    "The llm tool's logs database (honours LLM_USER_PATH)."
    import llm

    return llm.user_dir() / "logs.db"


def from_llm_logs(conversation_id: str, database: str | os.PathLike | None = None) -> Transcript:
    """Read one conversation from the ``llm`` tool's logs database, read-only.

    llm 0.36 logs to ``threads``/``messages``/``parts`` (a thread id is the conversation
    id; the thread's time is the transcript's); earlier versions logged to
    ``conversations``/``responses`` (each response's time is its turns'). Both are read.
    """
    path = Path(database) if database else llm_logs_path()
    if not path.exists():
        raise TranscriptError(f"No llm logs database at {path}: has 'llm' logged anything yet?")
    source = f"llm:{conversation_id}"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as ex:
        raise TranscriptError(f"Cannot open llm logs database {path}: {ex}") from ex
    conn.row_factory = sqlite3.Row
    try:
        tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
        turns, at = None, None
        if "threads" in tables:
            turns = _thread_turns(conn, conversation_id)
            at = _thread_time(conn, conversation_id)
        if not turns and "responses" in tables:
            turns = _legacy_turns(conn, conversation_id)
    except sqlite3.Error as ex:
        raise TranscriptError(f"Cannot read llm logs database {path}: {ex}") from ex
    finally:
        conn.close()
    if not turns:
        raise TranscriptError(
            f"No conversation {conversation_id!r} in {path}; 'llm logs list' shows the ids"
        )
    transcript = make_transcript(turns, "llm", source)
    transcript.at = at
    return transcript


def _thread_time(conn, thread_id: str):
    row = conn.execute("select datetime_utc from threads where id = ?", [thread_id]).fetchone()
    return None if row is None else timestamp(row[0])


def _thread_turns(conn, thread_id: str) -> list[Turn] | None:
    row = conn.execute("select tip_message_hash from threads where id = ?", [thread_id]).fetchone()
    if row is None or row[0] is None:
        return None
    chain = []
    hash_ = row[0]
    while hash_ is not None:
        message = conn.execute(
            "select hash, parent_hash, role from messages where hash = ?", [hash_]
        ).fetchone()
        if message is None:
            break
        chain.append(message)
        hash_ = message["parent_hash"]
    chain.reverse()
    return [Turn(m["role"], _message_text(conn, m["hash"])) for m in chain]


def _message_text(conn, message_hash: str) -> str:
    pieces = []
    for part in conn.execute(
        "select text, payload from parts where message_hash = ? and type = 'text' "
        "order by position",
        [message_hash],
    ):
        text = part["text"]
        if text is None and part["payload"]:
            text = _text_from_refs(conn, json.loads(part["payload"]).get("text_ref") or [])
        if text and text.strip():
            pieces.append(text.strip())
    return "\n".join(pieces)


def _text_from_refs(conn, pieces: list[dict]) -> str:
    "Text stored as literals and references to the fragments table."
    out = []
    for piece in pieces:
        if "literal" in piece:
            out.append(piece["literal"])
        elif "fragment" in piece:
            row = conn.execute(
                "select content from fragments where id = ?", [piece["fragment"]]
            ).fetchone()
            out.append(row[0] if row else "")
    return "".join(out)


def _legacy_turns(conn, conversation_id: str) -> list[Turn]:
    turns = []
    rows = conn.execute(
        "select prompt, response, datetime_utc from responses where conversation_id = ? "
        "order by datetime_utc, id",
        [conversation_id],
    )
    for row in rows:
        at = timestamp(row["datetime_utc"])
        turns.append(Turn("user", (row["prompt"] or "").strip(), at))
        turns.append(Turn("assistant", (row["response"] or "").strip(), at))
    return turns
