"""The audit log (issue 30 item 5): every change a person makes writes exactly one entry, under the right actor, in
the transaction of the change (an audit insert that fails takes the change back with it); on SQLite and Postgres."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from tests.team.conftest import DEMO_RUBRIC, GOLDEN_SET, RUBRIC
from workbench.calibration.golden_sets import adjudicate
from workbench.calibration.rubric_versions import add_rubric
from workbench.features.importing.service import import_labels
from workbench.features.people import raters
from workbench.features.people.audit import audit_entries
from workbench.features.labeling.service import submit_label
from workbench.store import audit


def new_entries(store, before: int) -> list:
    return audit_entries(store)[before:]


def count(store, sql: str, params=()) -> int:
    return store.conn.execute(sql, params).fetchone()[0]


# -- one entry per change, with its actor ------------------------------------------------------------------------

def test_a_new_label_and_a_changed_label_are_one_entry_each_and_a_repeated_save_none(team):
    store, ids = team
    n = len(audit_entries(store))
    assert submit_label(store, GOLDEN_SET, RUBRIC, ids[0], "ana", 0)
    (saved,) = new_entries(store, n)
    assert (saved.actor, saved.action, saved.target) == ("ana", "label.saved", f"{GOLDEN_SET}/{ids[0]}")
    assert saved.detail["score"] == 0 and saved.detail["rubric"] == f"{RUBRIC}@v1" and "old_score" not in saved.detail
    assert not submit_label(store, GOLDEN_SET, RUBRIC, ids[0], "ana", 0)  # a double click changes nothing
    assert len(audit_entries(store)) == n + 1
    assert submit_label(store, GOLDEN_SET, RUBRIC, ids[0], "ana", 1, "the tests pass")
    (changed,) = new_entries(store, n + 1)
    assert (changed.actor, changed.action) == ("ana", "label.changed")
    assert (changed.detail["old_score"], changed.detail["score"], changed.detail["rationale"]) == (0, 1, "the tests pass")
    # the audit log and the label events tell the same story
    assert count(store, "SELECT count(*) FROM label_events") == 2


def test_an_adjudication_is_one_entry_under_the_lead(team):
    store, ids = team
    n = len(audit_entries(store))
    adjudicate(store, GOLDEN_SET, RUBRIC, ids[1], -1, lead="lee", note="the fix is wrong")
    adjudicate(store, GOLDEN_SET, RUBRIC, ids[1], -1, lead="lee", note="the fix is wrong")  # the same: no change
    (e,) = new_entries(store, n)
    assert (e.actor, e.action, e.target) == ("lee", "adjudication.saved", f"{GOLDEN_SET}/{ids[1]}")
    assert (e.detail["score"], e.detail["note"]) == (-1, "the fix is wrong")


def _changed_rubric(tmp_path: Path) -> Path:
    text = DEMO_RUBRIC.read_text(encoding="utf-8")
    assert "The task is not done" in text
    path = tmp_path / "demo-patch-quality.yaml"
    path.write_text(text.replace("The task is not done", "The task is not finished"), encoding="utf-8")
    return path


def test_a_new_rubric_version_is_one_entry_and_the_same_content_none(team, tmp_path):
    store, _ = team
    n = len(audit_entries(store))
    path = _changed_rubric(tmp_path)
    rv = add_rubric(store, path, actor="lee")
    assert rv.version == 2
    assert add_rubric(store, path, actor="lee").version == 2  # unchanged content: the same version
    (e,) = new_entries(store, n)
    assert (e.actor, e.action, e.target) == ("lee", "rubric.version_added", f"{RUBRIC}@v2")
    assert e.detail["hash"] == rv.hash


def test_a_labels_import_is_one_entry_naming_the_file_and_count(team, tmp_path, monkeypatch):
    store, ids = team
    monkeypatch.setenv("WORKBENCH_USER", "importer")
    path = tmp_path / "batch-7.jsonl"
    path.write_text("".join(f'{{"item_id": "{i}", "rater": "{r}", "score": 0}}\n'
                            for i in ids[:4] for r in ("ana", "ben")), encoding="utf-8")
    n = len(audit_entries(store))
    assert import_labels(store, path, GOLDEN_SET, RUBRIC).added == 8
    assert import_labels(store, path, GOLDEN_SET, RUBRIC).added == 0  # again: nothing changed, nothing recorded
    (e,) = new_entries(store, n)
    assert (e.actor, e.action, e.target) == ("importer", "labels.imported", f"{GOLDEN_SET}/batch-7.jsonl")
    assert (e.detail["file"], e.detail["labels"], e.detail["changed"]) == ("batch-7.jsonl", 8, 8)


def test_rater_changes_are_entries_under_the_admin(team):
    store, _ = team
    n = len(audit_entries(store))
    raters.add_rater(store, "maria@example.com", "reviewer", actor="root")
    raters.add_rater(store, "maria@example.com", "reviewer", actor="root")  # already so: no entry
    raters.add_rater(store, "maria@example.com", "lead", actor="root")
    raters.remove_rater(store, "maria@example.com", actor="root")
    raters.remove_rater(store, "maria@example.com", actor="root")  # already removed: no entry
    raters.add_rater(store, "maria@example.com", "lead", actor="root")
    got = [(e.actor, e.action, e.target) for e in new_entries(store, n)]
    assert got == [("root", "rater.added", "maria"), ("root", "rater.role_changed", "maria"),
                   ("root", "rater.removed", "maria"), ("root", "rater.added", "maria")]
    assert new_entries(store, n)[-1].detail["returned"] is True


def test_the_command_lines_actor_is_workbench_user_else_the_account(team, monkeypatch):
    store, _ = team
    monkeypatch.setenv("WORKBENCH_USER", "ci-bot")
    raters.add_rater(store, "a@example.com", "reviewer")
    monkeypatch.delenv("WORKBENCH_USER")
    raters.add_rater(store, "b@example.com", "reviewer")
    assert [e.actor for e in audit_entries(store, action="rater.added")] == ["ci-bot", getpass.getuser()]


# -- the change and its entry commit together ---------------------------------------------------------------------

def _audit_down(store) -> None:
    """Make every audit insert fail, as a full disk or a broken table would."""
    with store.transaction():
        store.conn.execute("ALTER TABLE audit_log RENAME TO audit_log_off")


def _audit_up(store) -> None:
    with store.transaction():
        store.conn.execute("ALTER TABLE audit_log_off RENAME TO audit_log")


def _labels(store) -> int:
    return count(store, "SELECT count(*) FROM labels")


CHANGES = {
    "label": (lambda s, ids, tmp: submit_label(s, GOLDEN_SET, RUBRIC, ids[0], "ana", 0), _labels),
    "labels import": (lambda s, ids, tmp: import_labels(s, _labels_file(tmp, ids), GOLDEN_SET, RUBRIC), _labels),
    "adjudication": (lambda s, ids, tmp: adjudicate(s, GOLDEN_SET, RUBRIC, ids[0], 1, lead="lee", note="ok"),
                     lambda s: count(s, "SELECT count(*) FROM adjudications")),
    "rubric version": (lambda s, ids, tmp: add_rubric(s, _changed_rubric(tmp), actor="lee"),
                       lambda s: count(s, "SELECT count(*) FROM rubrics")),
    "rater added": (lambda s, ids, tmp: raters.add_rater(s, "zoe@example.com", "lead"),
                    lambda s: count(s, "SELECT count(*) FROM raters")),
    "rater removed": (lambda s, ids, tmp: raters.remove_rater(s, "ana"),
                      lambda s: count(s, "SELECT count(*) FROM raters WHERE removed_at IS NOT NULL")),
}


def _labels_file(tmp: Path, ids: list[str]) -> Path:
    path = tmp / "labels.jsonl"
    path.write_text("".join(f'{{"item_id": "{i}", "rater": "ben", "score": 1, "rationale": "ok"}}\n' for i in ids[:3]),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_whose_audit_entry_fails_is_rolled_back(team, tmp_path, change):
    store, ids = team
    store.ensure_raters(["ana"])
    make, measure = CHANGES[change]
    before = measure(store)
    _audit_down(store)
    with pytest.raises(Exception, match="audit_log"):
        make(store, ids, tmp_path)
    _audit_up(store)
    assert measure(store) == before, f"the {change} landed without its audit entry"
    assert not store.conn.in_transaction
    make(store, ids, tmp_path)  # with the log back, the same change lands, with its entry
    assert measure(store) != before
    assert len(audit_entries(store)) >= 1


def test_an_export_is_one_entry_and_rolls_back_with_it(demo_store, tmp_path):
    from workbench.features.export.bundle import export_bundle

    s = demo_store
    n = len(audit_entries(s))
    exports = lambda: count(s, "SELECT count(*) FROM exports")  # noqa: E731
    _audit_down(s)
    with pytest.raises(Exception, match="audit_log"):
        export_bundle(s, "demo", RUBRIC, "careful-sonnet", out_dir=tmp_path, signing_key=None, actor="lee")
    _audit_up(s)
    assert exports() == 0
    res = export_bundle(s, "demo", RUBRIC, "careful-sonnet", out_dir=tmp_path, signing_key=None, actor="lee")
    export_bundle(s, "demo", RUBRIC, "careful-sonnet", out_dir=tmp_path, signing_key=None, actor="lee")  # the same
    (e,) = new_entries(s, n)
    assert (e.actor, e.action, e.target) == ("lee", "export.approved", f"{RUBRIC}@v1--careful-sonnet")
    assert e.detail["sha256"] == res.sha256 and exports() == 1


def test_entries_filter_by_time_actor_and_action(team, monkeypatch):
    store, _ = team
    at = ["2030-01-10T09:00:00.000+00:00", "2030-03-01T12:00:00.000+00:00", "2030-03-02T08:00:00.000+00:00"]
    times = iter(t for t in at for _ in range(2))  # the rater's row, then its entry
    monkeypatch.setattr(audit, "now", lambda: next(times))
    for who, email in (("root", "a@example.com"), ("lee", "b@example.com"), ("root", "c@example.com")):
        raters.add_rater(store, email, "reviewer", actor=who)
    assert [e.target for e in audit_entries(store, since="2030-03-01")] == ["b", "c"]
    assert [e.target for e in audit_entries(store, since="2030-03-01T13:00+01:00")] == ["b", "c"]  # 12:00 UTC
    assert [e.target for e in audit_entries(store, since="2030-03-01T12:00:01")] == ["c"]
    assert [e.target for e in audit_entries(store, actor="root", action="rater")] == ["a", "c"]
    assert audit_entries(store, action="label") == []
