"""The documentation site builds strictly (no broken link or anchor, no page outside the navigation), every link of
the README resolves, the README stays short, the report's screenshot is there and shown, and the development page
names every tool CI installs for the tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from markdown.extensions.toc import slugify

from tests.conftest import REPO

DOCS = REPO / "docs"
SCREENSHOT = DOCS / "images" / "report-ai-prod.png"


def test_the_site_builds_strictly(tmp_path) -> None:
    """`mkdocs build --strict` (strict is also set in mkdocs.yml), offline: any warning aborts the build."""
    site = tmp_path / "site"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(REPO / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "WARNING" not in result.stderr, result.stderr[-4000:]
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    built = sorted(p.relative_to(site).as_posix() for p in site.rglob("index.html") if p.parent.name != "search")
    assert len(built) == len(pages), (built, pages)  # every page, and the README's set-up included in the home page
    home = re.sub(r"<[^>]+>", "", (site / "index.html").read_text(encoding="utf-8"))  # text, highlighting undone
    for part in ("Platform teams", "pip install", "llm-training"):  # the README's intro, set-up and example
        assert part in home, f"the home page lacks the README's {part!r}"
    assert (site / "images" / SCREENSHOT.name).read_bytes() == SCREENSHOT.read_bytes()
    language = re.sub(r"\s+", " ", (site / "language" / "index.html").read_text(encoding="utf-8"))
    link = re.search(r'<a href="../codes/pc414-guarantee-exceeds-capacity/" class="md-nav__link">(.*?)</a>', language)
    assert link and re.sub(r"<[^>]+>", "", link.group(1)).strip() == "PC414 guarantee-exceeds-capacity"  # in the nav
    assert len(list((site / "codes").glob("*/index.html"))) == len(list((DOCS / "codes").glob("*.md"))) - 1


def _anchors(markdown_file: Path) -> set[str]:
    """The anchors of a page's headings, as MkDocs (Python-Markdown's toc) makes them; fenced code left out."""
    text = re.sub(r"^```.*?^```", "", markdown_file.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {slugify(h, "-") for h in re.findall(r"^#{1,6} (.+?)\s*$", text, re.M)}


def test_every_link_of_the_readme_resolves() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert len(links) > 20, links
    for link in links:
        assert "://" not in link, f"{link}: the README links only into the repository"
        target, _, anchor = link.partition("#")
        path = (REPO / target).resolve() if target else REPO / "README.md"
        assert path.exists(), f"README.md links to {link}: no such file"
        if anchor:
            assert anchor in _anchors(path), f"README.md links to {link}: no such heading"


def test_the_anchor_rule_is_mkdocs_own() -> None:
    """The rule the link test applies, on headings of the kinds the pages have."""
    page = DOCS / "language.md"
    assert {"the-language", "kubernetes-versions", "fields-that-do-nothing"} <= _anchors(page)
    assert "admission-tenants-held-to-their-contract" in _anchors(DOCS / "admission.md")
    assert "running-the-tests" in _anchors(DOCS / "development.md")


def test_the_readme_is_short_and_points_to_every_top_page() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 100
    sections = ("proofs", "schedulers", "provisioning", "codes")  # a section's index is a top page; so is each proof's
    top = {p.relative_to(REPO).as_posix() for p in DOCS.glob("*.md")} | {f"docs/{s}/index.md" for s in sections}
    top |= {p.relative_to(REPO).as_posix() for p in (DOCS / "proofs").glob("*.md")}
    linked = {link.partition("#")[0] for link in re.findall(r"\]\(([^)\s]+)\)", readme)}
    assert top <= linked, top - linked


def test_the_report_screenshot_is_a_browser_png_shown_on_the_commands_page() -> None:
    png = SCREENSHOT.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1280, 1400)  # chromium --headless --screenshot --window-size=1280,1400
    assert "](images/report-ai-prod.png)" in (DOCS / "commands.md").read_text(encoding="utf-8")


def test_the_development_page_names_every_tool_ci_installs() -> None:
    """Each `command -v TOOL ... packages+=(PACKAGE)` of .ci/run is a row of the tools table, with that package."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    installed = re.findall(r"command -v (\S+) .*packages\+=\((\S+)\)", ci)
    assert len(installed) >= 6, installed
    page = (DOCS / "development.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([\w-]+)`.*$", page, re.M)}
    for tool, package in installed:
        assert tool in rows, f"docs/development.md does not name {tool}"
        assert f"`apt-get install {package}`" in rows[tool], rows[tool]
        assert "skipped" in rows[tool], rows[tool]
    assert {"pre-commit", "mkdocs"} <= set(rows)
    assert '```sh\npytest -m "not slow" -n auto\n```' in page
