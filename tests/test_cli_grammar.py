"""One grammar on the command line: every command that names a fact takes SLOT/KEY and SLOT KEY
(walked from the command list, so a new command is covered), keys match in any spelling,
-n is N or 'all' everywhere, one output format at a time, tables fit the terminal or --width,
every write has --json, and messages go to standard error."""

import json
import re
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from slotmem import Store
from slotmem.cli import cli, grammar, output
from slotmem.storage import db

ROOT = Path(__file__).resolve().parent.parent
# A sample for each argument a fact command takes after the fact (by its metavar): a new one
# fails test_every_fact_command_takes_both_forms until it has a sample here.
SAMPLES = {
    "VALUE": "Lisbon",
    "RATING": "2",
    "TAG[,TAG...]": "work,home",
    "REL": "same_as",
    "TO": "user/home_city",
}
# The arguments a command with -n needs to run.
NEEDS = {
    "search": ["paris"],
    "context": ["paris"],
    "episodes search": ["paris"],
    "history": ["--all"],
}
# Every command that writes: each has --json, a JSON object of what was done.
WRITES = [
    "remember",
    "forget",
    "rate",
    "pin",
    "unpin",
    "protect",
    "unprotect",
    "tag",
    "untag",
    "link",
    "unlink",
    "restore",
    "policy",
    "prune",
    "dedupe",
    "import",
    "undo-flush",
    "flush",
    "import-from",
    "backup",
    "migrate",
    "reindex",
    "restore-from",
    "episodes record",
    "retrievals prune",
]


