"""`workbench ui` stops cleanly (issue 12, item 4): the Streamlit server never outlives the `workbench` process.

A real `workbench ui` is started on a free port; once the port answers, the
`workbench` process (only it, not its process group) gets SIGTERM, SIGINT or
SIGKILL, and the port must be free again with no server left. Everything is
polled; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import free_port

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table from /proc")

START_TIMEOUT_S = 90
STOP_TIMEOUT_S = 30


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def poll(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting until {what}")
        time.sleep(0.05)


@pytest.mark.parametrize("sig,exit_code", [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 0),
                                           (signal.SIGKILL, -signal.SIGKILL)],
                         ids=["SIGTERM", "SIGINT", "SIGKILL"])
def test_stopping_workbench_ui_stops_streamlit(demo_db_template, tmp_path, sig, exit_code):
    db = tmp_path / "workbench.db"
    shutil.copy(demo_db_template, db)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("WORKBENCH_DB", "WORKBENCH_PROJECT")}
    log = (tmp_path / "ui.log").open("w")
    parent = subprocess.Popen([sys.executable, "-m", "workbench.cli", "ui", "--port", str(port)], cwd=tmp_path,
                              env=env, stdout=log, stderr=subprocess.STDOUT)
    servers: list[int] = []
    try:
        poll(lambda: port_open(port) or parent.poll() is not None, START_TIMEOUT_S, f"the UI answers on port {port}")
        assert parent.poll() is None, (tmp_path / "ui.log").read_text()
        servers = children(parent.pid)
        assert len(servers) == 1, servers
        environ = Path(f"/proc/{servers[0]}/environ").read_bytes().split(b"\0")
        assert f"WORKBENCH_PROJECT={tmp_path}".encode() in environ  # the server serves the same workspace

        os.kill(parent.pid, sig)
        assert parent.wait(timeout=STOP_TIMEOUT_S) == exit_code
        poll(lambda: not alive(servers[0]), STOP_TIMEOUT_S, "the Streamlit server has ended")
        poll(lambda: not port_open(port), STOP_TIMEOUT_S, f"port {port} is free")
    finally:
        for pid in [parent.pid, *servers]:  # only the processes this test started
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        parent.wait(timeout=STOP_TIMEOUT_S)
        log.close()
