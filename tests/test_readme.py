"""The README's CLI reference is generated from --help by cog; this fails when it drifts."""

from pathlib import Path

from cogapp import Cog

README = Path(__file__).resolve().parent.parent / "README.md"


def test_cli_reference_is_up_to_date():
    cog = Cog()
    cog.options.bReplace = False
    cog.options.bCheck = True
    status = cog.main(["cog", "--check", str(README)])
    assert status == 0, "README.md is out of date: run 'cog -r README.md'"


def test_first_screen_has_the_two_commands():
    first_screen = "\n".join(README.read_text().splitlines()[:25])
    assert "slotmem demo" in first_screen
    assert "python -m pytest" in first_screen
