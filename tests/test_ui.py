"""slotmem ui over HTTP, without a browser: what each page shows, and who may change what.
tests/test_ui_browser.py drives the same pages in Chromium."""

import contextlib
import html as html_module
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest

from slotmem import Store
from slotmem.errors import SlotmemError
from slotmem.ui import UI
from slotmem.ui.html import ago

DAY_MS = 86_400_000


@contextlib.contextmanager
def serving(path, **options):
    """The UI of ``path`` on a free loopback port, served on a thread."""
    ui = UI(path, port=0, **options)
    thread = threading.Thread(target=ui.serve_forever, daemon=True)
    thread.start()
    try:
        yield ui
    finally:
        ui.shutdown()
        thread.join(30)
        ui.close()


def base(ui) -> str:
    return f"http://127.0.0.1:{ui.port}"


def get(ui, path, headers=None):
    """(status, body) of GET ``path``."""
    request = urllib.request.Request(base(ui) + path, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def post(ui, form, *, token=True, path="/act"):
    """(status, Location or body) of a change posted as the page's form posts it."""
    data = dict(form)
    if token is True:
        data["token"] = ui.token
    elif token:
        data["token"] = token
    body = urllib.parse.urlencode(data).encode()
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(base(ui) + path, data=body, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Location") or e.read().decode()


@pytest.fixture
def memory(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("user", "editor", "Maja uses Neovim", source="cli")
        store.upsert("project", "deploy", "We ship on Fridays after the standup", source="flush:a")
        store.upsert("project", "deploy", "We ship on Thursdays", source="flush:b")
        store.upsert("project", "stack", "Python and PostgreSQL", source="flush:b")
        store.pin("user", "editor")
        store.set_policy("project", cap=200, description="what we build")
    return db_path


def snapshot(path):
    """Everything a change could touch, to show that a refused one touched nothing."""
    with Store(path) as store:
        return (
            [f.to_dict() for f in store.list_facts(limit=None, order="key")],
            [h.to_dict() for h in store.history()],
            store.stats()["feedback"],
        )


def test_facts_page_shows_slots_policies_and_readable_dates(memory):
    with serving(memory) as ui:
        status, html = get(ui, "/")
    assert status == 200
    assert re.search(r"<th scope=\"row\"><a [^>]*>project</a></th><td class=\"num\">2</td>", html)
    assert "what we build" in html and ">200<" in html  # the slot's policy
    assert "just now" in html and re.search(r'class="iso">20\d\d-\d\d-\d\d \d\d:\d\d UTC<', html)
    assert '<span class="mark pinned">pinned</span>' in html
    assert "We ship on Thursdays" in html and "flush:b" in html


def test_filters_by_slot_source_date_and_sorts(memory):
    with serving(memory) as ui:
        _, by_slot = get(ui, "/?slot=user")
        _, by_source = get(ui, "/?source=FLUSH:B")
        _, none_since = get(ui, "/?since=2999-01-01")
        _, by_key = get(ui, "/?order=key")
        _, pinned = get(ui, "/?pinned=1")
        status, bad = get(ui, "/?order=sideways")
        bad_date_status, bad_date = get(ui, "/?since=yesterdayish")
    assert "Maja uses Neovim" in by_slot and "Thursdays" not in by_slot
    assert "Thursdays" in by_source and "Postgre" in by_source and "Neovim" not in by_source
    assert "No fact matches these filters." in none_since
    rows = re.findall(r"<td><a href=\"/fact\?slot=(\w+)&amp;key=(\w+)\">", by_key)
    assert rows == [("project", "deploy"), ("project", "stack"), ("user", "editor")]
    assert "Neovim" in pinned and "Thursdays" not in pinned
    assert status == 400 and "order must be one of" in bad
    assert bad_date_status == 400 and "since" in bad_date


def test_paging_past_the_first_page(db_path):
    with Store(db_path, create=True) as store:
        store.upsert_many(
            [{"slot": "notes", "key": f"k{i:03}", "value": f"v{i}"} for i in range(60)]
        )
    with serving(db_path) as ui:
        _, first = get(ui, "/?order=key")
        _, second = get(ui, "/?order=key&offset=50")
        status, bad = get(ui, "/?offset=-1")
    assert "k049" in first and "k050" not in first and "Next page" in first
    assert "k050" in second and "k059" in second and "Next page" not in second
    assert "Previous page" in second
    assert status == 400 and "offset must be from 0" in bad


def test_relative_times_read_both_ways():
    assert ago(0, 3 * DAY_MS) == "3 d ago"
    assert ago(2 * 3_600_000, 0) == "in 2 h"
    assert ago(1000, 1500) == "just now"
    assert ago(None, 0) == ""


def test_search_ranks_as_the_agent_does_and_explains(memory):
    with Store(memory) as store:
        expected = [h.fact.key for h in store.query_facts("ship on friday", track_access=False)]
        before = store.get("project", "deploy").access_count
    with serving(memory) as ui:
        _, html = get(ui, "/search?q=ship+on+friday")
        _, empty = get(ui, "/search?q=zebra+crossing")
    shown = re.findall(
        r"<td class=\"num\">\d+</td><td><a href=\"/fact\?slot=\w+&amp;key=(\w+)", html
    )
    assert shown == expected and shown[0] == "deploy"
    assert re.search(r'<td class="num">\d+%</td>', html)  # relevance
    assert "bm25=" in html  # the explanation
    assert "Nothing found for" in empty
    with Store(memory) as store:  # looking is not an agent's access
        assert store.get("project", "deploy").access_count == before


def test_context_preview_is_the_exact_text_and_says_why(memory):
    from slotmem.agents.context import build

    with Store(memory) as store:
        expected = build(store, "when do we ship?", ["user", "project"], track_access=False).text
    with serving(memory) as ui:
        _, html = get(ui, "/context?message=when+do+we+ship%3F&slots=user,project")
        _, empty = get(ui, "/context?message=zebra&slots=project")
        status, bad = get(ui, "/context?message=x&budget=0")
    text = re.search(r'<pre class="context" id="context-text">(.*?)</pre>', html, re.DOTALL).group(
        1
    )
    assert html_module.unescape(text) == expected
    assert "pinned" in html and re.search(r"relevance \d+%", html)
    assert "(empty: nothing relevant and nothing pinned" in empty
    assert status == 400 and "budget" in bad


def test_a_change_without_write_is_refused_and_changes_nothing(memory):
    before = snapshot(memory)
    with serving(memory) as ui:
        _, page = get(ui, "/fact?slot=project&key=deploy")
        for form in (
            {"action": "edit", "slot": "project", "key": "deploy", "value": "changed"},
            {"action": "pin", "slot": "project", "key": "deploy"},
            {"action": "forget", "slot": "user", "key": "editor", "confirm": "yes"},
            {"action": "rate", "slot": "project", "key": "deploy", "rating": "3"},
            {"action": "restore", "slot": "project", "key": "deploy", "version": "1"},
        ):
            status, body = post(ui, form)
            assert status == 403 and "start it with --write" in body
        forget_status, _ = get(ui, "/forget?slot=user&key=editor")
    assert "<form" not in page.split("<h2>History")[0].split("</header>")[1]  # no controls
    assert "Restore version" not in page
    assert forget_status == 400
    assert snapshot(memory) == before


def test_a_change_without_the_token_is_refused_and_changes_nothing(memory):
    before = snapshot(memory)
    with serving(memory, write=True) as ui:
        form = {"action": "edit", "slot": "project", "key": "deploy", "value": "changed"}
        assert post(ui, form, token=False)[0] == 403
        assert post(ui, form, token="not-the-token")[0] == 403
    assert snapshot(memory) == before


def test_off_loopback_every_request_needs_the_token(memory):
    before = snapshot(memory)
    with serving(memory, host="0.0.0.0", write=True) as ui:
        assert ui.url.endswith(f"?token={ui.token}")
        status, body = get(ui, "/")
        assert status == 401 and "token" in body
        form = {"action": "pin", "slot": "project", "key": "deploy"}
        assert post(ui, form, token=False)[0] == 401
        assert post(ui, form, token="wrong")[0] == 401  # the form's token is not the pass
        assert snapshot(memory) == before
        request = urllib.request.Request(f"{base(ui)}/?token={ui.token}")
        with urllib.request.urlopen(request, timeout=30) as answer:
            cookie = answer.headers["Set-Cookie"].split(";")[0]
            assert answer.status == 200 and "HttpOnly" in answer.headers["Set-Cookie"]
        assert get(ui, "/", headers={"Cookie": cookie})[0] == 200
        assert post(ui, form, path=f"/act?token={ui.token}")[0] == 303
    with Store(memory) as store:
        assert store.get("project", "deploy").pinned


def test_a_loopback_server_answers_only_its_own_host_name(memory):
    with serving(memory) as ui:
        assert get(ui, "/", headers={"Host": f"localhost:{ui.port}"})[0] == 200
        status, _ = get(ui, "/", headers={"Host": f"evil.example:{ui.port}"})
    assert status == 403


def test_each_correction_goes_through_the_store(memory):
    with serving(memory, write=True) as ui:
        fact = {"slot": "project", "key": "deploy"}
        status, where = post(
            ui, {"action": "edit", **fact, "value": "We ship on Mondays", "confidence": "0.8"}
        )
        assert status == 303 and where.startswith("/fact?slot=project&key=deploy&done=")
        with Store(memory) as store:
            now = store.get("project", "deploy")
            assert (now.value, now.confidence, now.source) == ("We ship on Mondays", 0.8, "ui")
            versions = store.history("project", "deploy")
            assert versions[0].value == "We ship on Thursdays"
        assert (
            post(ui, {"action": "restore", **fact, "version": str(versions[0].version)})[0] == 303
        )
        assert post(ui, {"action": "pin", **fact})[0] == 303
        assert post(ui, {"action": "protect", **fact})[0] == 303
        assert post(ui, {"action": "rate", **fact, "rating": "-2", "comment": "stale"})[0] == 303
        with Store(memory) as store:
            now = store.get("project", "deploy")
            assert now.value == "We ship on Thursdays" and now.pinned and now.protected
            assert now.quality == -2
        assert post(ui, {"action": "unpin", **fact})[0] == 303
        assert post(ui, {"action": "unprotect", **fact})[0] == 303
        refused, body = post(ui, {"action": "forget", **fact})
        assert refused == 400 and "needs its confirmation" in body
        assert post(ui, {"action": "forget", **fact, "confirm": "yes"})[0] == 303
        _, gone = get(ui, "/fact?slot=project&key=deploy")
    with Store(memory) as store:
        assert store.get("project", "deploy") is None
        assert store.history("project", "deploy")[0].reason == "delete"
    assert "not in the memory now" in gone and "Restore version" in gone


@pytest.mark.parametrize(
    "form,message",
    [
        ({"action": "edit", "value": "  "}, "the new value is empty"),
        ({"action": "edit", "value": "x", "confidence": "lots"}, "confidence must be a number"),
        ({"action": "edit", "value": "x", "confidence": "7"}, "confidence"),
        ({"action": "rate", "rating": "great"}, "rating must be a whole number"),
        ({"action": "rate", "rating": "9"}, "rating"),
        ({"action": "restore", "version": "latest"}, "version must be a whole number"),
        ({"action": "restore", "version": "99"}, "version"),
        ({"action": "explode"}, "unknown action"),
        ({"action": "pin", "key": ""}, "slot and key"),
        ({"action": "pin", "key": "nothing-here"}, "nothing-here"),
        ({"action": "undo_flush", "source": "a"}, "needs its confirmation"),
    ],
)
def test_bad_input_is_one_clear_line_and_changes_nothing(memory, form, message):
    before = snapshot(memory)
    with serving(memory, write=True) as ui:
        status, body = post(ui, {"slot": "project", "key": "deploy", **form})
    assert status == 400 and message in body and 'role="alert"' in body
    assert snapshot(memory) == before


def test_undo_a_flush_shows_the_plan_then_reverts(memory):
    with serving(memory, write=True) as ui:
        _, plan = get(ui, "/undo?source=flush:b")
        assert "Yes, undo it" in plan and "Python and PostgreSQL" in plan
        with Store(memory) as store:
            assert store.get("project", "stack") is not None  # a plan changes nothing
        status, where = post(ui, {"action": "undo_flush", "source": "flush:b", "confirm": "yes"})
        assert status == 303 and where.startswith("/history")
        _, nothing = get(ui, "/undo?source=flush:nope")
    with Store(memory) as store:
        assert store.get("project", "stack") is None
        assert store.get("project", "deploy").value == "We ship on Fridays after the standup"
    assert "No fact written by a flush" in nothing


def test_a_read_only_file_has_no_controls_even_with_write(memory):
    before = snapshot(memory)
    with serving(memory, write=True, readonly=True) as ui:
        assert not ui.writable
        _, page = get(ui, "/fact?slot=project&key=deploy")
        status, body = post(ui, {"action": "pin", "slot": "project", "key": "deploy"})
        _, history = get(ui, "/history")
    assert "read-only" in page and "Restore version" not in page and "Save" not in page
    assert status == 403 and "the file is read-only" in body
    assert "Undo a flush" not in history
    assert snapshot(memory) == before


def test_unknown_pages_and_missing_facts_say_so(memory):
    with serving(memory) as ui:
        assert get(ui, "/nowhere")[0] == 404
        status, body = get(ui, "/fact?slot=user&key=nobody")
        assert status == 400 and "no fact user/nobody" in body
        assert get(ui, "/fact")[0] == 400


def test_a_missing_file_and_a_taken_port_are_one_line_errors(tmp_path, memory):
    with pytest.raises(SlotmemError, match="no memory file at"):
        UI(tmp_path / "typo.db", port=0)
    with serving(memory) as ui, pytest.raises(SlotmemError, match="cannot serve on 127.0.0.1"):
        UI(memory, port=ui.port)


def test_the_command_prints_its_address_and_serves(memory):
    env = {**os.environ, "SLOTMEM_UI_TOKEN": ""}
    process = subprocess.Popen(
        [sys.executable, "-m", "slotmem", "ui", "-d", str(memory), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = process.stdout.readline()
        address = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        assert "read-only" in line
        with urllib.request.urlopen(address, timeout=30) as answer:
            assert "Maja uses Neovim" in answer.read().decode()
    finally:
        process.terminate()
        process.wait(30)


@contextlib.contextmanager
def semantic_file(db_path, more=()):
    """A file with semantic search on (deterministic fake embeddings, tests/test_semantic.py)."""
    import llm
    from test_semantic import Plugin

    llm.pm.register(Plugin(), name="fake-embeddings-ui")
    try:
        with Store(db_path, create=True) as store:
            store.upsert("project", "deploy.schedule", "We deploy on Fridays after the standup.")
            store.upsert("project", "stack", "Python with FastAPI and PostgreSQL.")
            store.upsert("user", "drinks", "The user prefers green tea in the afternoon.")
            store.upsert_many(more)
            store.semantic.reindex("fake-64")
        yield db_path
    finally:
        llm.pm.unregister(name="fake-embeddings-ui")


@pytest.fixture
def semantic_memory(db_path):
    with semantic_file(db_path) as path:
        yield path


def test_a_file_with_semantic_search_ranks_hybrid_and_draws_its_map(semantic_memory):
    with serving(semantic_memory) as ui:
        _, hybrid = get(ui, "/search?q=When+do+we+ship%3F")
        _, lexical = get(ui, "/search?q=When+do+we+ship%3F&lexical=1")
        _, map_page = get(ui, "/map")
    assert "Semantic search: on." in hybrid
    assert "deploy.schedule" in hybrid and "semantic_rank=1" in hybrid  # a paraphrase
    assert "Nothing found for" in lexical
    assert map_page.count("<circle ") == 3 and "fake-64" in map_page
    assert "project/stack: Python with FastAPI" in map_page  # hover: the fact


def test_the_map_page_without_vectors_says_how_to_get_them(memory):
    with Store(memory) as store:
        store.query_facts("ship")  # one fact used now
    with serving(memory) as ui:
        status, html = get(ui, "/map")
    assert status == 200 and "slotmem reindex" in html and "<circle" not in html
    row = re.search(r'<th scope="row">project</th>((?:<td class="num">\d+</td>){4})', html)
    assert re.findall(r"\d+", row.group(1)) == ["1", "0", "0", "1"]  # used now, never used


def test_the_projection_keeps_what_differs_most():
    import numpy as np

    from slotmem.ui.overview import project

    vectors = np.array([[0, 0, 1], [10, 0, 1], [0, 1, 1], [10, 1, 1]], dtype="float32")
    points = project(vectors)
    assert points.shape == (4, 2)
    assert abs(points[1, 0] - points[0, 0]) > 9  # the long direction is the first axis
    assert project(np.array([[1.0], [2.0]])).shape == (2, 2)


def test_list_facts_takes_a_source_and_an_offset(store):
    """What the facts page asks of the Store, so that a big memory's page stays quick."""
    store.upsert_many(
        [
            {"slot": "notes", "key": f"k{i}", "value": f"v{i}", "source": f"Flush:{i % 2}"}
            for i in range(6)
        ]
    )
    keys = [f.key for f in store.list_facts("notes", order="key", source="flush:1", limit=None)]
    assert keys == ["k1", "k3", "k5"]
    assert [f.key for f in store.list_facts("notes", order="key", offset=4)] == ["k4", "k5"]
    assert [f.key for f in store.list_facts(order="key", limit=1, offset=1)] == ["k1"]
    assert store.list_facts("notes", source="nowhere") == []
    with pytest.raises(SlotmemError, match="offset must be an integer >= 0"):
        store.list_facts(offset=-1)
    with pytest.raises(SlotmemError, match="source contains a control character"):
        store.list_facts(source="a\x00b")


def test_an_edit_keeps_the_expiry_and_the_protection(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("user", "trip", "In Rome", ttl="3d", protect=True)
        expires = store.get("user", "trip").expires_at
    with serving(db_path, write=True) as ui:
        form = {"action": "edit", "slot": "user", "key": "trip", "value": "In Milan"}
        assert post(ui, form)[0] == 303
    with Store(db_path) as store:
        now = store.get("user", "trip")
    assert (now.value, now.expires_at, now.protected) == ("In Milan", expires, True)


def test_a_preview_is_not_counted_as_an_access(memory):
    with Store(memory) as store:
        before = {f.key: f.access_count for f in store.list_facts(limit=None)}
    with serving(memory) as ui:
        _, html = get(ui, "/context?message=when+do+we+ship&slots=user,project")
        assert "We ship on Thursdays" in html
    with Store(memory) as store:
        assert {f.key: f.access_count for f in store.list_facts(limit=None)} == before


def test_the_map_draws_the_newest_facts_only(db_path, monkeypatch):
    from slotmem.ui import overview

    monkeypatch.setattr(overview, "MAP_POINTS", 2)
    with semantic_file(db_path), serving(db_path) as ui:
        _, html = get(ui, "/map")
    assert html.count("<circle ") == 2 and "Map of 2 facts by meaning" in html
    assert "user/drinks" in html and "deploy.schedule" not in html  # the newest two


def test_clusters_find_groups_of_similar_vectors():
    import numpy as np

    from slotmem.ui.overview import clusters

    rng = np.random.default_rng(0)
    a = np.array([1.0, 0, 0]) + rng.normal(0, 0.05, (5, 3))
    b = np.array([0, 1.0, 0]) + rng.normal(0, 0.05, (5, 3))
    vectors = np.vstack([a, b])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    labels = clusters(vectors, 2)
    assert len(set(labels[:5])) == 1 and len(set(labels[5:])) == 1 and labels[0] != labels[5]
    assert clusters(vectors, 2) == labels  # the same vectors, the same clusters
    assert clusters(vectors[:1], 3) == [0]


def test_the_map_colours_by_cluster_on_request(semantic_memory):
    with serving(semantic_memory) as ui:
        _, by_slot = get(ui, "/map")
        _, by_cluster = get(ui, "/map?colour=cluster")
        status, bad = get(ui, "/map?colour=rainbow")
    assert "Colour by cluster" in by_slot and "cluster 1" not in by_slot
    assert "cluster 1" in by_cluster and by_cluster.count("<circle ") == 3
    assert status == 400 and "colour must be slot or cluster" in bad


def test_the_json_answers_match_the_store(memory):
    import json

    from slotmem.agents.context import build

    with Store(memory) as store:
        listed = [f.key for f in store.list_facts("project", order="key")]
        ranked = [h.fact.key for h in store.query_facts("ship friday", track_access=False)]
        expected = build(store, "when do we ship?", ["user", "project"], track_access=False)
        before = {f.key: f.access_count for f in store.list_facts(limit=None)}
    with serving(memory) as ui:
        facts = json.loads(get(ui, "/api/facts?slot=project&order=key&limit=5")[1])
        hits = json.loads(get(ui, "/api/search?q=ship+friday")[1])
        context = json.loads(
            get(ui, "/api/context?message=when+do+we+ship%3F&slots=user,project")[1]
        )
        errors = [
            get(ui, path)
            for path in (
                "/api/search",
                "/api/facts?limit=5000",
                "/api/facts?order=up",
                "/api/context",
            )
        ]
    assert [f["key"] for f in facts["facts"]] == listed and facts["slots"]["project"] == 2
    assert re.match(r"20\d\d-\d\d-\d\dT", facts["facts"][0]["updated_at"])  # ISO, not epoch ms
    assert [h["key"] for h in hits["hits"]] == ranked and "explanation" in hits["hits"][0]
    assert context["text"] == expected.text
    assert re.match(r"20\d\d-", context["sections"][0]["facts"][0]["updated_at"])
    assert [status for status, _ in errors] == [400] * 4
    assert "give the text to search for" in json.loads(errors[0][1])["error"]
    with Store(memory) as store:
        assert {f.key: f.access_count for f in store.list_facts(limit=None)} == before


def test_a_memory_on_postgresql_serves_every_page_and_takes_a_change(pg_url):
    """`slotmem ui -d postgresql://...`: the pages and a change, as over a file (issue 26)."""
    with Store(pg_url, create=True) as store:
        store.upsert("user", "editor", "Maja uses Neovim", source="cli")
        store.upsert("project", "deploy", "We ship on Fridays after the standup", source="flush:a")
        store.upsert("project", "deploy", "We ship on Thursdays", source="flush:b")
        store.pin("user", "editor")
        store.query_facts("neovim")  # one fact used now
    with serving(pg_url, write=True) as ui:
        pages = {
            path: get(ui, path)
            for path in (
                "/",
                "/map",
                "/fact?slot=project&key=deploy",
                "/search?q=ship+on+thursdays",
                "/context?message=when+do+we+ship%3F&slots=user,project",
                "/history",
            )
        }
        assert {path: status for path, (status, _) in pages.items()} == dict.fromkeys(pages, 200)
        assert "Maja uses Neovim" in pages["/"][1] and "pinned" in pages["/"][1]
        row = re.search(
            r'<th scope="row">user</th>((?:<td class="num">\d+</td>){4})', pages["/map"][1]
        )
        assert re.findall(r"\d+", row.group(1)) == ["1", "0", "0", "0"]  # used now
        assert "slotmem reindex" in pages["/map"][1]  # no vectors: no map
        assert "We ship on Fridays" in pages["/fact?slot=project&key=deploy"][1]  # its history
        assert "bm25=" in pages["/search?q=ship+on+thursdays"][1]
        assert (
            "We ship on Thursdays"
            in pages["/context?message=when+do+we+ship%3F&slots=user,project"][1]
        )
        assert "We ship on Fridays" in pages["/history"][1]  # the old value
        assert post(ui, {"action": "protect", "slot": "project", "key": "deploy"})[0] == 303
        edit = {"action": "edit", "slot": "project", "key": "deploy", "value": "We ship on Mondays"}
        assert post(ui, edit)[0] == 303
    with Store(pg_url) as store:
        now = store.get("project", "deploy")
    assert (now.value, now.source, now.protected) == ("We ship on Mondays", "ui", True)


def test_a_memory_on_postgresql_with_vectors_draws_its_map(pg_url, monkeypatch):
    from slotmem.ui import overview

    monkeypatch.setattr(overview, "MAP_POINTS", 2)
    with semantic_file(pg_url), serving(pg_url) as ui:
        _, hybrid = get(ui, "/search?q=When+do+we+ship%3F")
        _, map_page = get(ui, "/map")
    assert "deploy.schedule" in hybrid and "semantic_rank=1" in hybrid  # a paraphrase
    assert map_page.count("<circle ") == 2 and "fake-64" in map_page
    assert "user/drinks" in map_page and "deploy.schedule" not in map_page  # the newest two


def test_a_memory_on_postgresql_opened_read_only_takes_no_change(pg_url):
    with Store(pg_url, create=True) as store:
        store.upsert("project", "deploy", "We ship on Thursdays")
    with serving(pg_url, write=True, readonly=True) as ui:
        _, page = get(ui, "/fact?slot=project&key=deploy")
        status, body = post(ui, {"action": "pin", "slot": "project", "key": "deploy"})
    assert "<form" not in page.split("<h2>History")[0].split("</header>")[1]  # no controls
    assert status == 403 and "it was opened read-only" in body
    with Store(pg_url) as store:
        assert not store.get("project", "deploy").pinned
