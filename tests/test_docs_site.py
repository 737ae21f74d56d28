"""The documentation site builds strictly, and its CLI reference names every command (issue 28 item 7).

`mkdocs build --strict` fails on a broken link or anchor between pages or a missing include; the CLI reference is
generated from the click group by mkdocs-click, so a command added to the code is in the docs without a word
written, and this test fails if one is left out (a hidden command is not documented on purpose). Every page of
docs/ is in the nav (mkdocs only notes one that is not), and the README, the front door, stays one: at most 200
lines, the set-up lines in its first 40, one screenshot, and links to pages of the site that exist, anchors
included.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml

from workbench.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

def command_paths(group: click.Group, prefix: str = "") -> list[str]:
    """'board show', 'golden-set freeze', ...: every visible command, by the words a user types."""
    paths = []
    for name, cmd in sorted(group.commands.items()):
        if cmd.hidden:
            continue
        path = f"{prefix} {name}".strip()
        paths.append(path)
        if isinstance(cmd, click.Group):
            paths.extend(command_paths(cmd, path))
    return paths


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_cli_reference_names_every_command(site):
    page = (site / "cli" / "index.html").read_text(encoding="utf-8")
    anchors = set(re.findall(r'<h\d[^>]*id="([^"]+)"', page))
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    paths = command_paths(main)
    assert {"board show", "golden-set freeze", "import labels", "rubric add", "calibrate"} <= set(paths)
    missing = [p for p in paths if "workbench-" + p.replace(" ", "-") not in anchors or f"workbench {p}" not in text]
    assert not missing, f"commands missing from docs/cli.md's reference: {missing}"


def test_design_page_keeps_the_contract_sections(site):
    """docs/design.md carries the section titles of the shared design it was brought in from."""
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    titles = ["## 1. The job", "## 2. Concepts and file formats", "## 3. Storage", "## 4. Judges",
              "## 5. Measurements", "## 6. The gate", "## 7. Export", "## 8. Interfaces", "## 9. Demo",
              "## 10. Production, teams and trust"]
    assert [t for t in titles if t not in design] == []
    assert (site / "design" / "index.html").is_file()


def nav_pages(nav) -> list[str]:
    """The pages of mkdocs.yml's nav, at any depth."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for v in nav.values() for p in nav_pages(v)]
    return [p for v in nav for p in nav_pages(v)]


def site_page(site: Path, page: str) -> Path:
    """Where mkdocs writes docs/<page> (directory URLs): index.md at the root, X.md as X/index.html."""
    stem = page.removesuffix(".md")
    return site / "index.html" if stem == "index" else site / stem / "index.html"


def test_every_page_is_in_the_nav():
    nav = nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(set(nav)) == pages, f"not in the nav: {set(pages) - set(nav)}; no such page: {set(nav) - set(pages)}"
    assert len(nav) == len(set(nav)), "a page twice in the nav"


def test_the_readme_is_a_front_door(site):
    """At most 200 lines, the two set-up lines in its first 40, one screenshot, and its links to the site resolve."""
    readme = README.read_text(encoding="utf-8")
    lines = readme.splitlines()
    assert len(lines) <= 200, len(lines)
    head = lines[:40]
    assert any(ln.startswith("pip install . && workbench demo ") for ln in head)
    assert any(ln.startswith("pip install -e '.[test]' && python -m pytest ") for ln in head)
    images = re.findall(r"!\[[^\]]+\]\(([^)\s]+)\)", readme)
    assert len(images) == 1 and images[0].startswith("docs/images/") and images[0].endswith(".png"), images
    shot = ROOT / images[0]
    assert shot.is_file() and 10_000 < shot.stat().st_size < 300_000, shot
    assert (site / images[0].removeprefix("docs/")).is_file()  # the site carries the screenshot too
    nav = set(nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]))
    links = re.findall(r"\]\((docs/[^)\s]+)\)", readme)
    assert len({link.split("#")[0] for link in links if link.endswith(".md") or ".md#" in link}) >= 10, links
    for link in links:
        target, _, anchor = link.partition("#")
        assert (ROOT / target).is_file(), f"README links to {link}, which does not exist"
        if target.endswith(".md"):
            page = target.removeprefix("docs/")
            assert page in nav, f"README links to {link}, which is not in the site's nav"
            if anchor:
                built = site_page(site, page).read_text(encoding="utf-8")
                assert f'id="{anchor}"' in built, f"README links to {link}: no such anchor on the page"


def test_the_statistics_carry_their_references():
    statistics = (DOCS / "statistics.md").read_text(encoding="utf-8")
    references = statistics.split("## References", 1)[1]
    for cited in ("Wilson", "Efron", "Ferguson", "Calderon", "Benjamini", "Haybittle", "Rogan", "Angelopoulos"):
        assert cited in references, cited
