"""Printing rows as a table, JSON, newline-delimited JSON or CSV."""

from __future__ import annotations

import datetime
import io
import json
import sys

import click

from ..records import TIME_FIELDS, with_iso_times


def format_options(command):
    """--json / --nl / --csv, stored as ``fmt``."""
    for flag, value, text in reversed(
        [
            ("--json", "json", "Output a JSON array"),
            ("--nl", "nl", "Output newline-delimited JSON"),
            ("--csv", "csv", "Output CSV with a header row"),
        ]
    ):
        command = click.option(flag, "fmt", flag_value=value, help=text)(command)
    return command


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
            click.echo(json.dumps(row, ensure_ascii=False))
    elif fmt == "csv":
        import csv

        columns = columns or (list(rows[0]) if rows else [])
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows({c: _cell(row.get(c)) for c in columns} for row in rows)
        click.echo(buffer.getvalue(), nl=False)
    else:
        click.echo(table(rows, columns))


def table(rows: list[dict], columns: list[str] | None = None, width: int = 60) -> str:
    if not rows:
        return "(none)"
    columns = columns or list(rows[0])
    cells = [[_short(_cell(row.get(c)), width) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
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
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def when(ms: int | None) -> str:
    """Epoch milliseconds as local time, to the second ('' for none)."""
    if not ms:
        return ""
    return datetime.datetime.fromtimestamp(ms / 1000).isoformat(sep=" ", timespec="seconds")


def fact_rows(facts, fmt) -> list[dict]:
    """Facts (or history entries) as dicts; a table shows their times as local dates."""
    rows = [fact.to_dict() for fact in facts]
    if fmt in (None, "table"):
        for row in rows:
            for name in TIME_FIELDS:
                if name in row:
                    row[name] = when(row[name])
    return rows


def echo_json(data) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def print_doctor(rows: list[dict], as_json: bool = False) -> None:
    """A doctor report, one line per check; exit status 1 when a check failed."""
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        for row in rows:
            mark = {True: "ok ", False: "BAD", None: "-- "}[row["ok"]]
            fix = f"  fix: {row['fix']}" if row["fix"] else ""
            click.echo(f"[{mark}] {row['check']}: {row['detail']}{fix}")
    if any(row["ok"] is False for row in rows):
        sys.exit(1)
