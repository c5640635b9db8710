"""What the UI changes, each through the Store (history, write scan, protection): one function
per action of the POST form, returning where the browser goes next and what to tell it."""

from __future__ import annotations

from ..errors import InvalidInput
from .html import url

CONFIRMED = ("forget", "undo_flush")  # they delete: only from their confirmation page
BY = "ui"  # recorded as the source of what a person writes here


def apply(store, form: dict) -> tuple[str, str]:
    """Carry out ``form['action']``: (the page to show next, what was done)."""
    action = form.get("action") or ""
    if action not in ACTIONS:
        raise InvalidInput(f"unknown action {action!r}")
    if action in CONFIRMED and form.get("confirm") != "yes":
        raise InvalidInput(f"{action.replace('_', ' ')} needs its confirmation")
    if action == "undo_flush":
        return ACTIONS[action](store, None, None, form)
    slot, key = form.get("slot") or "", form.get("key") or ""
    if not slot or not key:
        raise InvalidInput("a change needs the fact's slot and key")
    return ACTIONS[action](store, slot, key, form)


def _edit(store, slot, key, form):
    value = form.get("value")
    if value is None or not value.strip():
        raise InvalidInput("the new value is empty: use Forget to remove a fact")
    text = form.get("confidence") or "1"
    try:
        confidence = float(text)
    except ValueError:
        raise InvalidInput(f"confidence must be a number from 0 to 1, not {text!r}") from None
    current = store.get(slot, key)
    if current is None:
        raise InvalidInput(f"no fact {slot}/{key} to edit")
    result = store.upsert(
        slot,
        key,
        value,
        confidence=confidence,
        source=BY,
        expires_at=current.expires_at,  # an edit keeps the fact's expiry
        protect=current.protected,
    )
    return _back(slot, key), f"{slot}/{key}: {result.action}"


def _mark(method: str, done: str):
    def act(store, slot, key, form):
        getattr(store, method)(slot, key)
        return _back(slot, key), f"{slot}/{key}: {done}"

    return act


def _rate(store, slot, key, form):
    text = form.get("rating") or ""
    try:
        rating = int(text)
    except ValueError:
        raise InvalidInput(f"rating must be a whole number from -3 to 3, not {text!r}") from None
    fact = store.rate(slot, key, rating, (form.get("comment") or "").strip() or None)
    return _back(slot, key), f"{slot}/{key}: rated {rating:+d}, quality now {fact.quality}"


def _restore(store, slot, key, form):
    text = form.get("version") or ""
    try:
        version = int(text)
    except ValueError:
        raise InvalidInput(f"version must be a whole number, not {text!r}") from None
    store.restore(slot, key, version=version, by=BY)
    return _back(slot, key), f"{slot}/{key}: version {version} restored"


def _forget(store, slot, key, form):
    if not store.delete(slot, key, source=BY):
        raise InvalidInput(f"no fact {slot}/{key} to forget")
    return url("/", slot=slot), f"{slot}/{key}: forgotten (its value stays in history)"


def _undo_flush(store, slot, key, form):
    source = (form.get("source") or "").strip()
    report = store.undo_flush(source)
    counts = ", ".join(f"{n} {action}" for action, n in sorted(report.counts().items()))
    return "/history", f"undo of {source}: {counts or 'nothing to undo'}"


def _back(slot: str, key: str) -> str:
    return url("/fact", slot=slot, key=key)


ACTIONS = {
    "edit": _edit,
    "pin": _mark("pin", "pinned"),
    "unpin": _mark("unpin", "unpinned"),
    "protect": _mark("protect", "protected"),
    "unprotect": _mark("unprotect", "unprotected"),
    "rate": _rate,
    "restore": _restore,
    "forget": _forget,
    "undo_flush": _undo_flush,
}
