"""`workbench rater add|remove|list` and `workbench audit` through the real command line on a real SQLite file
(issue 30 item 5): a removed rater keeps their labels, attributed to them, but no role anywhere the UI looks."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import write
from tests.team.conftest import GOLDEN_SET, RUBRIC, seed
from workbench.core.errors import InputError
from workbench.features.people import raters
from workbench.features.labeling.service import next_item, submit_label
from workbench.store import Store


@pytest.fixture
def seeded(cli, tmp_path):
    """The CLI on a workspace with the demo rubric and golden set 'g'; maria's two labels in it."""
    with Store(cli.target) as s:
        ids = seed(s, tmp_path)
    assert cli("rater", "add", "maria@example.com", "--role", "reviewer").exit_code == 0
    with Store(cli.target) as s:
        for i in ids[:2]:
            submit_label(s, GOLDEN_SET, RUBRIC, i, "maria", 0)
    return cli


def rows(cli, *args: str) -> list[dict]:
    r = cli("rater", "list", "--json", *args)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_add_names_the_rater_by_the_local_part_when_free_else_by_the_email(cli, monkeypatch):
    monkeypatch.setenv("WORKBENCH_USER", "root")
    r = cli("rater", "add", "maria@example.com", "--role", "lead")
    assert r.exit_code == 0 and r.output == "Rater 'maria' (maria@example.com) is a lead.\n"
    r = cli("rater", "add", "maria@other.org", "--role", "reviewer")  # 'maria' is taken
    assert r.exit_code == 0 and "Rater 'maria@other.org' is a reviewer." in r.output
    r = cli("rater", "add", "s.kim@example.com", "--role", "admin", "--name", "sam")
    assert r.exit_code == 0 and "Rater 'sam' (s.kim@example.com) is an admin." in r.output
    assert [(x["name"], x["role"], x["email"]) for x in rows(cli)] == [
        ("maria", "lead", "maria@example.com"), ("maria@other.org", "reviewer", "maria@other.org"),
        ("sam", "admin", "s.kim@example.com")]
    assert set(rows(cli)[0]) == {"name", "role", "email", "created_at", "removed_at", "n_labels"}
    r = cli("rater", "add", "MARIA@example.com", "--role", "reviewer")  # the same person: a role change
    assert "Rater 'maria' (maria@example.com) is a reviewer." in r.output and len(rows(cli)) == 3
    actions = json.loads(cli("audit", "--json").output)
    assert [(a["actor"], a["action"], a["target"]) for a in actions] == [
        ("root", "rater.added", "maria"), ("root", "rater.added", "maria@other.org"), ("root", "rater.added", "sam"),
        ("root", "rater.role_changed", "maria")]


@pytest.mark.parametrize("email", ["maria", "maria@", "@example.com", "maria@example", "ma ria@example.com", ""])
def test_a_malformed_email_is_refused_with_one_sentence_and_nothing_written(cli, email):
    r = cli("rater", "add", email, "--role", "reviewer")
    assert r.exit_code == 1
    assert r.stderr.startswith("Error: ") and "is not an email address" in r.stderr and r.stderr.count("\n") == 1
    assert not cli.db.exists()  # the refused command created no database


def test_a_taken_name_is_refused(cli):
    assert cli("rater", "add", "maria@example.com", "--role", "lead").exit_code == 0
    r = cli("rater", "add", "m2@example.com", "--role", "lead", "--name", "maria")
    assert r.exit_code == 1 and "the rater name 'maria' is taken by maria@example.com" in r.stderr
    assert [x["name"] for x in rows(cli)] == ["maria"]


def test_remove_keeps_the_labels_attributed_and_add_brings_the_rater_back(seeded):
    cli = seeded
    r = cli("rater", "remove", "maria@example.com")
    assert r.exit_code == 0 and "Rater 'maria' (maria@example.com) is removed; their 2 labels stay" in r.output
    assert rows(cli) == []
    (gone,) = rows(cli, "--all")
    assert gone["name"] == "maria" and gone["removed_at"] and gone["n_labels"] == 2
    assert "maria\treviewer\tmaria@example.com\t2 labels\tremoved " in cli("rater", "list", "--all").output
    with Store(cli.target) as s:  # the labels are still there, under her name, and still count
        labels = s.labels(s.golden_set(GOLDEN_SET).id, RUBRIC)
        assert [(x["rater"], x["score"]) for x in labels] == [("maria", 0), ("maria", 0)]
    assert "already removed" in cli("rater", "remove", "maria").output  # by name too; a second time changes nothing
    r = cli("rater", "add", "maria@example.com", "--role", "reviewer")
    assert r.exit_code == 0 and "Rater 'maria' (maria@example.com) is a reviewer." in r.output
    (back,) = rows(cli)
    assert (back["name"], back["removed_at"], back["n_labels"]) == ("maria", None, 2)
    got = [(a["action"], a["target"]) for a in json.loads(cli("audit", "--json", "--action", "rater").output)]
    assert got == [("rater.added", "maria"), ("rater.removed", "maria"), ("rater.added", "maria")]


def test_removing_someone_unknown_names_the_raters(seeded):
    r = seeded("rater", "remove", "nobody@example.com")
    assert r.exit_code == 1 and "no rater 'nobody@example.com' (raters: maria@example.com)" in r.stderr


