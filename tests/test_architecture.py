"""Dependencies point one way: ui/cli -> services -> store, judges, stats -> data classes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "workbench"
SDKS = ("anthropic", "openai", "httpx", "httpx2")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # resolve relative imports against the file's package
                parts = list(path.relative_to(PKG.parent).with_suffix("").parts)[:-node.level]
                base = ".".join(parts + ([base] if base else []))
            names.add(base)
    return names


def _files(sub: str) -> list[Path]:
    return sorted((PKG / sub).rglob("*.py"))


def _forbidden(files: list[Path], prefixes: tuple[str, ...]) -> list[str]:
    return [f"{f.relative_to(PKG)} imports {n}" for f in files for n in _imports(f)
            if any(n == p or n.startswith(p + ".") for p in prefixes)]


def test_stats_is_pure():
    assert not _forbidden(_files("stats"), ("streamlit", "sqlite3", "sqlite_utils", "workbench.store",
                                            "workbench.services", "workbench.judges", "workbench.ui") + SDKS)


def test_store_knows_no_ui_sdk_or_services():
    assert not _forbidden(_files("store"), ("streamlit", "workbench.services", "workbench.ui", "workbench.judges")
                          + SDKS)


def test_ui_runs_no_sql_and_calls_no_sdk():
    files = _files("ui")
    assert not _forbidden(files, ("sqlite3", "sqlite_utils", "workbench.store.store", "workbench.store.db",
                                  "workbench.judges") + SDKS)
    for f in files:
        text = f.read_text().upper()
        assert "SELECT " not in text and "INSERT INTO" not in text, f


def test_sdks_only_in_their_provider_modules():
    for f in PKG.rglob("*.py"):
        for n in _imports(f):
            for sdk in ("anthropic", "openai"):
                if n == sdk or n.startswith(sdk + "."):
                    assert f.parent.name == "judges" or "providers" in f.parts, f"{f} imports {n}"


@pytest.mark.parametrize("layer", ["services", "store", "stats", "judges"])
def test_lower_layers_never_import_front_ends(layer):
    assert not _forbidden(_files(layer), ("workbench.cli", "workbench.ui", "streamlit"))


def test_import_linter_contracts_hold():
    """The contracts in pyproject.toml ([tool.importlinter]), checked by import-linter itself."""
    import shutil
    import subprocess

    exe = shutil.which("lint-imports")
    assert exe, "import-linter is in the [test] extra: pip install -e '.[test]'"
    proc = subprocess.run([exe], cwd=PKG.parent, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "4 kept, 0 broken" in proc.stdout
