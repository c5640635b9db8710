"""Moving a memory both ways: file -> server -> file through the JSONL export, every fact with
every column, its history and its feedback arriving as they left."""

import dataclasses
import json

from slotmem import Store


def _lines(records):
    return [json.dumps(record) for record in records]


def _facts(store):
    return sorted(
        (dataclasses.replace(f, tags=()) for f in store.list_facts(limit=None, order="key")),
        key=lambda f: (f.slot, f.key),
    )


def _history(store):
    return sorted(
        (dataclasses.replace(e, version=0) for e in store.history()),
        key=lambda e: (e.slot, e.key, e.changed_at, e.value),
    )


def _feedback(records):
    return sorted(
        (r["fact_id"], r["rating"], r["comment"], r["at"])
        for r in records
        if r.get("type") == "feedback"
    )


def test_file_to_server_to_file(tmp_path, pg_url, clock):
    with Store(tmp_path / "a.db", create=True, clock=clock) as file:
        file.upsert("user", "name", "Marta", source="chat")
        clock.advance(ms=10)
        file.upsert("user", "name", "Marta Silva", confidence=0.8, source="chat")
        file.upsert("user", "diet", "vegetarian", protect=True, tags=["food", "health"])
        file.upsert("project", "deadline", "Friday", ttl="30d")
        file.upsert("project", "café", "Ünïcode ключ 日本語 ok")
        file.pin("project", "deadline")
        file.rate("user", "name", 2, "right")
        file.delete("project", "café")
        file.upsert("project", "café", "back again")
        exported = file.export()
        facts, history = _facts(file), _history(file)
    with Store(pg_url, create=True, clock=clock) as server:
        report = server.import_records(_lines(exported), trusted=True)
        assert report.counts() == {"added": 4}
        assert _facts(server) == facts
        assert _history(server) == history
        assert server.query_facts("Marta", track_access=False)[0].fact.key == "name"
        again = server.export()
    assert _feedback(again) == _feedback(exported)
    with Store(tmp_path / "b.db", create=True, clock=clock) as back:
        report = back.import_records(_lines(again), trusted=True)
        assert report.counts() == {"added": 4}
        assert _facts(back) == facts
        assert _history(back) == history
        assert _feedback(back.export()) == _feedback(exported)


def _episode_records(records):
    return [r for r in records if r.get("type") in ("episode", "provenance")]


def test_episodes_and_provenance_go_file_to_server_to_file(tmp_path, pg_url, clock):
    with Store(tmp_path / "a.db", create=True, clock=clock) as file:
        episode = file.record_episode(
            "Benchmarked the parser.",
            run="r1",
            session="s1",
            score=8.5,
            data={"k": [1, "ü"]},
            facts=[{"slot": "project", "key": "parser", "value": "The parser is fast."}],
        )
        file.upsert("user", "k", "v")
        file.link_facts(episode.id, [("user", "k")])
        exported = file.export()
        episodes = file.list_episodes()
    with Store(pg_url, create=True, clock=clock) as server:
        report = server.import_records(_lines(exported), trusted=True)
        assert report.records["episodes"] == 1 and report.records["provenance links"] == 2
        assert server.list_episodes() == episodes
        assert [f.key for f in server.episode_facts(episode.id)] == ["parser", "k"]
        assert server.fact_episodes("user", "k")[0].id == episode.id
        again = server.export()
        assert _episode_records(again) == _episode_records(exported)
        assert _episode_records(server.export(slot="episodes")) == _episode_records(
            exported
        )  # the slot's episode and the links of its facts
        # imported again: nothing new (the same rows are there)
        report = server.import_records(_lines(again), trusted=True)
        assert report.records["episodes"] == 0 and report.records["provenance links"] == 0
    with Store(tmp_path / "b.db", create=True, clock=clock) as back:
        back.import_records(_lines(again), trusted=True)
        assert back.list_episodes() == episodes
        assert _episode_records(back.export()) == _episode_records(exported)


def test_server_export_is_its_own_and_a_file_written_by_hand_is_scanned(pg_store, tmp_path):
    pg_store.upsert("user", "diet", "vegetarian", protect=True)
    mine = pg_store.export()
    pg_store.upsert("user", "diet", "vegan")  # the owner's own export brings it back
    report = pg_store.import_records(_lines(mine), mode="replace")
    assert pg_store.get("user", "diet").value == "vegetarian", report.counts()
    edited = [dict(r) for r in mine if "slotmem" not in r]  # no header, no end marker
    edited[0]["value"] = "vegan"
    report = pg_store.import_records(_lines(edited), partial=True)
    assert report.counts() == {"kept": 1}  # another file: a protected fact stays as it is
    assert pg_store.get("user", "diet").value == "vegetarian"


def test_export_to_writes_a_file_the_file_store_reads(pg_store, tmp_path):
    pg_store.upsert("a", "b", "c")
    # header, the fact, the three built-in policies a new memory starts with (as a file's), end
    assert pg_store.export_to(tmp_path / "out.jsonl") == 6
    with Store(tmp_path / "m.db", create=True) as file:
        file.import_records((tmp_path / "out.jsonl").read_text().splitlines())
        assert file.get("a", "b").value == "c"
