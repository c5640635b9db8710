"""slotmem ui in a real headless Chromium (Debian's, driven by Playwright): a person's session
from opening the page to forgetting a fact, the file checked through the Store after each
step; the pages' labels and keyboard use; the screenshots docs/ui.md shows (refresh them with
`SLOTMEM_SCREENSHOTS=docs python -m pytest tests/test_ui_browser.py`).

Chromium is not optional here: without it these tests fail (CI installs it, see .ci/run)."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright
from test_ui import semantic_file, serving

from slotmem import Store
from slotmem.agents.context import build

ROOT = Path(__file__).resolve().parent.parent
# Every run takes the screenshots docs/ui.md shows and checks them; SLOTMEM_SCREENSHOTS=docs keeps
# them there (refreshing the doc's pictures), else they go to a temporary folder, so that running
# the tests leaves the work tree as it was.
SCREENSHOTS = (
    ROOT / os.environ["SLOTMEM_SCREENSHOTS"] if os.environ.get("SLOTMEM_SCREENSHOTS") else None
)
CHROMIUM = os.environ.get("SLOTMEM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
MAX_SCREENSHOT_BYTES = 150_000
expect.set_options(timeout=20_000)  # generous: a loaded 2-core machine


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (see .ci/run)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 720})
    context.set_default_timeout(20_000)  # generous: a loaded 2-core machine
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture
def memory(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("user", "editor", "Maja uses Neovim with a light theme", source="cli")
        store.upsert("user", "timezone", "Maja works from Lisbon (UTC+0, UTC+1 in summer)")
        store.upsert("project", "deploy", "We ship on Fridays after the standup", source="flush:a")
        store.upsert("project", "deploy", "We ship on Thursdays", source="flush:b")
        store.upsert("project", "stack", "Python 3.12, FastAPI and PostgreSQL", source="flush:b")
        store.upsert("project", "ci", "CI runs on every push; the deploy needs a green main")
        store.upsert("agent", "style", "Answer briefly; show commands first", confidence=0.7)
        store.pin("user", "editor")
        store.set_policy("project", cap=200, description="what we build")
    return db_path


def shot(page, name: str) -> None:
    folder = SCREENSHOTS or Path(tempfile.gettempdir()) / "slotmem-ui-screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    page.screenshot(path=str(path))
    assert path.stat().st_size < MAX_SCREENSHOT_BYTES, f"{name} is {path.stat().st_size} bytes"


def fact(path, slot, key):
    with Store(path) as store:
        return store.get(slot, key)


def test_a_session_open_search_preview_edit_restore_pin_forget(memory, page):
    with serving(memory, write=True) as ui:
        page.goto(ui.url)
        expect(page.get_by_role("heading", name="Memory", level=1)).to_be_visible()
        expect(page.get_by_role("table", name="Facts")).to_contain_text("We ship on Thursdays")
        shot(page, "ui-facts.png")

        # search as the agent does
        page.get_by_role("link", name="Search").click()
        page.get_by_label("Search for").fill("ship on friday")
        page.get_by_role("button", name="Search").click()
        results = page.get_by_role("table", name="Search results")
        expect(results.locator("tbody tr").first).to_contain_text("project/deploy")
        expect(results).to_contain_text("bm25=")
        shot(page, "ui-search.png")

        # the context a message would get, and why
        page.get_by_role("link", name="Context preview").click()
        page.get_by_label("Message").fill("when do we ship?")
        page.get_by_label("Slots, in priority order").fill("user,project")
        page.get_by_role("button", name="Preview").click()
        with Store(memory) as store:
            expected = build(store, "when do we ship?", ["user", "project"], track_access=False)
        assert page.locator("#context-text").inner_text() == expected.text
        expect(page.get_by_role("table", name="In the context")).to_contain_text("pinned")
        shot(page, "ui-context.png")

        # edit a fact
        page.get_by_role("link", name="project/deploy").first.click()
        page.get_by_label("New value").fill("We ship on Mondays")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("status")).to_contain_text("project/deploy: updated")
        assert fact(memory, "project", "deploy").value == "We ship on Mondays"

        # restore the old value from the timeline
        with Store(memory) as store:
            thursday = next(
                h for h in store.history("project", "deploy") if h.value == "We ship on Thursdays"
            )
        page.get_by_role("button", name=f"Restore version {thursday.version}").click()
        expect(page.locator("#value")).to_have_text("We ship on Thursdays")
        assert fact(memory, "project", "deploy").value == "We ship on Thursdays"

        # pin it
        page.get_by_role("button", name="Pin", exact=True).click()
        expect(page.get_by_role("button", name="Unpin")).to_be_visible()
        assert fact(memory, "project", "deploy").pinned
        shot(page, "ui-fact.png")

        # forget it, after the confirmation
        page.get_by_role("link", name="Forget this fact…").click()
        assert fact(memory, "project", "deploy") is not None  # asking changes nothing
        page.get_by_role("button", name="Yes, forget it").click()
        expect(page.get_by_role("status")).to_contain_text("forgotten")
        assert fact(memory, "project", "deploy") is None
        with Store(memory) as store:
            assert store.history("project", "deploy")[0].reason == "delete"


def test_read_only_pages_offer_no_change(memory, page):
    with serving(memory) as ui:
        page.goto(ui.url + "fact?slot=project&key=deploy")
        expect(page.locator("#value")).to_have_text("We ship on Thursdays")
        assert page.locator("main form").count() == 0
        expect(page.get_by_text("read-only")).to_be_visible()


LABELS = """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
    .filter(el => !(el.labels && el.labels.length && el.labels[0].textContent.trim()))
    .map(el => el.outerHTML)"""


@pytest.mark.parametrize(
    "path",
    ["", "search?q=ship", "context?message=ship", "fact?slot=project&key=deploy", "history", "map"],
)
def test_every_control_has_a_label(memory, page, path):
    with serving(memory, write=True) as ui:
        page.goto(ui.url + path)
        assert page.evaluate(LABELS) == []
        assert page.evaluate("document.documentElement.lang") == "en"
        assert page.locator("main h1").count() == 1
        assert page.evaluate(
            "[...document.querySelectorAll('table')].every(t => t.getAttribute('aria-label'))"
        )


def test_the_keyboard_reaches_and_works_every_control(memory, page):
    with serving(memory, write=True) as ui:
        page.goto(ui.url + "search")
        reached = []
        for _ in range(12):
            page.keyboard.press("Tab")
            reached.append(
                page.evaluate(
                    "document.activeElement.textContent.trim() || document.activeElement.name"
                )
            )
            if reached[-1] == "q":
                break
        assert reached[:5] == ["Facts", "Search", "Context preview", "Changes", "Map"]
        page.keyboard.type("ship on friday")
        page.keyboard.press("Enter")
        expect(page.get_by_role("table", name="Search results")).to_contain_text("project/deploy")

        page.goto(ui.url + "fact?slot=project&key=deploy")
        for _ in range(30):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.textContent.trim()") == "Pin":
                break
        else:
            pytest.fail("Tab never reaches the Pin button")
        page.keyboard.press("Enter")
        expect(page.get_by_role("button", name="Unpin")).to_be_visible()
        assert fact(memory, "project", "deploy").pinned


TOPICS = {
    "project": ["deploy release friday standup", "python fastapi postgresql stack", "ci push main"],
    "user": ["tea drink afternoon", "neovim editor theme", "lisbon timezone summer"],
    "agent": ["answer briefly commands", "ask before deleting files"],
}


def test_the_map_of_a_semantic_memory(db_path, page):
    more = [
        {"slot": slot, "key": f"note.{i}.{n}", "value": f"{topic} note {n}"}
        for slot, topics in TOPICS.items()
        for i, topic in enumerate(topics)
        for n in range(4)
    ]
    with semantic_file(db_path, more) as path, serving(path) as ui:
        page.goto(ui.url + "map")
        points = page.get_by_role("img", name="Map of 35 facts by meaning").locator("circle")
        expect(points).to_have_count(35)
        expect(page.get_by_role("table", name="Use per slot")).to_contain_text("project")
        page.locator("svg").scroll_into_view_if_needed()
        shot(page, "ui-map.png")
        page.locator("circle").last.click()  # a point (the last drawn is on top) opens its fact
        expect(page.locator("#value")).not_to_be_empty()
