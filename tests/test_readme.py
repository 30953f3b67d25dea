"""The README is for users (issue 22): short, every page it links exists, and the pages of
``docs/`` link only to what exists too.  No changelog wording: it says what is, not what was."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import PROJECT

pytestmark = pytest.mark.quick

README = PROJECT / "README.md"
PAGES = [README, *sorted((PROJECT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
CHANGELOG = re.compile(r"\b(is now|are now|no longer|of old|used to|formerly)\b", re.I)


def local_links(page: Path) -> list[str]:
    """The relative targets a Markdown page links to (anchors dropped, web links left out)."""
    targets = (m.group(1).split("#", 1)[0] for m in LINK.finditer(page.read_text()))
    return [t for t in targets if t and not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_local_links_of_a_page(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("[a](docs/a.md) [b](b.md#x) [web](https://x.org/y) [top](#i) [m](mailto:a@b)")
    assert local_links(page) == ["docs/a.md", "b.md"]


def test_the_readme_is_short_and_starts_with_what_it_is() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) < 150, len(lines)
    sections = [line[3:] for line in lines if line.startswith("## ")]
    assert sections.index("Install") < sections.index("Replay a finished workflow")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_linked_page_exists(page: Path) -> None:
    missing = [t for t in local_links(page) if not (page.parent / t).exists()]
    assert missing == [], f"{page.name} links to missing pages"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_changelog_wording(page: Path) -> None:
    found = [m.group(0) for m in CHANGELOG.finditer(page.read_text())]
    assert found == [], f"{page.name}: say what is, not what changed"
