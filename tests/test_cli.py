import datetime
import json

import pytest
from click.testing import CliRunner

from slotmem import Store
from slotmem.cli import cli


@pytest.fixture
def run(db_path):
    runner = CliRunner()

    def invoke(*args, input=None):
        return runner.invoke(cli, [*args, "-d", str(db_path)], input=input, catch_exceptions=False)

    return invoke


def test_remember_get_forget_history(run):
    assert run("remember", "user", "timezone", "Europe/Stockholm", "-c", "0.9").output == (
        "created: user/timezone\n"
    )
    result = run("remember", "user", "timezone", "America/New_York")
    assert result.output == "updated: user/timezone\n  was: Europe/Stockholm\n"
    assert run("get", "user", "timezone").output == "America/New_York\n"
    assert json.loads(run("get", "user", "timezone", "--json").output)["confidence"] == 1.0
    assert run("forget", "user", "timezone").output == "forgot: user/timezone\n"
    missing = run("get", "user", "timezone")
    assert missing.exit_code == 1 and "no fact user/timezone" in missing.output
    rows = json.loads(run("history", "user", "timezone", "--json").output)
    assert [(r["value"], r["reason"]) for r in rows] == [
        ("America/New_York", "delete"),
        ("Europe/Stockholm", "update"),
    ]


def test_remember_reads_stdin(run):
    run("remember", "project", "notes", "-", input="multi\nline\n")
    assert run("get", "project", "notes").output == "multi\nline\n"


def test_bad_input_is_one_clear_line(run, db_path):
    result = run("remember", "Bad Slot", "k", "v")
    assert result.exit_code == 1
    assert result.output.startswith("Error: invalid slot 'Bad Slot'")
    assert len(result.output.strip().splitlines()) == 1
    assert run("remember", "user", "k", "v", "-c", "2").exit_code == 1
    assert Store(db_path, create=True).stats()["facts"] == 0


def test_corrupt_file_is_one_clear_line(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 1000)
    result = CliRunner().invoke(cli, ["list", "-d", str(bad)])
    assert result.exit_code == 1 and "not a SQLite database" in result.output
    assert len(result.output.splitlines()) == 1 and str(bad) in result.output


def test_list_formats(run):
    run("remember", "user", "name", "Maja")
    run("remember", "user", "city", "Malmö, Sweden")
    assert [r["key"] for r in json.loads(run("list", "user", "--json").output)] == ["city", "name"]
    lines = run("list", "--nl").output.splitlines()
    assert {json.loads(line)["key"] for line in lines} == {"name", "city"}
    csv_out = run("list", "user", "--csv", "--order", "key").output.splitlines()
    assert csv_out[0].startswith("id,slot,key,value") and '"Malmö, Sweden"' in csv_out[1]
    table = run("list").output
    assert "Malmö, Sweden" in table and table.splitlines()[0].split()[:3] == [
        "slot",
        "key",
        "value",
    ]


def test_search_explain_and_no_track(run, db_path):
    run("remember", "project", "deploy", "We deploy on Fridays", "-c", "0.5")
    out = run("search", "deploy friday", "--explain", "--no-track").output
    assert "bm25" in out and "confidence" in out and "deploy" in out
    assert Store(db_path, create=True).get("project", "deploy").access_count == 0
    rows = json.loads(run("search", "deploy", "--json", "--explain").output)
    assert rows[0]["explanation"]["confidence"] == 0.5
    assert Store(db_path, create=True).get("project", "deploy").access_count == 1
    assert run("search", '"NOT AND (', "--json").output.strip() == "[]"


def test_prune_and_policy(run, db_path):
    for i in range(4):
        run("remember", "episodic", f"e{i}", f"event {i}")
    out = json.loads(
        run(
            "prune",
            "episodic",
            "--cap",
            "1",
            "--min-age-days",
            "0",
            "--min-access-count",
            "1",
            "--dry-run",
            "--include-protected",  # facts remembered on the command line are protected
            "--json",
        ).output
    )
    assert len(out[0]["removed"]) == 3 and Store(db_path, create=True).slots() == {"episodic": 4}
    run("policy", "episodic", "--cap", "2", "--min-age-days", "0", "--min-access-count", "1")
    policies = {p["slot"]: p for p in json.loads(run("policy", "--json").output)}
    assert policies["episodic"]["cap"] == 2
    reports = {r["slot"]: r for r in json.loads(run("prune", "--json").output)}
    assert reports["episodic"]["removed"] == [] and reports["episodic"]["protected"] == 2
    out = run("prune", "--include-protected", "--json").output
    reports = {r["slot"]: r for r in json.loads(out)}
    assert len(reports["episodic"]["removed"]) == 2
    assert run("prune", "--cap", "3").exit_code == 2


def test_context_rate_stats_path_migrate_doctor(run, db_path):
    run("remember", "user", "editor", "Maja uses Neovim")
    assert "- **editor**: Maja uses Neovim" in run("context", "which editor do I use?").output
    assert "quality is now 2" in run("rate", "user", "editor", "2").output
    stats = json.loads(run("stats", "--json").output)
    assert stats["facts"] == 1 and stats["slots"] == {"user": 1}
    assert run("path").output.strip() == str(db_path)
    assert run("migrate").output.strip() == "up to date"
    assert "[x] 0001_initial" in run("migrate", "--list").output
    assert "[ok ] full-text index in sync" in run("doctor").output


