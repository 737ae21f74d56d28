"""`workbench board` from the command line: grading killed with SIGKILL resumes without re-sending a finished
request (the loopback server counts them), and the board is shown as Markdown, JSON and HTML."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.board.conftest import write_runs
from tests.board.test_board_service import small_runs
from tests.judges.loopback_server import LoopbackServer

ROOT = Path(__file__).resolve().parents[2]
N = 48  # small_runs: 3 models x 8 tasks x 2 repeats


def _cmd(ws: dict, *args: str) -> list[str]:
    return [sys.executable, "-m", "workbench.cli", "--db", str(ws["db"]), "--project", str(ws["dir"]), "board",
            *map(str, args)]


def _graded(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM board_grades g JOIN board_bundles u "
                            "ON u.config_hash = g.config_hash WHERE u.tier = 'judged'").fetchone()[0]


def test_sigkill_halfway_then_resume_sends_no_finished_request_again(workspace, tmp_path):
    files = write_runs(tmp_path / "runs", small_runs())
    grade = _cmd(workspace, "grade", *files, "--bundle", workspace["mech"], "--bundle", workspace["loop"],
                 "--name", "wk", "--concurrency", "4")
    with LoopbackServer(latency=0.01) as server:
        env = {**os.environ, **server.env()}
        server.hold(after=N // 2)  # answer half, then hold every request until the process dies
        proc = subprocess.Popen(grade, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 90
        while _graded(workspace["db"]) < N // 2 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.05)  # polling the database the child writes
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        saved = _graded(workspace["db"])
        assert N // 2 <= saved < N  # killed halfway: the server holds the rest
        server.release()
        out = subprocess.run(grade, env=env, cwd=ROOT, capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stderr
        assert f"judged (loop): {N - saved} graded (0 unscored), {saved} already graded, 0 failed" in out.stdout
        assert "mechanical (mech): 0 graded (0 unscored), 48 already graded" in out.stdout
        assert _graded(workspace["db"]) == N
        assert {k: v for k, v in server.answered.items() if v != 1} == {}  # no finished request sent twice
        assert len(server.answered) == N


@pytest.mark.slow  # renders the charts to PNG and HTML: in CI, not in the quick loop
def test_board_show_in_three_formats(workspace, tmp_path):
    files = write_runs(tmp_path / "runs", small_runs())
    with LoopbackServer() as server:
        env = {**os.environ, **server.env()}
        subprocess.run(_cmd(workspace, "grade", *files, "-b", workspace["mech"], "-b", workspace["loop"], "-n", "wk"),
                       env=env, cwd=ROOT, check=True, capture_output=True, timeout=180)
    md = subprocess.run(_cmd(workspace, "show", "wk", "--resamples", "200"), cwd=ROOT, capture_output=True,
                        text=True, timeout=120)
    assert md.returncode == 0, md.stderr
    assert "| task | claude-a† | gemini-c | gpt-b |" in md.stdout
    assert "| t1 | M: 2/2 pass<br>J: +0.00 | M: 2/2 pass<br>J: +0.00 | M: 0/2 pass<br>J: -1.00 |" in md.stdout
    assert "▼ gpt-b is below the category's other models (judged, " in md.stdout
    assert "| gpt-b | 62% | 62% (k=2) | 62% | 62% (k=2) |" in md.stdout  # down the column: 5 of 8 tasks pass
    assert "## Where to look" in md.stdout and "The judge's family (judged: loop, family anthropic)" in md.stdout
    data = json.loads(subprocess.run(_cmd(workspace, "show", "wk", "--format", "json", "--resamples", "200"),
                                     cwd=ROOT, capture_output=True, text=True, timeout=120).stdout)
    assert data["schema"] == "workbench.board/1" and data["where_to_look"][0]["model"] == "gpt-b"
    out = tmp_path / "wk.html"
    subprocess.run(_cmd(workspace, "show", "wk", "--format", "html", "--out", out, "--resamples", "200"), cwd=ROOT,
                   check=True, capture_output=True, timeout=120)
    page = out.read_text()
    assert page.startswith("<!doctype html>") and "<th class=marked>claude-a†</th>" in page
    listed = subprocess.run(_cmd(workspace, "list"), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "wk: 3 models, 8 tasks, 48 runs, 2 bundles" in listed.stdout


def test_an_unknown_board_is_one_sentence(workspace):
    out = subprocess.run(_cmd(workspace, "show", "nope"), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip() == ("Error: no board 'nope' (known: none yet); grade runs onto it with "
                                  "'workbench board grade RUN_FILES... --bundle FILE --name nope'")


def test_board_compare_prints_who_gained_per_category(workspace, loopback, tmp_path):
    from workbench.features.board import service as svc
    from workbench.store import Store

    runs_v2 = [dict(r, producer={"model": "gpt-b-v2" if r["producer"]["model"] == "gpt-b" else r["producer"]["model"],
                                 "family": r["producer"]["family"]})
               for r in small_runs(worse_model="nobody")]
    with Store(workspace["db"]) as s:
        svc.grade_board(s, "wk48", write_runs(tmp_path / "a", small_runs()), [workspace["mech"]], env=loopback.env())
        svc.grade_board(s, "wk49", write_runs(tmp_path / "b", runs_v2), [workspace["mech"]], env=loopback.env())
    out = subprocess.run(_cmd(workspace, "compare", "wk48", "wk49", "--pair", "gpt-b=gpt-b-v2", "--pair",
                              "claude-a=claude-a", "--pair", "gemini-c=gemini-c"),
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    # three tasks that all moved: a t-interval of no width, but a sign-flip p of 0.25, so no verdict yet
    assert "| gpt-b → gpt-b-v2 | sql | 3 | 0.00 | 1.00 | +1.00 | +1.00 to +1.00 | 0.25 | no clear change |" in out.stdout
    assert "| claude-a | sql | 3 | 1.00 | 1.00 | +0.00 |" in out.stdout
    assert "Tasks that moved most: t1 (gpt-b) +1.00; t4 (gpt-b) +1.00; t7 (gpt-b) +1.00" in out.stdout
    bad = subprocess.run(_cmd(workspace, "compare", "wk48", "wk49", "--pair", "gpt-b"), cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "--pair" in bad.stderr and "Traceback" not in bad.stderr