def test_the_role_lookups_of_the_ui_refuse_a_removed_rater(seeded):
    with Store(seeded.target) as s:
        assert raters.rater_role(s, "maria") == "reviewer"
        assert raters.rater_for_email(s, "maria@example.com")["name"] == "maria"
        raters.remove_rater(s, "maria@example.com")
        assert raters.rater_role(s, "maria") is None
        assert raters.rater_for_email(s, "Maria@Example.com") is None
        assert "maria" not in raters.rater_names(s)
        item = s.items(s.golden_set(GOLDEN_SET).id)[5].id
        with pytest.raises(InputError, match="rater 'maria' was removed on .* ask an admin to add them again"):
            submit_label(s, GOLDEN_SET, RUBRIC, item, "maria", 0)
        with pytest.raises(InputError, match="rater 'maria' was removed"):
            next_item(s, GOLDEN_SET, RUBRIC, "maria")  # nothing is served to her either
        assert len(s.labels(s.golden_set(GOLDEN_SET).id, RUBRIC)) == 2


AUTH = {"auth": {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32,
                 "client_id": "id", "client_secret": "secret",
                 "server_metadata_url": "https://idp.example.org/.well-known/openid-configuration"}}


def _signed_in(email: str) -> AppTest:
    from tests.ui.conftest import APP as app

    at = AppTest.from_file(str(app), default_timeout=30)
    at.secrets.update(AUTH)
    at.user = {"is_logged_in": True, "email": email}
    return at.run()


def test_a_removed_lead_who_signs_in_is_asked_to_get_added_again(seeded, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DB", seeded.target)
    assert seeded("rater", "add", "lee@example.com", "--role", "lead").exit_code == 0
    pages = lambda at: {info["page_name"] for info in at._registered_pages.values()}  # noqa: E731
    assert "Adjudicate" in pages(_signed_in("lee@example.com"))
    assert seeded("rater", "remove", "lee@example.com").exit_code == 0
    at = _signed_in("lee@example.com")
    assert pages(at) == {"Sign in"}
    assert re.fullmatch(r"lee@example\.com \(rater 'lee'\) was removed from this workbench on \d{4}-\d\d-\d\d; "
                        r"ask an admin to add you again to sign in\.", at.warning[0].value), at.warning[0].value
    at = _signed_in("LEE@EXAMPLE.COM")  # the provider's case is not another person
    assert pages(at) == {"Sign in"} and "(rater 'lee') was removed" in at.warning[0].value
    at = _signed_in("new@example.com")
    assert pages(at) == {"Sign in"} and "new@example.com has no role" in at.warning[0].value


def test_a_removed_rater_who_types_their_name_locally_is_served_nothing(seeded, monkeypatch):
    from tests.ui.conftest import open_app

    monkeypatch.setenv("WORKBENCH_DB", seeded.target)
    assert "maria" in open_app().sidebar.selectbox[0].options
    assert seeded("rater", "remove", "maria").exit_code == 0
    assert "maria" not in open_app().sidebar.selectbox[0].options  # the picker no longer offers her
    at = open_app("maria", page="label")  # nobody, as with sign-in: the page stops before it reads anything
    assert any("'maria' has no access to this workbench any more" in w.value for w in at.warning), at.warning
    assert not at.button and not at.text_area, "no item and no control to label with"


def test_audit_lists_who_what_when_and_filters_since(seeded, tmp_path, monkeypatch):
    cli = seeded
    monkeypatch.setenv("WORKBENCH_USER", "lee")
    f = write(tmp_path / "labels.jsonl", '{"item_id": "it-0009", "rater": "ben", "score": 1, "rationale": "ok"}\n')
    assert cli("import", "labels", "--new-raters", f, "-g", GOLDEN_SET, "-r", RUBRIC).exit_code == 0
    entries = json.loads(cli("audit", "--json").output)
    assert all(list(e) == ["at", "actor", "action", "target", "detail"] for e in entries)
    assert [(e["actor"], e["action"]) for e in entries] == [
        ("setup", "rubric.version_added"), (entries[1]["actor"], "rater.added"), ("maria", "label.saved"),
        ("maria", "label.saved"), ("lee", "labels.imported")]
    last = entries[-1]
    assert last["target"] == f"{GOLDEN_SET}/labels.jsonl" and last["detail"]["labels"] == 1
    assert json.loads(cli("audit", "--json", "--since", "2999-01-01").output) == []
    assert len(json.loads(cli("audit", "--json", "--since", entries[2]["at"]).output)) == 3
    assert [e["target"] for e in json.loads(cli("audit", "--json", "--actor", "lee").output)] == [last["target"]]
    text = cli("audit", "--action", "labels.imported").output
    assert text.startswith(last["at"] + "\tlee\tlabels.imported\tg/labels.jsonl\t")
    r = cli("audit", "--since", "last tuesday")
    assert r.exit_code == 1 and r.stderr == ("Error: --since 'last tuesday' is not a date; give one as YYYY-MM-DD or "
                                             "YYYY-MM-DDTHH:MM (UTC unless it names a zone), e.g. --since "
                                             "2026-12-01.\n")
