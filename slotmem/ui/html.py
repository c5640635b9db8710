"""The pieces every page of the UI is made of: escaping, the layout, readable times."""

from __future__ import annotations

import datetime
from html import escape
from urllib.parse import urlencode

from ..records import iso_time

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
header{background:#243b53;color:#fff;padding:.5rem 1rem;display:flex;gap:1.5rem;align-items:center;
flex-wrap:wrap}
header a{color:#fff;margin-right:1rem}header .mode{margin:0;font-size:.85rem;opacity:.9}
main{padding:1rem;max-width:80rem}
table{border-collapse:collapse;width:100%;background:#fff;margin:.5rem 0 1rem}
th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#eef2f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.iso{display:block;color:#555;font-size:.75rem;white-space:nowrap}
.mark{display:inline-block;border-radius:3px;padding:0 .3rem;font-size:.75rem;margin:1px;
background:#e3e8ee}.pinned{background:#fde68a}.protected{background:#bfdbfe}.expiring{background:#fecaca}
form.filters{display:flex;flex-wrap:wrap;gap:.75rem;align-items:end;margin:.5rem 0}
form.filters label,form.stack label{display:flex;flex-direction:column;font-size:.85rem}
form.inline{display:inline}
.notice{padding:.5rem 1rem;border-radius:4px;background:#dcfce7}.error{background:#fee2e2}
pre.context{background:#fff;border:1px solid #ccc;padding:.75rem;white-space:pre-wrap}
button,input,select,textarea{font:inherit}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.muted{color:#555}
dl.fact{display:grid;grid-template-columns:12rem 1fr;gap:.2rem 1rem}dd{margin:0}
form.stack{max-width:44rem;display:flex;flex-direction:column;gap:.4rem;align-items:start}
form.stack textarea{width:100%}
"""


def e(value) -> str:
    """``value`` as HTML text (None: empty)."""
    return "" if value is None else escape(str(value), quote=True)


def url(path: str, **params) -> str:
    """``path`` with the query ``params`` that are not None or empty."""
    kept = {k: v for k, v in params.items() if v not in (None, "", False)}
    return path + ("?" + urlencode(kept, doseq=True) if kept else "")


def ago(ms: int | None, now: int) -> str:
    """How long before (or after) ``now`` the moment ``ms`` is, in words: ``3 d ago``."""
    if ms is None:
        return ""
    seconds = (now - ms) / 1000
    future = seconds < 0
    seconds = abs(seconds)
    for size, unit in ((86_400 * 365, "y"), (86_400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            amount = f"{int(seconds // size)} {unit}"
            break
    else:
        return "just now"
    return f"in {amount}" if future else f"{amount} ago"


def when(ms: int | None, now: int) -> str:
    """A moment as the page shows it: relative, with its ISO time under it."""
    if ms is None:
        return '<span class="muted">never</span>'
    iso = iso_time(ms) or ""
    shown = iso[:16].replace("T", " ") + " UTC"  # to the minute; the whole in the tooltip
    return (
        f'<time datetime="{e(iso)}" title="{e(iso)}">{e(ago(ms, now))}</time>'
        f'<span class="iso">{e(shown)}</span>'
    )


def day(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).date().isoformat()


def marks(fact, now: int) -> str:
    """The pinned, protected and expiring marks of a fact."""
    out = []
    if fact.pinned_at is not None:
        out.append('<span class="mark pinned">pinned</span>')
    if fact.protected_at is not None:
        out.append('<span class="mark protected">protected</span>')
    if fact.expires_at is not None:
        out.append(f'<span class="mark expiring">expires {e(ago(fact.expires_at, now))}</span>')
    return " ".join(out)


def page(title: str, body: str, *, path: str, writable: bool, notice: str = "") -> str:
    mode = "changes allowed" if writable else "read-only"
    nav = "".join(
        f'<a href="{href}">{label}</a>'
        for href, label in (
            ("/", "Facts"),
            ("/search", "Search"),
            ("/context", "Context preview"),
            ("/history", "Changes"),
            ("/map", "Map"),
        )
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)} · slotmem</title><style>{STYLE}</style></head><body>"
        f'<header><nav aria-label="Main">{nav}</nav>'
        f'<p class="mode">{e(path)} · {mode}</p></header>'
        f"<main><h1>{e(title)}</h1>{notice}{body}</main></body></html>"
    )


def notice(text: str, *, error: bool = False) -> str:
    if not text:
        return ""
    role = "alert" if error else "status"
    return f'<p class="notice{" error" if error else ""}" role="{role}">{e(text)}</p>'


def select(name: str, label: str, options, selected) -> str:
    """A labelled <select>; ``options`` are (value, text) pairs."""
    items = "".join(
        f'<option value="{e(v)}"{" selected" if str(v) == str(selected) else ""}>{e(t)}</option>'
        for v, t in options
    )
    return f'<label>{e(label)} <select name="{e(name)}">{items}</select></label>'


def field(name: str, label: str, value="", kind: str = "text", extra: str = "") -> str:
    return f'<label>{e(label)} <input type="{kind}" name="{e(name)}" value="{e(value)}"{extra}></label>'
