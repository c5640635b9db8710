"""The docs say what the code does: the CLI reference is generated from --help by cog, the
README's first screen has the two commands, and every link and source path in them resolves."""

import re
from pathlib import Path

import pytest
from cogapp import Cog

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]


def test_cli_reference_is_up_to_date():
    cog = Cog()
    cog.options.bReplace = False
    cog.options.bCheck = True
    status = cog.main(["cog", "--check", str(ROOT / "docs" / "cli-reference.md")])
    assert status == 0, "docs/cli-reference.md is out of date: run 'cog -r docs/cli-reference.md'"


def test_first_screen_has_the_two_commands():
    first_screen = "\n".join(README.read_text().splitlines()[:25])
    assert "slotmem demo" in first_screen
    assert "python -m pytest" in first_screen
    assert len(README.read_text().splitlines()) <= 80, (
        "the README is one screen; details go to docs/"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_and_source_paths_resolve(page):
    text = page.read_text()
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):  # relative links
        assert (page.parent / target).exists(), f"{page.name}: broken link {target}"
    for path in re.findall(r"`((?:slotmem|benchmarks|migrations|tests)/[\w/.-]+\.py)`", text):
        assert (ROOT / path).exists(), f"{page.name} names {path}, which does not exist"
    for module in re.findall(r"\b(?:from|import) (slotmem(?:\.\w+)*)", text):
        path = ROOT / module.replace(".", "/")
        assert path.is_dir() or path.with_suffix(".py").exists(), f"{page.name}: no {module}"