def commands(group=cli, prefix=()):
    """(path, command) for every command, subcommands of groups included."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


ALL = dict(commands())
FACT_COMMANDS = {
    path: command
    for path, command in ALL.items()
    if hasattr(command.callback, "fact_words")  # the shared argument: grammar.fact_argument
}


def test_every_command_that_names_a_fact_uses_the_one_grammar():
    named = (
        "remember get forget rate history pin unpin protect unprotect restore tag untag link "
        "unlink links"
    )
    assert {" ".join(path) for path in FACT_COMMANDS} >= set(named.split(" "))
    for path, command in ALL.items():
        if path in FACT_COMMANDS:
            continue
        for param in command.params:  # no command names a fact its own way
            if isinstance(param, click.Argument):
                shown = (param.metavar or param.name or "").upper()
                assert "KEY" not in shown and param.name != "fact", (path, param.name)


@pytest.fixture
def memory(tmp_path):
    """A file with user/Home_City (spelled so) overwritten twice: versions 1 and 2 in history."""
    path = tmp_path / "m.db"
    with Store(path, create=True) as store:
        for city in ("Paris", "Berlin", "Oslo"):
            store.upsert("user", "Home_City", city, source="cli")
    return path


def invoke(*args, path):
    return CliRunner().invoke(cli, [*args, "-d", str(path)], catch_exceptions=False)


@pytest.mark.parametrize("path", sorted(FACT_COMMANDS), ids=" ".join)
@pytest.mark.parametrize(
    "words", [["user/home_city"], ["user", "home_city"], ["user", "HOME_CITY"], ["user/Home_City"]]
)
def test_every_fact_command_takes_both_forms(path, words, memory, tmp_path):
    """The same effect and output for SLOT/KEY and SLOT KEY, in any spelling of the key."""
    rest = [SAMPLES[metavar] for _, metavar, _ in FACT_COMMANDS[path].callback.fact_words.then]
    expected = invoke(*path, "user/Home_City", *rest, path=memory)
    assert expected.exit_code == 0, expected.output
    copy = tmp_path / "copy.db"
    with Store(copy, create=True) as store:
        for city in ("Paris", "Berlin", "Oslo"):
            store.upsert("user", "Home_City", city, source="cli")
    result = invoke(*path, *words, *rest, path=copy)
    assert result.exit_code == 0, result.output

    def same(text):  # times and ids differ between the two files
        return re.sub(r"[0-9a-f]{16}|\d", "0", text)

    assert same(result.stdout) == same(expected.stdout)
    with Store(memory) as one, Store(copy) as other:
        assert [(f.key, f.value, f.quality) for f in one.list_facts()] == [
            (f.key, f.value, f.quality) for f in other.list_facts()
        ]


@pytest.mark.parametrize("path", sorted(FACT_COMMANDS), ids=" ".join)
@pytest.mark.parametrize(
    "words, message",
    [
        (["user/"], "'user/' has no key"),
        (["/home_city"], "'/home_city' has no slot"),
        (["user/home_city", "extra"], "not 'user/home_city extra'"),
        (["user", "home", "city"], "quote a key that holds spaces"),
        (["user"], "SLOT/KEY"),
    ],
)
def test_a_malformed_fact_is_one_line_naming_both_forms(path, words, message, memory):
    rest = [SAMPLES[metavar] for _, metavar, _ in FACT_COMMANDS[path].callback.fact_words.then]
    before = Store(memory).list_facts()
    result = invoke(*path, *words, *rest, path=memory)
    assert result.exit_code == 2, result.output
    [error] = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert "SLOT/KEY" in error and "SLOT KEY" in error, error
    if not (len(words) == 1 and "/" not in words[0]):  # `user` alone: SLOT/KEY is missing
        assert message in error
    assert Store(memory).list_facts() == before  # nothing changed


def test_a_key_keeps_every_slash_after_the_first():
    assert grammar.split(["user/notes/q3"]) == ("user", "notes/q3")
    assert grammar.split(["user", "notes/q3"]) == ("user", "notes/q3")
    assert grammar.split(["user", "/etc"]) == ("user", "/etc")
    with pytest.raises(click.UsageError, match="SLOT/KEY or SLOT KEY"):
        grammar.split(["user/notes", "q3"])


@pytest.mark.parametrize("path", sorted(FACT_COMMANDS), ids=" ".join)
def test_every_help_shows_the_grammar_and_only_forms_it_takes(path):
    """Each fact command's help has the one grammar paragraph, and every example of a fact
    command in any help parses."""
    command = FACT_COMMANDS[path]
    help_text = CliRunner().invoke(cli, [*path, "--help"], terminal_width=200).output
    assert f"{' '.join(path)} [OPTIONS] " in help_text and "SLOT/KEY" in help_text
    assert " ".join(grammar.FACT_HELP.split()) in " ".join(help_text.split())
    assert command.params[0].name == "words"


def _examples():
    """`slotmem COMMAND ...` lines of fact commands in every help and in the docs."""
    texts = [command.help or "" for command in ALL.values()]
    texts += [
        page.read_text() for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    ]
    names = {" ".join(path) for path in FACT_COMMANDS}
    for text in texts:
        for match in re.finditer(r"slotmem ((?:[a-z-]+ )?[a-z-]+)( [^\n`#|;]*)", text):
            words = match.group(1).split()
            name = next((n for n in (" ".join(words), words[0]) if n in names), None)
            if name and not match.group(2).strip().startswith(("-", "SLOT", "[")):
                rest = match.group(2) if name == " ".join(words) else f" {words[1]}{match.group(2)}"
                yield name, rest.strip()


@pytest.mark.parametrize("name, rest", sorted(set(_examples())))
def test_every_example_in_helps_and_docs_parses(name, rest):
    command = FACT_COMMANDS[tuple(name.split())]
    try:
        args = shlex.split(rest)
    except ValueError:
        pytest.skip("an example cut mid-quote by the line")
    ctx = command.make_context(name, [a for a in args if a != "\\"], resilient_parsing=False)
    command.callback.fact_words.parse(ctx.params["words"], ctx)


def test_history_and_restore_find_a_key_in_any_spelling(tmp_path):
    path = tmp_path / "m.db"
    with Store(path, create=True) as store:
        store.upsert("user", "Timezone", "Europe/Stockholm")
        store.upsert("user", "timezone", "Europe/Oslo")  # the same fact: Timezone
        store.delete("user", "TIMEZONE")
    rows = json.loads(invoke("history", "user/timezone", "--json", path=path).stdout)
    assert [row["value"] for row in rows] == ["Europe/Oslo", "Europe/Stockholm"]
    restored = invoke("restore", "user", "ｔｉｍｅｚｏｎｅ", "--version", "1", path=path)
    assert restored.stdout == "restored: user/Timezone: Europe/Stockholm\n", restored.output
    assert invoke("get", "user/TimeZone", path=path).stdout == "Europe/Stockholm\n"
    assert invoke("forget", "user", "TIMEZONE", path=path).stdout == "forgot: user/Timezone\n"


def test_a_negative_rating_needs_no_double_dash(memory):
    result = invoke("rate", "user", "home_city", "-2", path=memory)
    assert result.exit_code == 0 and "quality is now -2" in result.stdout
    assert (
        "No such option '--nope'"
        in invoke("rate", "user/home_city", "--nope", "1", path=memory).output
    )
    assert "RATING is missing" in invoke("rate", "user", "home_city", path=memory).output


# -- -n ------------------------------------------------------------------------------------
LIMITED = {path: c for path, c in ALL.items() if any(p.name == "limit" for p in c.params)}


def test_the_commands_with_a_limit():
    assert {" ".join(p) for p in LIMITED} == {
        "list", "history", "search", "context", "episodes list", "episodes search",
        "retrievals list",
    }  # fmt: skip


@pytest.mark.parametrize("path", sorted(LIMITED), ids=" ".join)
def test_n_is_a_number_or_all_everywhere(path, memory):
    option = next(p for p in LIMITED[path].params if p.name == "limit")
    assert isinstance(option.type, grammar.Limit) and option.opts == ["-n", "--limit"]
    needs = NEEDS.get(" ".join(path), [])
    for zero in ("0", "-1"):
        result = invoke(*path, *needs, "-n", zero, path=memory)
        assert result.exit_code == 2 and "give a number of at least 1, or 'all'" in result.output
    assert invoke(*path, *needs, "-n", "all", path=memory).exit_code == 0
    assert invoke(*path, *needs, "-n", "1", path=memory).exit_code == 0


def test_n_all_lists_and_finds_everything(tmp_path):
    path = tmp_path / "m.db"
    with Store(path, create=True) as store:
        for i in range(60):
            store.upsert("user", f"k{i}", f"paris fact {i}")
    assert len(json.loads(invoke("list", "--json", path=path).stdout)) == 50  # the default
    assert len(json.loads(invoke("list", "-n", "all", "--json", path=path).stdout)) == 60
    found = json.loads(invoke("search", "paris", "-n", "all", "--json", path=path).stdout)
    assert len(found) == 60


# -- output formats --------------------------------------------------------------------------
FORMATTED = {path: c for path, c in ALL.items() if {"csv", "nl"} <= {p.name for p in c.params}}


@pytest.mark.parametrize("path", sorted(FORMATTED), ids=" ".join)
@pytest.mark.parametrize("flags", [("--json", "--csv"), ("--nl", "--json"), ("--csv", "--nl")])
def test_two_output_formats_are_a_usage_error(path, flags, memory):
    result = invoke(*path, *flags, path=memory)
    assert result.exit_code == 2
    assert f"Error: {flags[0]} and {flags[1]}: give one output format" in result.output


def test_one_format_flag_given_twice_is_fine(memory):
    assert json.loads(invoke("list", "--json", "--json", path=memory).stdout)[0]["key"]


# -- tables ----------------------------------------------------------------------------------
LONG = "A value that goes on " + "and on " * 20 + "to the end."


@pytest.fixture
def long_fact(tmp_path):
    path = tmp_path / "m.db"
    with Store(path, create=True) as store:
        store.upsert("user", "story", LONG)
    return path


def test_a_table_has_whole_values_when_not_a_terminal(long_fact):
    assert LONG in invoke("list", path=long_fact).stdout
    assert LONG in invoke("list", "--width", "0", path=long_fact).stdout


def test_a_table_fits_width(long_fact):
    out = invoke("list", "--width", "80", path=long_fact).stdout
    assert max(len(line) for line in out.splitlines()) <= 80
    assert LONG not in out and "A value that goes" in out and "…" in out


def test_a_table_fits_the_terminal(long_fact, monkeypatch):
    monkeypatch.setattr(output, "_is_terminal", lambda: True)
    for columns in (70, 150):
        monkeypatch.setenv("COLUMNS", str(columns))
        out = invoke("list", path=long_fact).stdout
        assert max(len(line) for line in out.splitlines()) <= columns
        assert max(len(line) for line in out.splitlines()) > columns - 10  # not cut at 60
    monkeypatch.setenv("COLUMNS", "400")
    assert LONG in invoke("list", path=long_fact).stdout


# -- --json on writes ------------------------------------------------------------------------
def test_every_write_command_has_json():
    for name in WRITES:
        command = ALL[tuple(name.split())]
        assert "--json" in {opt for p in command.params for opt in p.opts}, name


@pytest.mark.parametrize(
    "args, action",
    [
        (["remember", "user/home_city", "Rome"], "updated"),
        (["remember", "user", "pet", "a cat"], "created"),
        (["forget", "user/home_city"], "forgotten"),
        (["rate", "user", "home_city", "1"], "rated"),
        (["pin", "user/home_city"], "pinned"),
        (["unpin", "user/home_city"], "unpinned"),
        (["protect", "user/home_city"], "protected"),
        (["unprotect", "user/home_city"], "unprotected"),
        (["restore", "user/home_city", "--version", "1"], "restored"),
        (["policy", "user", "--cap", "5"], "set"),
        (["migrate"], "migrated"),
        (["retrievals", "prune", "--before", "1d"], "pruned"),
    ],
)
def test_a_write_says_what_it_did_in_json(args, action, memory):
    result = invoke(*args, "--json", path=memory)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, dict) and data["action"] == action
    if "fact" in data:
        assert data["fact"]["slot"] == "user" and data["fact"]["updated_at"].endswith("+00:00")


def test_backup_json(memory, tmp_path):
    data = json.loads(invoke("backup", str(tmp_path / "copy.db"), "--json", path=memory).stdout)
    assert data["action"] == "backed up" and data["facts"] == 1


# -- messages on standard error ---------------------------------------------------------------
def test_messages_go_to_stderr(memory, tmp_path):
    context = invoke("context", "the weather on Mars", path=memory)
    assert context.stdout == "" and context.stderr == "(no relevant facts)\n"
    empty = invoke("list", "nothing", path=memory)
    assert empty.stdout == "" and empty.stderr == "(none)\n"
    dry = invoke("dedupe", "--dry-run", path=memory)
    assert dry.stdout == "" and "no near-duplicate pairs" in dry.stderr


def test_stats_on_a_base_install_says_what_to_install(memory, monkeypatch):
    if Store(memory).semantic.vec_error() is None:  # where reindex can run, it is the advice
        assert "run 'slotmem reindex'" in invoke("stats", path=memory).stdout
    monkeypatch.setattr(
        db,
        "load_sqlite_vec",
        lambda conn: "sqlite-vec is not installed: pip install 'slotmem[semantic]'",
    )
    out = invoke("stats", path=memory).stdout
    [line] = [line for line in out.splitlines() if line.startswith("semantic:")]
    assert "reindex" not in line and "pip install 'slotmem[semantic]'" in line
    assert "reindex" not in json.loads(invoke("stats", "--json", path=memory).stdout)["semantic"]
