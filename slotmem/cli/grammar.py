"""How a command names a fact, and how many rows it shows: one parser for every command.

A fact is ``SLOT/KEY`` or ``SLOT KEY``. A slot never holds '/' (validation.SLOT_RE), so
``SLOT/KEY`` splits at the first '/' and the key keeps the rest: ``user/notes/q3`` is key
``notes/q3`` of slot ``user``. Keys are matched as the Store matches them (validation.key_form:
``user/Timezone`` is the fact ``user/timezone``). ``-n/--limit`` is a number of at least 1, or
``all``, on every command that has it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence

import click

from .. import validation
from ..errors import InvalidInput

FACT_METAVAR = "SLOT/KEY"
FACT_HELP = (
    "The fact is SLOT/KEY or SLOT KEY: user/timezone, or user timezone. The key may hold '/' "
    "(user/notes/q3 is key notes/q3 of slot user) and is matched in any case, as the memory "
    "matches keys."
)
FORMS = "give the fact as SLOT/KEY or SLOT KEY (user/timezone, or user timezone)"


def split(words: Sequence[str], *, slot_only: bool = False) -> tuple[str | None, str | None]:
    """(slot, key) from the words that name a fact: ``["user/a/b"]`` or ``["user", "a/b"]``.
    With ``slot_only``, ``[]`` and ``["user"]`` (a slot alone) are taken too. Anything else
    is a one-line usage error that names both forms."""
    shown = " ".join(words)
    if slot_only and len(words) <= 1 and "/" not in shown:
        return (words[0] if words else None), None
    if len(words) == 1 and "/" in words[0]:
        slot, _, key = words[0].partition("/")
        if not slot or not key.strip():
            part = "slot" if not slot else "key"
            raise click.UsageError(f"{FORMS}: {shown!r} has no {part}")
        return slot, key
    if len(words) == 2 and "/" not in words[0]:
        return words[0], words[1]
    if not words:
        raise click.UsageError(f"{FORMS}: none given")
    if len(words) > 2:
        raise click.UsageError(f"{FORMS}, not {shown!r}: quote a key that holds spaces")
    raise click.UsageError(f"{FORMS}, not {shown!r}")


def split_one(text: str, what: str) -> tuple[str, str]:
    """SLOT/KEY given as one word (an option's value): (slot, key)."""
    slot, _, key = text.partition("/")
    if not slot or not key.strip():
        raise click.UsageError(
            f"give the fact as SLOT/KEY in {what} (one word: user/timezone), not {text!r}"
        )
    return slot, key


class FactWords:
    """What a command takes after its options: the words that name a fact, then ``then``
    (name, metavar, click type or None) for its other arguments."""

    def __init__(self, then: Sequence[tuple[str, str, click.ParamType | None]], slot_only: bool):
        self.then, self.slot_only = tuple(then), slot_only
        first = f"[{FACT_METAVAR}]" if slot_only else FACT_METAVAR
        self.metavar = " ".join([first, *(metavar for _, metavar, _ in self.then)])

    def parse(self, words: Sequence[str], ctx: click.Context | None = None) -> dict:
        """{"slot": ..., "key": ..., and each of ``then``} from the words typed."""
        count = len(self.then)
        usage = f"give {self.metavar}, or {self.metavar.replace(FACT_METAVAR, 'SLOT KEY')}"
        if len(words) < count + (0 if self.slot_only else 1):
            raise click.UsageError(usage, ctx)
        fact_words, rest = (words[:-count], words[-count:]) if count else (words, ())
        for word in words if ctx is not None and ctx.ignore_unknown_options else ():
            if word.startswith("-") and not _number(word):  # rate's -2 is a word, --x is not
                raise click.NoSuchOption(word, ctx=ctx)
        try:
            slot, key = split(fact_words, slot_only=self.slot_only)
        except click.UsageError as e:
            if count and _names_a_fact(words):  # `rate user k`: the fact, and no RATING
                raise click.UsageError(f"{self.then[-1][1]} is missing: {usage}", ctx) from None
            e.ctx = ctx
            raise
        values = {"slot": slot, "key": key}
        for (name, shown, kind), value in zip(self.then, rest):
            try:
                values[name] = value if kind is None else kind.convert(value, None, ctx)
            except click.BadParameter as e:
                e.param_hint = shown
                raise
        return values


def fact_argument(*then: tuple[str, str, click.ParamType | None], slot_only: bool = False):
    """The shared argument of every command that names a fact: SLOT/KEY or SLOT KEY, then the
    command's other arguments (``then``: name, metavar, click type). The command receives
    ``slot`` and ``key`` (and each name of ``then``), whichever form was typed; its help ends
    with FACT_HELP, so every command shows the same grammar."""
    grammar = FactWords(then, slot_only)

    def decorate(command):
        @functools.wraps(command)
        def run(words, **kwargs):
            return command(**grammar.parse(words, click.get_current_context()), **kwargs)

        run.__doc__ = f"{inspect.cleandoc(command.__doc__ or '')}\n\n{FACT_HELP}"
        run.fact_words = grammar  # type: ignore[attr-defined]
        return click.argument("words", nargs=-1, metavar=grammar.metavar)(run)

    return decorate


def _names_a_fact(words: Sequence[str]) -> bool:
    try:
        split(words)
    except click.UsageError:
        return False
    return True


def _number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def stored_key(store, slot: str, key: str) -> str:
    """The spelling the memory has for slot/key (``Timezone`` for ``timezone``), for the
    commands that read history by exact key: the live fact's key, else a key in the slot's
    history of the same form (validation.key_form), else ``key`` as given."""
    fact = store.get(slot, key)
    if fact is not None:
        return fact.key
    if store.history(slot, key, limit=1):
        return key
    form = validation.key_form(key)
    for entry in store.history(slot):
        if validation.key_form(entry.key) == form:
            return entry.key
    return key


def _tags(ctx, param, values):
    try:
        return validation.tags(values, "--tag")
    except InvalidInput as e:
        raise click.BadParameter(str(e), ctx, param) from None


def tag_option(what: str):
    """``--tag T`` (repeatable), checked as the Store checks tags (validation.tags)."""
    return click.option("--tag", "tags", multiple=True, metavar="TAG", callback=_tags, help=what)


class Limit(click.ParamType):
    """``-n``: a number of at least 1, or ``all`` (None)."""

    name = "N|all"

    def get_metavar(self, *args, **kwargs) -> str:
        return "N|all"

    def convert(self, value, param, ctx):
        if value is None or isinstance(value, int) and value >= 1:
            return value
        text = str(value).strip().lower()
        if text == "all":
            return None
        try:
            number = int(text)
        except ValueError:
            self.fail(f"{value!r} is not a number of at least 1, or 'all'", param, ctx)
        if number < 1:
            self.fail(f"{value} shows nothing: give a number of at least 1, or 'all'", param, ctx)
        return number


def limit_option(default: int | None, what: str = "At most this many"):
    """``-n/--limit N|all``, the same on every command."""
    shown = "all" if default is None else str(default)
    return click.option(
        "-n",
        "--limit",
        type=Limit(),
        default=shown,
        show_default=True,
        help=f"{what}; 'all' for no limit",
    )


def every(store, limit: int | None) -> int:
    """A search's limit: ``limit``, or (for ``-n all``) the number of facts in the file."""
    return limit if limit is not None else max(1, sum(store.slots().values()))


def episode_options(command):
    """``slotmem context``'s options for episodes and the retrieval log (build's keywords)."""
    options = [
        click.option("--episodes", is_flag=True, help="Add the relevant episodes, after the facts"),
        click.option(
            "--episode-budget",
            "episode_tokens",
            type=click.IntRange(min=0),
            help="Tokens for the episodes  [default: 400]",
        ),
        click.option("--record", is_flag=True, help="Record it in the retrieval log"),
        click.option("--session", help="The session to record it under (with --record)"),
        click.option("--run", help="The run to record it under (with --record)"),
    ]
    for option in reversed(options):
        command = option(command)
    return command
