"""The UI's pages that read: facts and slots, one fact and its history, search, the context
preview, the changes of the whole file. Each takes the Store, the query's parameters and the
page's ``View`` (may it offer changes, the form token) and returns (title, body)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..agents.context import DEFAULT_BUDGET_TOKENS, DEFAULT_SLOTS, build
from ..errors import InvalidInput
from ..store.reads import LIST_ORDERS
from .html import e, field, marks, notice, select, url, when

PAGE_SIZE = 50
VALUE_CHARS = 240  # of a value in a table; the fact's page shows it whole


@dataclass(frozen=True)
class View:
    writable: bool  # changes offered (--write, and the file is not read-only)
    token: str  # carried by every form that changes something


def post_form(view: View, action: str, fields: dict, label: str, *, css: str = "inline") -> str:
    """A button that changes the memory: a POST of ``action`` with the form token."""
    hidden = "".join(
        f'<input type="hidden" name="{e(k)}" value="{e(v)}">' for k, v in fields.items()
    )
    return (
        f'<form class="{css}" method="post" action="/act">'
        f'<input type="hidden" name="token" value="{e(view.token)}">'
        f'<input type="hidden" name="action" value="{e(action)}">{hidden}'
        f'<button type="submit">{e(label)}</button></form>'
    )


def short(value: str) -> str:
    return value if len(value) <= VALUE_CHARS else value[: VALUE_CHARS - 1] + "…"


def fact_link(slot: str, key: str) -> str:
    return f'<a href="{e(url("/fact", slot=slot, key=key))}">{e(slot)}/{e(key)}</a>'


def number(params: dict, name: str, default: int, low: int, high: int) -> int:
    text = params.get(name) or ""
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise InvalidInput(f"{name} must be a whole number, not {text!r}") from None
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be from {low} to {high}, not {value}")
    return value


# -- facts and slots ----------------------------------------------------------------------------
def listing(params: dict) -> dict:
    """The Store.list_facts arguments of a listing's query: slot, source, order, since, until,
    pinned, offset (checked here or by the Store)."""
    order = params.get("order") or "created"
    if order not in LIST_ORDERS:
        raise InvalidInput(f"order must be one of {', '.join(LIST_ORDERS)}, not {order!r}")
    return {
        "slot": params.get("slot") or None,
        "source": (params.get("source") or "").strip() or None,
        "order": order,
        "since": params.get("since") or None,
        "until": params.get("until") or None,
        "pinned": params.get("pinned") == "1",
        "offset": number(params, "offset", 0, 0, 10**9),
    }


def facts(store, params: dict, view: View) -> tuple[str, str]:
    now = store.clock()
    slots = store.slots()
    policies = {p.slot: p for p in store.policies()}
    asked = listing(params)
    slot, source, order = asked["slot"], asked["source"] or "", asked["order"]
    since, until, pinned, offset = asked["since"], asked["until"], asked["pinned"], asked["offset"]
    found = store.list_facts(limit=PAGE_SIZE + 1, **asked)
    shown, more = found[:PAGE_SIZE], len(found) > PAGE_SIZE

    rows = "".join(
        f'<tr><th scope="row"><a href="{e(url("/", slot=name))}">{e(name)}</a></th>'
        f'<td class="num">{count}</td>{_policy(policies.get(name))}</tr>'
        for name, count in slots.items()
    )
    slot_table = (
        '<table aria-label="Slots"><thead><tr><th scope="col">Slot</th><th scope="col">Facts</th>'
        '<th scope="col">Cap</th><th scope="col">Kept at least (days)</th>'
        '<th scope="col">Relevance floor</th><th scope="col">Description</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        if slots
        else "<p>This memory holds no facts yet.</p>"
    )
    orders = [  # newest first: at once on any size (the others sort the whole slot)
        ("created", "Newest"),
        ("updated", "Last updated"),
        ("accessed", "Last used"),
        ("used", "Most used"),
        ("key", "Slot and key"),
        ("pinned", "Pinned first"),
    ]
    filters = (
        '<form class="filters" method="get" action="/" aria-label="Filter facts">'
        + select("slot", "Slot", [("", "All slots"), *((s, s) for s in slots)], slot or "")
        + field("source", "Source contains", source)
        + field("since", "Updated since", since or "", extra=' placeholder="2026-01-01 or 7d"')
        + field("until", "Updated until", until or "", extra=' placeholder="2026-02-01"')
        + select("order", "Sort by", orders, order)
        + '<label><span>Pinned only</span><input type="checkbox" name="pinned" value="1"'
        + (" checked" if pinned else "")
        + '></label><button type="submit">Show</button></form>'
    )
    body_rows = "".join(_fact_row(fact, now) for fact in shown)
    table = (
        '<table aria-label="Facts"><thead><tr><th scope="col">Fact</th><th scope="col">Value</th>'
        '<th scope="col">Confidence</th><th scope="col">Quality</th>'
        '<th scope="col">Accesses</th><th scope="col">Last used</th>'
        '<th scope="col">Updated</th><th scope="col">Source</th><th scope="col">Marks</th>'
        f"</tr></thead><tbody>{body_rows}</tbody></table>"
        if shown
        else "<p>No fact matches these filters.</p>"
    )
    keep = {"slot": slot, "source": source, "order": order, "since": since, "until": until}
    pager = ""
    if offset:
        back = url("/", **keep, pinned=pinned and "1", offset=max(0, offset - PAGE_SIZE) or None)
        pager += f'<a href="{e(back)}">Previous page</a> '
    if more:
        pager += f'<a href="{e(url("/", **keep, pinned=pinned and "1", offset=offset + PAGE_SIZE))}">Next page</a>'
    shown_text = f"facts {offset + 1}–{offset + len(shown)}" if shown else "no facts"
    return "Memory", (
        f"<h2>Slots</h2>{slot_table}<h2>Facts</h2>{filters}"
        f'<p class="muted">Showing {shown_text}.</p>{table}<p>{pager}</p>'
    )


def _policy(policy) -> str:
    if policy is None:
        return '<td class="muted" colspan="4">default policy</td>'
    floor = "default" if policy.min_relevance is None else f"{policy.min_relevance:.2f}"
    return (
        f'<td class="num">{policy.cap}</td><td class="num">{policy.min_age_days:g}</td>'
        f'<td class="num">{e(floor)}</td><td>{e(policy.description or "")}</td>'
    )


def _fact_row(fact, now: int) -> str:
    return (
        f"<tr><td>{fact_link(fact.slot, fact.key)}</td><td>{e(short(fact.value))}</td>"
        f'<td class="num">{fact.confidence:.2f}</td><td class="num">{fact.quality}</td>'
        f'<td class="num">{fact.access_count}</td><td>{when(fact.last_accessed, now)}</td>'
        f"<td>{when(fact.updated_at, now)}</td><td>{e(fact.source or '')}</td>"
        f"<td>{marks(fact, now)}</td></tr>"
    )


# -- one fact -----------------------------------------------------------------------------------
def fact(store, params: dict, view: View) -> tuple[str, str]:
    slot, key = params.get("slot") or "", params.get("key") or ""
    if not slot or not key:
        raise InvalidInput("a fact's page needs its slot and key: /fact?slot=user&key=name")
    now = store.clock()
    current = store.get(slot, key)
    history = store.history(slot, key)
    if current is None and not history:
        raise InvalidInput(f"no fact {slot}/{key}, and no history of one")
    ident = {"slot": slot, "key": key}
    parts = []
    if current is None:
        parts.append("<p>This fact is not in the memory now; its old values are below.</p>")
    else:
        rows = [
            ("Value", f'<span id="value">{e(current.value)}</span>'),
            ("Confidence", f"{current.confidence:.2f}"),
            ("Quality (mean rating)", str(current.quality)),
            ("Accesses", str(current.access_count)),
            ("Last used", when(current.last_accessed, now)),
            ("Updated", when(current.updated_at, now)),
            ("Created", when(current.created_at, now)),
            ("Source", e(current.source or "")),
            ("Expires", when(current.expires_at, now) if current.expires_at else "never"),
            ("Marks", marks(current, now) or '<span class="muted">none</span>'),
        ]
        parts.append(
            '<dl class="fact">'
            + "".join(f"<dt>{name}</dt><dd>{html}</dd>" for name, html in rows)
            + "</dl>"
        )
        if view.writable:
            parts.append(_controls(view, current, ident))
    if history:
        parts.append("<h2>History</h2>" + _timeline(store, history, view, ident, now))
    return f"{slot}/{key}", "".join(parts)


def _controls(view: View, current, ident: dict) -> str:
    pin = ("unpin", "Unpin") if current.pinned else ("pin", "Pin")
    protect = ("unprotect", "Unprotect") if current.protected else ("protect", "Protect")
    edit = (
        f'<form class="stack" method="post" action="/act" aria-label="Edit the value">'
        f'<input type="hidden" name="token" value="{e(view.token)}">'
        '<input type="hidden" name="action" value="edit">'
        + "".join(f'<input type="hidden" name="{k}" value="{e(v)}">' for k, v in ident.items())
        + f'<label>New value <textarea name="value" rows="3" cols="70" required>{e(current.value)}'
        "</textarea></label>"
        + field(
            "confidence",
            "Confidence (0 to 1)",
            f"{current.confidence:g}",
            "number",
            ' min="0" max="1" step="0.05"',
        )
        + '<button type="submit">Save</button></form>'
    )
    rate = (
        '<form class="filters" method="post" action="/act" aria-label="Rate this fact">'
        f'<input type="hidden" name="token" value="{e(view.token)}">'
        '<input type="hidden" name="action" value="rate">'
        + "".join(f'<input type="hidden" name="{k}" value="{e(v)}">' for k, v in ident.items())
        + select("rating", "Rating", [(str(r), f"{r:+d}") for r in range(3, -4, -1)], "1")
        + field("comment", "Comment (optional)")
        + '<button type="submit">Rate</button></form>'
    )
    forget = f'<a href="{e(url("/forget", **ident))}">Forget this fact…</a>'
    return (
        "<h2>Correct</h2>"
        + edit
        + "<p>"
        + post_form(view, pin[0], ident, pin[1])
        + " "
        + post_form(view, protect[0], ident, protect[1])
        + "</p>"
        + rate
        + f"<p>{forget}</p>"
    )


def _timeline(store, history, view: View, ident: dict, now: int) -> str:
    rows = "".join(
        f'<tr><td class="num">{h.version}</td><td>{e(short(h.value))}</td>'
        f"<td>{e(h.reason)}</td><td>{when(h.changed_at, now)}</td><td>{e(h.changed_by or '')}</td>"
        f"<td>{e(h.source or '')}</td><td>"
        + (
            post_form(
                view, "restore", {**ident, "version": h.version}, f"Restore version {h.version}"
            )
            if view.writable
            else ""
        )
        + "</td></tr>"
        for h in history
    )
    return (
        '<table aria-label="History"><thead><tr><th scope="col">Version</th>'
        '<th scope="col">Old value</th><th scope="col">Replaced by</th><th scope="col">When</th>'
        '<th scope="col">By</th><th scope="col">Source</th><th scope="col"></th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def forget(store, params: dict, view: View) -> tuple[str, str]:
    slot, key = params.get("slot") or "", params.get("key") or ""
    current = store.get(slot, key) if slot and key else None
    if current is None:
        raise InvalidInput(f"no fact {slot}/{key} to forget")
    if not view.writable:
        raise InvalidInput("this memory is open read-only: start slotmem ui with --write")
    return f"Forget {slot}/{key}?", (
        f"<p>The value <q>{e(current.value)}</q> leaves the memory; it stays in the fact's "
        "history, from where it can be restored.</p>"
        + post_form(view, "forget", {"slot": slot, "key": key, "confirm": "yes"}, "Yes, forget it")
        + f' <a href="{e(url("/fact", slot=slot, key=key))}">No, keep it</a>'
    )


# -- search and context --------------------------------------------------------------------------
def search(store, params: dict, view: View) -> tuple[str, str]:
    text = (params.get("q") or "").strip()
    slot = params.get("slot") or None
    lexical = params.get("lexical") == "1"
    slots = store.slots()
    form = (
        '<form class="filters" method="get" action="/search" role="search">'
        + field("q", "Search for", text, "search")
        + select("slot", "Slot", [("", "All slots"), *((s, s) for s in slots)], slot or "")
        + '<label><span>Lexical only</span><input type="checkbox" name="lexical" value="1"'
        + (" checked" if lexical else "")
        + '></label><button type="submit">Search</button></form>'
        f'<p class="muted">Semantic search: {e(store.semantic.off_reason() or "on")}. '
        "Searching here is not counted as an access.</p>"
    )
    if not text:
        return "Search", form
    now = store.clock()
    hits = store.query_facts(
        text, slots=slot, limit=20, explain=True, track_access=False, semantic=not lexical
    )
    rows = "".join(
        f'<tr><td class="num">{rank}</td><td>{fact_link(h.fact.slot, h.fact.key)}</td>'
        f"<td>{e(short(h.fact.value))}</td>"
        f'<td class="num">{h.relevance:.0%}</td><td class="num">{h.score:.3f}</td>'
        f"<td><code>{e(_explained(h.explanation))}</code></td>"
        f"<td>{when(h.fact.updated_at, now)}</td><td>{marks(h.fact, now)}</td></tr>"
        for rank, h in enumerate(hits, 1)
    )
    result = (
        '<table aria-label="Search results"><thead><tr><th scope="col">Rank</th>'
        '<th scope="col">Fact</th><th scope="col">Value</th><th scope="col">Relevance</th>'
        '<th scope="col">Score</th><th scope="col">Why</th><th scope="col">Updated</th>'
        f'<th scope="col">Marks</th></tr></thead><tbody>{rows}</tbody></table>'
        if hits
        else f"<p>Nothing found for <q>{e(text)}</q>.</p>"
    )
    return "Search", form + result


def _explained(explanation: dict | None) -> str:
    if not explanation:
        return ""
    return ", ".join(
        f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={json.dumps(v, default=str)}"
        for k, v in explanation.items()
    )


def context(store, params: dict, view: View) -> tuple[str, str]:
    message = (params.get("message") or "").strip()
    existing = list(store.slots())
    chosen = [s for s in (params.get("slots") or "").split(",") if s.strip()] or list(DEFAULT_SLOTS)
    budget = number(params, "budget", DEFAULT_BUDGET_TOKENS, 1, 1_000_000)
    form = (
        '<form class="filters" method="get" action="/context" aria-label="Preview a context">'
        f'<label>Message <textarea name="message" rows="2" cols="60">{e(message)}</textarea>'
        "</label>"
        + field("slots", "Slots, in priority order", ",".join(chosen))
        + field("budget", "Budget (tokens)", str(budget), "number", ' min="1"')
        + '<button type="submit">Preview</button></form>'
        f'<p class="muted">Slots in this memory: {e(", ".join(existing) or "none")}. '
        "A preview is not counted as an access.</p>"
    )
    if not message:
        return "Context preview", form
    built = build(store, message, chosen, budget_tokens=budget, explain=True, track_access=False)
    text = built.text or "(empty: nothing relevant and nothing pinned: the prompt gets nothing)"
    rows_in = "".join(
        f"<tr><td>{fact_link(i.slot, i.key)}</td><td>{_relevance(i)}</td>"
        f'<td class="num">{i.tokens}</td></tr>'
        for i in built.facts()
    )
    rows_out = "".join(
        f"<tr><td>{fact_link(i.slot, i.key)}</td><td>{_relevance(i)}</td>"
        f"<td>{e(i.reason or '')}</td></tr>"
        for i in built.cut
    )
    return "Context preview", (
        form
        + f"<h2>What the prompt gets ({built.tokens} of {built.budget_tokens} tokens)</h2>"
        + f'<pre class="context" id="context-text">{e(text)}</pre>'
        + '<h2>In the context</h2><table aria-label="In the context"><thead><tr>'
        '<th scope="col">Fact</th><th scope="col">Why in</th><th scope="col">Tokens</th></tr>'
        f"</thead><tbody>{rows_in}</tbody></table>"
        + '<h2>Left out</h2><table aria-label="Left out"><thead><tr><th scope="col">Fact</th>'
        '<th scope="col">Relevance</th><th scope="col">Why out</th></tr></thead>'
        f"<tbody>{rows_out}</tbody></table>"
    )


def _relevance(item) -> str:
    if item.relevance is None:
        return "pinned"
    return f"relevance {item.relevance:.0%}"


# -- the whole file's changes, and undoing a flush ----------------------------------------------
def changes(store, params: dict, view: View) -> tuple[str, str]:
    now = store.clock()
    recent = store.history(limit=100)
    rows = "".join(
        f"<tr><td>{fact_link(h.slot, h.key)}</td><td>{e(short(h.value))}</td>"
        f"<td>{e(h.reason)}</td><td>{when(h.changed_at, now)}</td>"
        f"<td>{e(h.source or '')}</td></tr>"
        for h in recent
    )
    table = (
        '<table aria-label="Recent changes"><thead><tr><th scope="col">Fact</th>'
        '<th scope="col">Old value</th><th scope="col">Replaced by</th><th scope="col">When</th>'
        f'<th scope="col">Source</th></tr></thead><tbody>{rows}</tbody></table>'
        if recent
        else "<p>No change yet: nothing was overwritten or removed.</p>"
    )
    undo = ""
    if view.writable:
        undo = (
            "<h2>Undo a flush</h2>"
            '<form class="filters" method="get" action="/undo" aria-label="Undo a flush">'
            + field("source", "Transcript name or flush source")
            + '<button type="submit">See what it would change</button></form>'
        )
    return "Changes", undo + "<h2>Recent changes (old values)</h2>" + table


def undo(store, params: dict, view: View) -> tuple[str, str]:
    source = (params.get("source") or "").strip()
    if not view.writable:
        raise InvalidInput("this memory is open read-only: start slotmem ui with --write")
    if not source:
        raise InvalidInput("give the transcript name or flush source to undo")
    plan = store.undo_flush(source, dry_run=True)
    if not plan.changes:
        return "Undo a flush", notice(f"No fact written by a flush of {source!r}.", error=True)
    rows = "".join(
        f"<tr><td>{e(c.action)}</td><td>{fact_link(c.slot, c.key)}</td>"
        f"<td>{e(c.old_value or '')}</td><td>{e(c.value or '(gone)')}</td>"
        f"<td>{e(c.note or '')}</td></tr>"
        for c in plan.changes
    )
    return f"Undo the flush of {source}?", (
        '<table aria-label="What the undo would change"><thead><tr><th scope="col">Action</th>'
        '<th scope="col">Fact</th><th scope="col">Now</th><th scope="col">After</th>'
        f'<th scope="col">Note</th></tr></thead><tbody>{rows}</tbody></table>'
        + post_form(view, "undo_flush", {"source": source, "confirm": "yes"}, "Yes, undo it")
        + ' <a href="/history">No, leave it</a>'
    )