def test_doctor_finds_and_repairs_drift(run, db_path):
    run("remember", "user", "a", "alpha")
    with Store(db_path, create=True) as store:
        store.conn.execute("DROP TRIGGER memory_facts_au")
        store.conn.execute("UPDATE memory_facts SET value = 'omega'")
        store.conn.execute(
            "CREATE TRIGGER memory_facts_au AFTER UPDATE OF key, value ON memory_facts BEGIN "
            "INSERT INTO memory_facts_fts (memory_facts_fts, rowid, key, value) "
            "VALUES ('delete', old.seq, old.key, old.value); "
            "INSERT INTO memory_facts_fts (rowid, key, value) VALUES (new.seq, new.key, new.value); END"
        )
    result = run("doctor")
    assert result.exit_code == 1 and "slotmem doctor --repair" in result.output
    repaired = run("doctor", "--repair")
    assert repaired.exit_code == 0 and "rebuilt" in repaired.output
    assert "omega" in run("search", "omega").output


def test_demo_runs_and_is_idempotent(tmp_path):
    path = tmp_path / "demo.db"
    first = CliRunner().invoke(cli, ["demo", "-d", str(path)])
    assert first.exit_code == 0, first.output
    assert "## What I know about the project" in first.output
    assert "deploy.schedule" in first.output and "lesson.deploy" in first.output
    second = CliRunner().invoke(cli, ["demo", "-d", str(path)])
    assert "0 new" in second.output
    Store(path, create=True).upsert("user", "real", "a real fact", source="cli")
    refused = CliRunner().invoke(cli, ["demo", "-d", str(path)])
    assert refused.exit_code == 1 and "not demo facts" in refused.output


def test_database_from_environment(tmp_path, monkeypatch):
    path = tmp_path / "env.db"
    monkeypatch.setenv("SLOTMEM_DB", str(path))
    runner = CliRunner()
    assert runner.invoke(cli, ["path"]).output.strip() == str(path)
    runner.invoke(cli, ["remember", "user", "k", "v"])
    assert Store(path, create=True).get("user", "k").value == "v"


def test_database_before_or_after_the_command(db_path, tmp_path, monkeypatch):
    runner = CliRunner()
    monkeypatch.setenv("SLOTMEM_DB", str(tmp_path / "from-env.db"))
    before = runner.invoke(cli, ["-d", str(db_path), "remember", "user", "k", "v"])
    assert before.exit_code == 0 and Store(db_path).get("user", "k").value == "v"
    assert runner.invoke(cli, ["get", "user", "k", "-d", str(db_path)]).output == "v\n"
    assert runner.invoke(cli, ["--database", str(db_path), "path"]).output == f"{db_path}\n"
    assert runner.invoke(cli, ["path"]).output == f"{tmp_path / 'from-env.db'}\n"
    same = runner.invoke(cli, ["-d", str(db_path), "get", "user", "k", "-d", str(db_path)])
    assert same.output == "v\n"
    twice = runner.invoke(cli, ["-d", str(db_path), "get", "user", "k", "-d", "other.db"])
    assert twice.exit_code == 2 and "-d is given twice" in twice.output
    assert not (tmp_path / "from-env.db").exists()


def test_json_output_has_iso_times(run, db_path):
    run("remember", "user", "timezone", "Europe/Stockholm")
    with Store(db_path) as store:
        updated = store.get("user", "timezone").updated_at
    fact = json.loads(run("get", "user", "timezone", "--json").output)
    expected = datetime.datetime.fromtimestamp(updated / 1000, datetime.timezone.utc)
    assert datetime.datetime.fromisoformat(fact["updated_at"]) == expected.replace(
        microsecond=expected.microsecond // 1000 * 1000
    )
    assert fact["updated_at"].endswith("+00:00") and fact["pinned_at"] is None
    [listed] = json.loads(run("list", "--json").output)
    assert listed["created_at"] == fact["created_at"]
    [line] = run("list", "--nl").output.splitlines()
    assert json.loads(line)["last_accessed"].endswith("+00:00")
    assert fact["created_at"] in run("list", "--csv").output
    run("remember", "user", "timezone", "UTC")
    [old] = json.loads(run("history", "user", "timezone", "--json").output)
    assert old["changed_at"].endswith("+00:00")
    [hit] = json.loads(run("search", "timezone", "--json").output)
    assert hit["updated_at"].endswith("+00:00")
    context = json.loads(run("context", "timezone", "--json").output)
    assert context["sections"][0]["facts"][0]["updated_at"].endswith("+00:00")
    assert ":" in run("list").output.splitlines()[2]  # a table keeps local times


def test_what_a_person_writes_is_protected(run, db_path):
    run("remember", "user", "timezone", "Europe/Stockholm")
    run("remember", "user", "editor", "Neovim", "--source", "import.csv")
    run("remember", "user", "shell", "fish", "--source", "import.csv", "--protect")
    with Store(db_path) as store:
        protected = {f.key: f.protected for f in store.list_facts("user")}
    assert protected == {"timezone": True, "editor": False, "shell": True}
    assert run("unprotect", "user/timezone").output == "unprotected: user/timezone\n"
    assert run("protect", "user/editor").output == "protected: user/editor\n"
    with Store(db_path) as store:
        assert not store.get("user", "timezone").protected and store.get("user", "editor").protected
        store.upsert("user", "editor", "Vim")  # the owner's own API may still change it
        assert store.get("user", "editor").protected
    missing = run("protect", "user/nobody")
    assert missing.exit_code == 1 and missing.output == "Error: no fact user/nobody to protect\n"
