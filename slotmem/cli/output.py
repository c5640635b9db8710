"""Printing rows as a table, JSON, newline-delimited JSON or CSV."""

from __future__ import annotations

import datetime
import io
import sys

import click

from ..records import TIME_FIELDS, with_iso_times

FORMATS = {
    "json": "Output a JSON array",
    "nl": "Output newline-delimited JSON",
    "csv": "Output CSV with a header row",
}
WIDTH_KEY = "slotmem.width"  # in click's ctx.meta: --width


def format_options(command=None, *, json_help: str = FORMATS["json"]):
    """--json / --nl / --csv (one of them: two are a usage error), stored as ``fmt``; and
    --width for the table. ``@format_options(json_help=...)`` where --json prints an object."""
    if command is None:
        return lambda command: format_options(command, json_help=json_help)

    def choose(ctx, param, given):
        chosen = ctx.params.setdefault("fmt", None)
        if given:
            if chosen is not None and chosen != param.name:
                raise click.UsageError(f"--{chosen} and --{param.name}: give one output format")
            ctx.params["fmt"] = param.name

    command = width_option(command)
    for value, text in reversed({**FORMATS, "json": json_help}.items()):
        option = click.option(
            f"--{value}", value, is_flag=True, expose_value=False, callback=choose, help=text
        )
        command = option(command)
    return command


def json_option(what: str):
    """A write command's --json: print ``what`` was done as one JSON object."""
    return click.option("--json", "as_json", is_flag=True, help=f"Output {what} as a JSON object")


def width_option(command):
    """--width N: how wide a table may be (values cut to fit; 0: never cut)."""

    def remember(ctx, param, value):
        if value is not None and value < 0:
            raise click.BadParameter(f"{value} is not a number of columns (0: whole values)")
        ctx.meta[WIDTH_KEY] = value

    return click.option(
        "--width",
        type=int,
        metavar="N",
        expose_value=False,
        callback=remember,
        help="Fit a table in N columns, cutting long values (0: never cut them)  "
        "[default: the terminal's width; whole values when not a terminal]",
    )(command)


def table_width() -> int | None:
    """The width a table must fit: --width (0: None, no limit), else the terminal's when
    standard output is one, else None."""
    ctx = click.get_current_context(silent=True)
    given = None if ctx is None else ctx.meta.get(WIDTH_KEY)
    if given is not None:
        return given or None
    if _is_terminal():
        import shutil

        return shutil.get_terminal_size().columns
    return None


def _is_terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def note(text: str) -> None:
    """A message for the person (a note, a hint, "nothing found"): on standard error, so that
    standard output carries only what was asked for."""
    click.echo(text, err=True)


def since_options(what: str):
    """--since / --until, on when facts were updated (or changes made)."""

    def decorate(command):
        command = click.option(
            "--until",
            metavar="WHEN",
            help=f"Only those {what} before WHEN (a day counts whole)",
        )(command)
        return click.option(
            "--since",
            metavar="WHEN",
            help=f"Only those {what} since WHEN: 2026-10-01, '2026-10-01 14:30', or 7d, 2h ago",
        )(command)

    return decorate


def emit(rows: list[dict], fmt: str | None, columns: list[str] | None = None) -> None:
    """Rows in ``fmt``; JSON, newline-delimited JSON and CSV have ISO-8601 times (UTC, to
    the millisecond), a table local times to the second."""
    fmt = fmt or "table"
    if fmt != "table":
        rows = [with_iso_times(row) for row in rows]
    if fmt == "json":
        echo_json(rows)
    elif fmt == "nl":
        for row in rows:
            import json  # here: a context prints none

            click.echo(json.dumps(row, ensure_ascii=False))
    elif fmt == "csv":
        import csv

        columns = columns or (list(rows[0]) if rows else [])
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows({c: _cell(row.get(c)) for c in columns} for row in rows)
        click.echo(buffer.getvalue(), nl=False)
    elif rows:
        click.echo(table(rows, columns))
    else:
        note("(none)")


def table(rows: list[dict], columns: list[str] | None = None, width: int | None = -1) -> str:
    """Rows as aligned columns, one line each, fitted to ``width`` characters (default:
    table_width(); None: whole values) by cutting the widest values."""
    if not rows:
        return "(none)"
    if width == -1:
        width = table_width()
    columns = columns or list(rows[0])
    cells = [[" ".join(_cell(row.get(c)).split()) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    if width is not None:
        widths = _fit(widths, [len(c) for c in columns], width - 2 * (len(columns) - 1))
        cells = [[_short(v, w) for v, w in zip(r, widths)] for r in cells]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        import json  # here: a context prints none

        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _fit(widths: list[int], least: list[int], room: int) -> list[int]:
    """Column widths that fill at most ``room`` characters: the widest cut to one cap, none
    below its header (or 8) or above what it holds."""
    floors = [min(w, max(h, 8)) for w, h in zip(widths, least)]
    if sum(widths) <= room or sum(floors) >= room:
        return widths if sum(widths) <= room else floors
    cap = max(widths)
    while sum(max(f, min(w, cap)) for w, f in zip(widths, floors)) > room:
        cap -= 1
    return [max(f, min(w, cap)) for w, f in zip(widths, floors)]


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def when(ms: int | None) -> str:
    """Epoch milliseconds as local time, to the second ('' for none)."""
    if not ms:
        return ""
    return datetime.datetime.fromtimestamp(ms / 1000).isoformat(sep=" ", timespec="seconds")


def fact_rows(facts, fmt) -> list[dict]:
    """Facts (or history entries) as dicts; a table shows their times as local dates."""
    rows = flat_tags([fact.to_dict() for fact in facts], fmt)
    if fmt in (None, "table"):
        for row in rows:
            for name in TIME_FIELDS:
                if name in row:
                    row[name] = when(row[name])
    return rows


def flat_tags(rows: list[dict], fmt) -> list[dict]:
    """A table or CSV shows a row's tags as one comma-separated cell (JSON keeps the list)."""
    if fmt in (None, "table", "csv"):
        for row in rows:
            if isinstance(row.get("tags"), list):
                row["tags"] = ",".join(row["tags"])
    return rows


def done(action: str, fact, **more) -> dict:
    """What a write command's --json prints: the action, the fact as it is now, and more
    (a fact in ``more`` is printed as a dict with ISO-8601 times)."""
    data: dict = {"action": action, "fact": with_iso_times(fact.to_dict())}
    for name, value in more.items():
        data[name] = with_iso_times(value.to_dict()) if hasattr(value, "to_dict") else value
    return data


def echo_json(data) -> None:
    import json  # here: a context prints none

    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def print_doctor(rows: list[dict], as_json: bool = False) -> None:
    """A doctor report, one line per check; exit status 1 when a check failed."""
    if as_json:
        import json  # here: a context prints none

        click.echo(json.dumps(rows, indent=2))
    else:
        for row in rows:
            mark = {True: "ok ", False: "BAD", None: "-- "}[row["ok"]]
            fix = f"  fix: {row['fix']}" if row["fix"] else ""
            click.echo(f"[{mark}] {row['check']}: {row['detail']}{fix}")
    if any(row["ok"] is False for row in rows):
        sys.exit(1)
