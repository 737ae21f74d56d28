"""A running `workbench ui` on a temporary demo database, and a headless Debian Chromium to drive it.

The server is started as a subprocess on a free port and polled until it
answers; it runs in its own process group, which teardown ends.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import DEMO_DIR, free_port
from workbench.features.importing import service as importing
from workbench.store import Store

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
E2E_SET = "e2e"


def wait_until_up(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"workbench ui exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)  # polling interval, not a wait for a fixed event
    raise TimeoutError(f"workbench ui did not answer at {url} within {timeout} s")


@dataclass
class Server:
    url: str
    db: Path
    proc: subprocess.Popen


def start_ui(db: Path, log: Path) -> Server:
    port = free_port()
    env = {**os.environ, "WORKBENCH_DB": str(db)}
    cmd = [sys.executable, "-c", "from workbench.cli import main; main()", "--db", str(db), "ui", "--port", str(port)]
    with log.open("w") as out:  # the child keeps its own copy of the file
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, proc, log)
    except BaseException:
        stop_ui(proc)
        raise
    return Server(url, db, proc)


def stop_ui(proc: subprocess.Popen) -> None:
    """End the server and the streamlit child it started (their own process group)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def seed(db: Path, template: Path, tmp: Path, n_items: int = 3) -> list[str]:
    """The demo database plus golden set 'e2e': the first demo trajectories under new ids, unlabeled."""
    shutil.copy(template, db)
    ids = []
    with (DEMO_DIR / "items.jsonl").open() as fh, (tmp / "e2e.jsonl").open("w") as out:
        for k, line in zip(range(n_items), fh):
            rec = json.loads(line)
            rec["id"] = f"e2e-{k + 1}"
            ids.append(rec["id"])
            out.write(json.dumps(rec) + "\n")
    with Store(db) as s:
        importing.import_items(s, tmp / "e2e.jsonl", E2E_SET)
    return ids


@pytest.fixture(scope="module")
def chromium_path() -> str:
    if not CHROMIUM:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium); CI installs it")
    return CHROMIUM


@pytest.fixture(scope="module")
def ui_server(demo_db_template: Path, tmp_path_factory, chromium_path) -> Iterator[tuple[Server, list[str]]]:
    tmp = tmp_path_factory.mktemp("e2e")
    ids = seed(tmp / "e2e.db", demo_db_template, tmp)
    server = start_ui(tmp / "e2e.db", tmp / "ui.log")
    try:
        yield server, ids
    finally:
        stop_ui(server.proc)


@pytest.fixture(scope="module")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield b
        b.close()
