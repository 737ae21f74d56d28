"""One identity per person (issue 45 items 1 and 2), on a real SQLite file and a real Postgres server: an email (any
case) and a name resolve to one rater, wherever the person is named: `rater add`, a labels import, sign-in,
`rater remove`, the audit log; the migration that merges the duplicates earlier versions made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli, write
from tests.team.conftest import GOLDEN_SET, RUBRIC, seed
from workbench.core.errors import InputError
from workbench.features.labeling.service import next_item, submit_label
from workbench.features.people import raters
from workbench.features.people.audit import audit_entries
from workbench.store import Store
from workbench.store.migrations import all_migrations, migrate


@pytest.fixture
def cli(target: str, tmp_path: Path) -> Cli:
    """The command line on a seeded workspace (demo rubric, golden set 'g') on each engine."""
    with Store(target) as s:
        seed(s, tmp_path)
    return Cli(tmp_path / "workbench.db", tmp_path, target=target)


def labels_file(folder: Path, rows: list[tuple[str, str, int]], name: str = "labels.jsonl") -> Path:
    return write(folder / name, "".join(json.dumps({"item_id": i, "rater": r, "score": s, "rationale": "why"}) + "\n"
                                        for i, r, s in rows))


def listed(cli: Cli, *args: str) -> list[dict]:
    r = cli("rater", "list", "--json", *args)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_the_issues_reproduction_comes_out_as_one_person(cli, tmp_path, monkeypatch):
    """rater add alice@example.com made 'alice'; labels naming "alice@example.com" went to a second rater; removing
    her said "their 0 labels stay" and left the second one active. Now: one rater, three labels, removed whole."""
    monkeypatch.setenv("WORKBENCH_USER", "root")
    assert cli("rater", "add", "alice@example.com", "--role", "reviewer").output == \
        "Rater 'alice' (alice@example.com) is a reviewer.\n"
    f = labels_file(tmp_path, [("it-0000", "alice@example.com", 0), ("it-0001", "Alice@Example.com", 1),
                               ("it-0002", "alice", -1)])
    r = cli("import", "labels", f, "-g", GOLDEN_SET, "-r", RUBRIC)  # every value is her: no --new-raters needed
    assert r.exit_code == 0, r.output
    assert [(x["name"], x["email"], x["n_labels"]) for x in listed(cli)] == [("alice", "alice@example.com", 3)]
    (entry,) = json.loads(cli("audit", "--json", "--action", "labels.imported").output)
    assert entry["actor"] == "root" and entry["detail"]["raters"] == {"alice": 3}

    r = cli("rater", "remove", "alice@example.com")
    assert r.exit_code == 0 and "Rater 'alice' (alice@example.com) is removed; their 3 labels stay" in r.output
    assert listed(cli) == []
    assert cli("rater", "list").output == ("No active raters; 1 removed rater is not shown "
                                           "('workbench rater list --all' lists them).\n")
    (gone,) = listed(cli, "--all")
    assert (gone["name"], gone["n_labels"]) == ("alice", 3) and gone["removed_at"]
    assert "alice\treviewer\talice@example.com\t3 labels\tremoved " in cli("rater", "list", "--all").output

    with Store(cli.target) as s:  # removed: no sign-in, no queue, no save, under any of her names
        assert raters.rater_for_email(s, "ALICE@example.com") is None
        assert raters.removed_for_email(s, "alice@example.com").name == "alice"
        for who in ("alice", "alice@example.com"):
            with pytest.raises(InputError, match=r"^rater 'alice' was removed on \d{4}-\d\d-\d\d and has no access; "
                                                 r"ask an admin to add them again \('workbench rater add "
                                                 r"alice@example.com --role reviewer'\)\.$"):
                submit_label(s, GOLDEN_SET, RUBRIC, "it-0003", who, 0)
            with pytest.raises(InputError, match="was removed"):
                next_item(s, GOLDEN_SET, RUBRIC, who)
        assert len(s.labels(s.golden_set(GOLDEN_SET).id, RUBRIC)) == 3
    f2 = labels_file(tmp_path, [("it-0004", "alice@example.com", 0)], "more.jsonl")
    r = cli("import", "labels", f2, "-g", GOLDEN_SET, "-r", RUBRIC, "--new-raters")
    assert r.exit_code == 1 and r.stderr.startswith(
        "Error: more.jsonl line 1: field 'rater': 'alice@example.com' is rater 'alice', removed on ")
    assert cli("rater", "add", "alice@example.com", "--role", "reviewer").output == \
        "Rater 'alice' (alice@example.com) is a reviewer.\n"  # back, under the same name, with her labels
    assert [(x["name"], x["n_labels"], x["removed_at"]) for x in listed(cli)] == [("alice", 3, None)]


def test_an_unknown_rater_is_refused_naming_file_line_value_and_raters_and_nothing_lands(cli, tmp_path):
    assert cli("rater", "add", "alice@example.com", "--role", "reviewer").exit_code == 0
    assert cli("rater", "add", "bo@example.com", "--role", "lead", "--name", "bob").exit_code == 0
    f = labels_file(tmp_path, [("it-0000", "alice", 0), ("it-0001", "bob", 0), ("it-0002", "alcie@example.com", 1),
                               ("it-0003", "alcie@example.com", 1)])
    r = cli("import", "labels", f, "-g", GOLDEN_SET, "-r", RUBRIC)
    assert r.exit_code == 1
    assert r.stderr == ("Error: labels.jsonl line 3: field 'rater': 'alcie@example.com' is not a known rater's email "
                        "or name (raters: alice@example.com, bo@example.com); correct it, or pass --new-raters (on the "
                        "Import page: tick 'Add new raters') to add the file's new raters as reviewers.\n")
    with Store(cli.target) as s:
        assert s.labels(s.golden_set(GOLDEN_SET).id, RUBRIC) == []
        assert [e.action for e in audit_entries(s, action="labels.imported")] == []
    assert [x["name"] for x in listed(cli)] == ["alice", "bob"]


def test_new_raters_are_added_as_reviewers_with_their_emails_and_the_entry_names_them(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_USER", "root")
    assert cli("rater", "add", "alice@example.com", "--role", "lead").exit_code == 0
    f = labels_file(tmp_path, [("it-0000", "alice", 0), ("it-0001", "carl@example.com", 0),
                               ("it-0002", "CARL@example.com", 1), ("it-0000", "dora", -1), ("it-0001", "dora", 0)])
    r = cli("import", "labels", f, "-g", GOLDEN_SET, "-r", RUBRIC, "--new-raters")
    assert r.exit_code == 0, r.output
    assert [(x["name"], x["role"], x["email"], x["n_labels"]) for x in listed(cli)] == [
        ("alice", "lead", "alice@example.com", 1), ("carl", "reviewer", "carl@example.com", 2),
        ("dora", "reviewer", None, 2)]
    entries = json.loads(cli("audit", "--json").output)
    assert [e["action"] for e in entries] == ["rubric.version_added", "rater.added", "labels.imported"]
    assert entries[-1]["detail"]["raters"] == {"alice": 1, "carl": 2, "dora": 2}
    assert entries[-1]["detail"]["new_raters"] == ["carl", "dora"]
    with Store(cli.target) as s:  # carl signs in with his address and is the rater the import made
        assert raters.rater_for_email(s, "Carl@Example.com") == {"name": "carl", "role": "reviewer",
                                                                 "email": "carl@example.com"}


def test_one_person_under_two_values_labels_an_item_once(cli, tmp_path):
    assert cli("rater", "add", "alice@example.com", "--role", "reviewer").exit_code == 0
    f = labels_file(tmp_path, [("it-0000", "alice", 0), ("it-0000", "ALICE@example.com", 1)])
    r = cli("import", "labels", f, "-g", GOLDEN_SET, "-r", RUBRIC)
    assert r.exit_code == 1 and r.stderr == ("Error: labels.jsonl line 2: field 'rater': rater 'alice' labels item "
                                             "'it-0000' twice (also line 1); keep one label per item and rater.\n")


def test_rater_add_and_set_find_the_person_by_email_or_name_in_any_case(cli):
    assert cli("rater", "add", "Maria@Example.com", "--role", "reviewer").output == \
        "Rater 'maria' (maria@example.com) is a reviewer.\n"
    assert cli("rater", "set", "maria@EXAMPLE.com", "--role", "lead").output == \
        "Rater 'maria' is a lead (maria@example.com).\n"
    assert cli("rater", "add", "sam@example.com", "--role", "reviewer", "--name", "sam").exit_code == 0
    r = cli("rater", "set", "sam", "--role", "lead", "--email", "maria@example.com")  # her address: not his
    assert r.exit_code == 1 and "maria@example.com is already rater 'maria'" in r.stderr
    r = cli("rater", "add", "x@example.com", "--role", "reviewer", "--name", "maria@example.com")
    assert r.exit_code == 1 and "the rater name 'maria@example.com' is taken by maria@example.com" in r.stderr
    assert [(x["name"], x["role"]) for x in listed(cli)] == [("maria", "lead"), ("sam", "reviewer")]
    assert cli("rater", "set", "Carl@Example.com", "--role", "reviewer").exit_code == 0  # a name that is an email
    with Store(cli.target) as s:
        assert raters.rater_for_email(s, "carl@example.com")["name"] == "Carl@Example.com"
    assert cli("rater", "remove", "Carl@Example.com").exit_code == 0
    r = cli("rater", "remove", "MARIA@example.com")
    assert r.exit_code == 0 and "Rater 'maria' (maria@example.com) is removed" in r.output
    r = cli("rater", "remove", "nobody@example.com")
    assert r.exit_code == 1 and r.stderr == ("Error: no rater 'nobody@example.com' (raters: sam@example.com); "
                                             "'workbench rater list' shows them\n")


def test_a_label_saved_under_an_email_is_the_raters_and_so_is_its_audit_entry(target, tmp_path):
    with Store(target) as s:
        ids = seed(s, tmp_path)
        raters.add_rater(s, "maria@example.com", "reviewer", actor="admin")
        assert submit_label(s, GOLDEN_SET, RUBRIC, ids[0], "MARIA@example.com", 0)  # as a local user may type it
        assert [(l["rater"], l["score"]) for l in s.labels(s.golden_set(GOLDEN_SET).id, RUBRIC)] == [("maria", 0)]
        (saved,) = audit_entries(s, action="label.saved")
        assert saved.actor == "maria"
        for who in ("maria", "maria@example.com", "Maria@Example.com"):
            assert [e.action for e in audit_entries(s, actor=who)] == ["label.saved"]
        assert [e.action for e in audit_entries(s, actor="admin")] == ["rater.added"]  # someone who is no rater
        assert audit_entries(s, actor="nobody@example.com") == []


def test_as_email_records_the_command_lines_changes_under_that_rater(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_USER", "root")
    assert cli("rater", "add", "lee@example.com", "--role", "lead").exit_code == 0
    f = labels_file(tmp_path, [("it-0000", "lee", 1)])
    assert cli("--as", "LEE@example.com", "import", "labels", f, "-g", GOLDEN_SET, "-r", RUBRIC).exit_code == 0
    assert cli("rater", "add", "ana@example.com", "--role", "reviewer", "--as", "lee@example.com").exit_code == 0
    entries = json.loads(cli("audit", "--json").output)
    assert [(e["actor"], e["action"]) for e in entries] == [
        ("setup", "rubric.version_added"), ("root", "rater.added"), ("lee", "labels.imported"), ("lee", "rater.added")]
    assert [e["action"] for e in json.loads(cli("audit", "--json", "--actor", "lee@example.com").output)] == [
        "labels.imported", "rater.added"]
    assert [e["action"] for e in json.loads(cli("audit", "--json", "--actor", "lee").output)] == [
        "labels.imported", "rater.added"]
    r = cli("--as", "lee", "rater", "list")
    assert r.exit_code == 1 and r.stderr.startswith("Error: 'lee' is not an email address")
    assert cli("rater", "remove", "lee@example.com").exit_code == 0
    r = cli("--as", "lee@example.com", "rater", "add", "bo@example.com", "--role", "reviewer")
    assert r.exit_code == 1 and "--as lee@example.com: rater 'lee' was removed on " in r.stderr
    assert [x["name"] for x in listed(cli)] == ["ana"]


# -- the migration ------------------------------------------------------------------------------------------------

M014 = [n for n, _ in all_migrations()].index("m014_one_identity")


def _old_workspace(target: str) -> None:
    """A workspace as issue 45 found them: 'alice' with her email and a second 'alice@example.com' made by an import
    (both labeled it-1, hers earlier), 'sam' and 'samuel' sharing an address in two cases, 'carl@example.com' named
    by his email alone, and 'dora'."""
    with Store(target, migrate_schema=False) as s:
        migrate(s.conn, upto=M014)
        with s.transaction():
            ex = s.conn.execute
            ex("INSERT INTO rubrics (name, version, hash, content, created_at) VALUES ('r', 1, 'h', '{}', 'then')")
            for v in (-1, 0, 1):
                ex("INSERT INTO rubric_scale (rubric_id, value) VALUES (1, ?)", (v,))
            ex("INSERT INTO golden_sets (name, overlap, is_demo, created_at) VALUES ('g', 2, 0, 'then')")
            for n in range(5):
                ex("INSERT INTO items (golden_set_id, item_id, task_id, category, content, content_hash, position, "
                   "created_at) VALUES (1, ?, ?, 'default', '{}', 'h', ?, 'then')", (f"it-{n}", f"it-{n}", n))
            for name, role, email, at in [("alice", "reviewer", "alice@example.com", "2026-01-01"),
                                          ("alice@example.com", "reviewer", None, "2026-01-02"),
                                          ("sam", "lead", "Sam@Example.com", "2026-01-03"),
                                          ("samuel", "reviewer", "sam@example.com", "2026-01-04"),
                                          ("carl@example.com", "reviewer", None, "2026-01-05"),
                                          ("dora", "reviewer", None, "2026-01-06")]:
                ex("INSERT INTO raters (name, role, email, created_at) VALUES (?, ?, ?, ?)", (name, role, email, at))
            for item, rater, score, at in [(1, "alice", -1, "2026-02-01"), (5, "alice", 1, "2026-02-01"),
                                           (1, "alice@example.com", 1, "2026-03-01"),
                                           (2, "alice@example.com", 0, "2026-03-01"),
                                           (3, "alice@example.com", 0, "2026-03-01"),
                                           (1, "samuel", 0, "2026-02-01"), (1, "sam", 1, "2026-03-01"),
                                           (4, "dora", 0, "2026-02-01")]:
                ex("INSERT INTO labels (item_pk, rater, rubric_name, rubric_id, score, created_at, updated_at) "
                   "VALUES (?, ?, 'r', 1, ?, ?, ?)", (item, rater, score, at, at))
            ex("INSERT INTO flags (item_pk, rater, rubric_name, kind, created_at) "
               "VALUES (4, 'alice@example.com', 'r', 'unsure', 'then')")
            ex("INSERT INTO reservations (item_pk, rubric_name, rater, expires_at) "
               "VALUES (4, 'r', 'alice@example.com', '2999-01-01')")
            ex("INSERT INTO adjudications (item_pk, rubric_name, rubric_id, score, lead, created_at) "
               "VALUES (2, 'r', 1, 0, 'samuel', 'then')")


def test_the_migration_merges_duplicate_raters_and_says_what_it_merged(target, tmp_path):
    _old_workspace(target)
    with Store(target) as s:
        assert "m014_one_identity" in s.migrated
        assert [(r["name"], r["role"], r["email"]) for r in s.raters()] == [
            ("alice", "reviewer", "alice@example.com"), ("carl@example.com", "reviewer", "carl@example.com"),
            ("dora", "reviewer", None), ("sam", "lead", "sam@example.com")]
        labels = {(l["item_id"], l["rater"]): l["score"] for l in s.labels(s.golden_set("g").id, "r")}
        assert labels == {("it-0", "alice"): 1, ("it-1", "alice"): 0, ("it-2", "alice"): 0, ("it-4", "alice"): 1,
                          ("it-0", "sam"): 1, ("it-3", "dora"): 0}  # on it-0 the later label of each pair stays
        assert s.conn.execute("SELECT rater FROM flags").fetchall()[0][0] == "alice"
        assert s.conn.execute("SELECT count(*) FROM reservations").fetchone()[0] == 0
        assert s.conn.execute("SELECT lead FROM adjudications").fetchone()[0] == "sam"
        for who, name in [("alice@example.com", "alice"), ("ALICE@example.com", "alice"), ("samuel", "sam"),
                          ("SAM@example.com", "sam"), ("Carl@Example.com", "carl@example.com"), ("dora", "dora")]:
            assert raters.resolve_rater(s, who).name == name, who
        assert raters.merge_notes(s) == [
            "Merged rater 'alice@example.com' into 'alice' (the same person): 3 labels moved, 1 older duplicate "
            "dropped; 'alice@example.com' now names them.",
            "Merged rater 'samuel' into 'sam' (the same person): 0 labels moved, 1 older duplicate dropped; 'samuel' "
            "now names them."]
        merged = audit_entries(s, action="rater.merged")
        assert [(e.actor, e.target, e.detail["merged"]) for e in merged] == [
            ("workbench migration m014", "alice", "alice@example.com"), ("workbench migration m014", "sam", "samuel")]
        with pytest.raises(Exception):  # one email, one rater: the database itself refuses a second
            with s.transaction():
                s.conn.execute("INSERT INTO raters (name, role, email, created_at) "
                               "VALUES ('alice2', 'reviewer', 'alice@example.com', 'now')")
    with Store(target) as s:  # opened again: nothing left to merge, nothing said
        assert s.migrated == [] and raters.merge_notes(s) == []


def test_the_command_line_says_what_the_migration_merged_once(target, tmp_path):
    _old_workspace(target)
    cli = Cli(tmp_path / "workbench.db", tmp_path, target=target)
    r = cli("rater", "list")
    assert r.exit_code == 0
    assert r.stderr.splitlines() == [
        "Merged rater 'alice@example.com' into 'alice' (the same person): 3 labels moved, 1 older duplicate dropped; "
        "'alice@example.com' now names them.",
        "Merged rater 'samuel' into 'sam' (the same person): 0 labels moved, 1 older duplicate dropped; 'samuel' now "
        "names them."]
    assert r.stdout.splitlines()[0] == "alice\treviewer\talice@example.com\t4 labels"
    assert cli("rater", "list").stderr == ""


def test_a_writer_that_names_a_rater_by_email_still_writes_to_that_rater(target, tmp_path):
    """An adapter's import (Langfuse, MLflow, ...) hands the store its tool's annotator as it came: an email of a
    known rater is that rater, never a second one; a new email is a new rater who signs in with it."""
    from workbench.calibration.rubric_versions import get_rubric
    from workbench.core.models import Label

    with Store(target) as s:
        ids = seed(s, tmp_path)
        raters.add_rater(s, "alice@example.com", "reviewer")
        rv = get_rubric(s, RUBRIC)
        pks = s.item_pks(s.golden_set(GOLDEN_SET).id)
        assert s.upsert_labels(rv.name, rv.id, [Label(ids[0], "ALICE@example.com", 0),
                                                Label(ids[1], "eve@example.com", 1)], pks) == 2
        assert sorted((l["rater"], l["item_id"]) for l in s.labels(s.golden_set(GOLDEN_SET).id, RUBRIC)) == [
            ("alice", ids[0]), ("eve@example.com", ids[1])]
        assert [(r.name, r.email) for r in raters.list_raters(s)] == [("alice", "alice@example.com"),
                                                                      ("eve@example.com", "eve@example.com")]
        assert raters.rater_for_email(s, "Eve@Example.com")["name"] == "eve@example.com"


def test_as_ends_with_its_invocation(cli, monkeypatch):
    from workbench.store import audit

    monkeypatch.setenv("WORKBENCH_USER", "root")
    assert cli("--as", "lee@example.com", "rater", "add", "ana@example.com", "--role", "reviewer").exit_code == 0
    assert audit.who() == "root"  # the next change made in this process is not lee's


def test_a_local_user_who_types_their_email_labels_as_their_rater(cli, monkeypatch):
    from tests.ui.conftest import open_app

    monkeypatch.setenv("WORKBENCH_DB", cli.target)
    assert cli("rater", "add", "maria@example.com", "--role", "lead").exit_code == 0
    at = open_app("MARIA@example.com")
    assert [c.value for c in at.sidebar.caption if c.value.startswith("Labeling as")] == [
        "Labeling as **maria** · lead"]
    assert at.query_params["rater"] == "maria"  # a refresh keeps her, by her name
