"""The calibration card: a file a lead can attach to a review, with the verdict and the charts."""

from __future__ import annotations

import base64
import re

from workbench.features.export.card import write_card

PNG = b"\x89PNG\r\n\x1a\n"


def test_markdown_card_with_chart_images(demo_store, tmp_path):
    path = write_card(demo_store, "demo", "demo-patch-quality", "gpt4o-self", fmt="md", out=tmp_path / "card.md")
    text = path.read_text()
    assert "**NOT CALIBRATED**" in text and "| no material self-preference | failed | The judge scores its own family" in text
    images = re.findall(r"!\[\w+\]\((card_files/\w+\.png)\)", text)
    assert len(images) == 5
    for rel in images:
        assert (tmp_path / rel).read_bytes().startswith(PNG)


def test_html_card_is_one_self_contained_file(demo_store, tmp_path):
    path = write_card(demo_store, "demo", "demo-patch-quality", "careful-sonnet", fmt="html", out=tmp_path / "c.html")
    text = path.read_text()
    assert "<b>CALIBRATED</b>" in text and "<table>" in text
    blobs = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert len(blobs) == 5 and all(base64.b64decode(b).startswith(PNG) for b in blobs)


def test_cli_report(cli, tmp_path):
    cli("demo", "--no-ui")
    r = cli("report", "-g", "demo", "-r", "demo-patch-quality", "-j", "noisy-llama", "--format", "md",
            "--out", tmp_path / "n.md")
    assert r.exit_code == 0 and "Drift from run `run-1`" in (tmp_path / "n.md").read_text()
