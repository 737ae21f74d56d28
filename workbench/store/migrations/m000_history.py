"""The first nine migrations (m001-m009), written before the store spoke Postgres.

Their names are what ``_migrations`` records in every database, so they stay as they are; each new migration is a
module of its own beside this one (``m010_audit.py``, ...), found by its file name.
"""

from __future__ import annotations

import re

from workbench.store.migrations import Conn, dialect, migration, script as _script, triggers

@migration
def m001_initial(conn: Conn) -> None:
    _script(conn, """
CREATE TABLE golden_sets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    overlap INTEGER NOT NULL DEFAULT 2 CHECK (overlap >= 1),
    is_demo INTEGER NOT NULL DEFAULT 0 CHECK (is_demo IN (0, 1)),
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE items (
    pk INTEGER PRIMARY KEY,
    golden_set_id INTEGER NOT NULL REFERENCES golden_sets(id),
    item_id TEXT NOT NULL CHECK (length(item_id) > 0),
    task_id TEXT NOT NULL,
    category TEXT NOT NULL,
    producer_model TEXT,
    producer_family TEXT,
    content TEXT NOT NULL CHECK (json_valid(content)),
    content_hash TEXT NOT NULL,
    position INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (golden_set_id, item_id)
) STRICT;
CREATE INDEX items_task ON items(golden_set_id, task_id);

CREATE TABLE golden_set_versions (
    id INTEGER PRIMARY KEY,
    golden_set_id INTEGER NOT NULL REFERENCES golden_sets(id),
    version INTEGER NOT NULL,
    hash TEXT NOT NULL,
    snapshot TEXT NOT NULL CHECK (json_valid(snapshot)),
    created_at TEXT NOT NULL,
    UNIQUE (golden_set_id, version),
    UNIQUE (golden_set_id, hash)
) STRICT;

CREATE TABLE raters (
    name TEXT PRIMARY KEY CHECK (length(name) > 0),
    role TEXT NOT NULL DEFAULT 'reviewer' CHECK (role IN ('reviewer', 'lead', 'admin')),
    email TEXT,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE rubrics (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL CHECK (length(name) > 0),
    version INTEGER NOT NULL CHECK (version >= 1),
    hash TEXT NOT NULL,
    content TEXT NOT NULL CHECK (json_valid(content)),
    created_at TEXT NOT NULL,
    UNIQUE (name, version),
    UNIQUE (name, hash)
) STRICT;

CREATE TABLE rubric_scale (
    rubric_id INTEGER NOT NULL REFERENCES rubrics(id),
    value INTEGER NOT NULL,
    PRIMARY KEY (rubric_id, value)
) STRICT;

CREATE TRIGGER rubrics_immutable BEFORE UPDATE ON rubrics
BEGIN
    SELECT RAISE(ABORT, 'rubric versions are immutable: add the changed YAML as a new version');
END;

CREATE TABLE labels (
    id INTEGER PRIMARY KEY,
    item_pk INTEGER NOT NULL REFERENCES items(pk),
    rater TEXT NOT NULL REFERENCES raters(name),
    rubric_name TEXT NOT NULL,
    rubric_id INTEGER NOT NULL REFERENCES rubrics(id),
    score INTEGER NOT NULL,
    rationale TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (item_pk, rater, rubric_name)
) STRICT;
CREATE INDEX labels_rubric ON labels(rubric_name, item_pk);

CREATE TRIGGER labels_score_on_scale BEFORE INSERT ON labels
WHEN NOT EXISTS (SELECT 1 FROM rubric_scale WHERE rubric_id = NEW.rubric_id AND value = NEW.score)
BEGIN
    SELECT RAISE(ABORT, 'label score is not on the rubric scale');
END;

CREATE TRIGGER labels_score_on_scale_update BEFORE UPDATE OF score ON labels
WHEN NOT EXISTS (SELECT 1 FROM rubric_scale WHERE rubric_id = NEW.rubric_id AND value = NEW.score)
BEGIN
    SELECT RAISE(ABORT, 'label score is not on the rubric scale');
END;

CREATE TABLE label_events (
    id INTEGER PRIMARY KEY,
    label_id INTEGER NOT NULL,
    item_pk INTEGER NOT NULL,
    rater TEXT NOT NULL,
    rubric_name TEXT NOT NULL,
    event TEXT NOT NULL CHECK (event IN ('insert', 'update')),
    old_score INTEGER,
    new_score INTEGER NOT NULL,
    rationale TEXT,
    at TEXT NOT NULL
) STRICT;

CREATE TRIGGER label_events_on_insert AFTER INSERT ON labels
BEGIN
    INSERT INTO label_events (label_id, item_pk, rater, rubric_name, event, old_score, new_score, rationale, at)
    VALUES (NEW.id, NEW.item_pk, NEW.rater, NEW.rubric_name, 'insert', NULL, NEW.score, NEW.rationale, NEW.updated_at);
END;

CREATE TRIGGER label_events_on_update AFTER UPDATE ON labels
WHEN OLD.score IS NOT NEW.score OR OLD.rationale IS NOT NEW.rationale
BEGIN
    INSERT INTO label_events (label_id, item_pk, rater, rubric_name, event, old_score, new_score, rationale, at)
    VALUES (NEW.id, NEW.item_pk, NEW.rater, NEW.rubric_name, 'update', OLD.score, NEW.score, NEW.rationale, NEW.updated_at);
END;

CREATE TRIGGER label_events_no_update BEFORE UPDATE ON label_events
BEGIN
    SELECT RAISE(ABORT, 'label_events is append-only');
END;

CREATE TRIGGER label_events_no_delete BEFORE DELETE ON label_events
BEGIN
    SELECT RAISE(ABORT, 'label_events is append-only');
END;

CREATE TABLE adjudications (
    item_pk INTEGER NOT NULL REFERENCES items(pk),
    rubric_name TEXT NOT NULL,
    rubric_id INTEGER NOT NULL REFERENCES rubrics(id),
    score INTEGER NOT NULL,
    note TEXT,
    lead TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (item_pk, rubric_name)
) STRICT;

CREATE TRIGGER adjudications_on_scale BEFORE INSERT ON adjudications
WHEN NOT EXISTS (SELECT 1 FROM rubric_scale WHERE rubric_id = NEW.rubric_id AND value = NEW.score)
BEGIN
    SELECT RAISE(ABORT, 'adjudicated score is not on the rubric scale');
END;

CREATE TABLE flags (
    id INTEGER PRIMARY KEY,
    item_pk INTEGER NOT NULL REFERENCES items(pk),
    rater TEXT NOT NULL,
    rubric_name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('broken item', 'unsure', 'skip')),
    note TEXT,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE judges (
    pk INTEGER PRIMARY KEY,
    rubric_id INTEGER NOT NULL REFERENCES rubrics(id),
    judge_id TEXT NOT NULL,
    model TEXT NOT NULL,
    family TEXT,
    config TEXT NOT NULL CHECK (json_valid(config)),
    config_hash TEXT NOT NULL,
    UNIQUE (rubric_id, judge_id)
) STRICT;

CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    judge_pk INTEGER NOT NULL REFERENCES judges(pk),
    golden_set_id INTEGER NOT NULL REFERENCES golden_sets(id),
    source TEXT NOT NULL CHECK (source IN ('run', 'import')),
    name TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'stopped', 'done')),
    params TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
    started_at TEXT NOT NULL,
    finished_at TEXT,
    UNIQUE (judge_pk, golden_set_id, name)
) STRICT;

CREATE TABLE judgments (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    item_pk INTEGER NOT NULL REFERENCES items(pk),
    item_content_hash TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    repeat INTEGER NOT NULL DEFAULT 0 CHECK (repeat >= 0),
    score INTEGER,
    unscored_reason TEXT,
    rationale TEXT,
    evidence_steps TEXT CHECK (evidence_steps IS NULL OR json_valid(evidence_steps)),
    trace TEXT CHECK (trace IS NULL OR json_valid(trace)),
    tokens_in INTEGER,
    tokens_out INTEGER,
    tokens_cached INTEGER,
    cost_usd REAL,
    latency_ms REAL,
    model_version TEXT,
    created_at TEXT NOT NULL,
    CHECK ((score IS NULL) != (unscored_reason IS NULL)),
    UNIQUE (run_id, item_pk, repeat)
) STRICT;
CREATE INDEX judgments_cache ON judgments(config_hash, item_content_hash, repeat);

CREATE TABLE batches (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    provider TEXT NOT NULL,
    batch_id TEXT NOT NULL UNIQUE,
    keys TEXT NOT NULL CHECK (json_valid(keys)),
    status TEXT NOT NULL DEFAULT 'submitted' CHECK (status IN ('submitted', 'done', 'failed')),
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE reports (
    id INTEGER PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    golden_set_id INTEGER NOT NULL REFERENCES golden_sets(id),
    rubric_id INTEGER NOT NULL REFERENCES rubrics(id),
    judge_pk INTEGER REFERENCES judges(pk),
    kind TEXT NOT NULL,
    report TEXT NOT NULL CHECK (json_valid(report)),
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE exports (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    rubric_id INTEGER NOT NULL REFERENCES rubrics(id),
    judge_pk INTEGER NOT NULL REFERENCES judges(pk),
    golden_set_version_id INTEGER NOT NULL REFERENCES golden_set_versions(id),
    created_at TEXT NOT NULL
) STRICT;
""")
    triggers(conn, sqlite="", postgres=_M001_POSTGRES_TRIGGERS)  # SQLite's are in the script above


# m001's triggers in PL/pgSQL: the same names, conditions and messages.
_M001_POSTGRES_TRIGGERS = """
CREATE FUNCTION rubrics_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'rubric versions are immutable: add the changed YAML as a new version';
END $$
;;
CREATE TRIGGER rubrics_immutable BEFORE UPDATE ON rubrics FOR EACH ROW EXECUTE FUNCTION rubrics_immutable()
;;
CREATE FUNCTION labels_score_on_scale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM rubric_scale WHERE rubric_id = NEW.rubric_id AND value = NEW.score) THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', MESSAGE = 'label score is not on the rubric scale';
    END IF;
    RETURN NEW;
END $$
;;
CREATE TRIGGER labels_score_on_scale BEFORE INSERT OR UPDATE OF score ON labels
FOR EACH ROW EXECUTE FUNCTION labels_score_on_scale()
;;
CREATE FUNCTION label_events_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO label_events (label_id, item_pk, rater, rubric_name, event, old_score, new_score, rationale, at)
        VALUES (NEW.id, NEW.item_pk, NEW.rater, NEW.rubric_name, 'insert', NULL, NEW.score, NEW.rationale,
                NEW.updated_at);
    ELSIF OLD.score IS DISTINCT FROM NEW.score OR OLD.rationale IS DISTINCT FROM NEW.rationale THEN
        INSERT INTO label_events (label_id, item_pk, rater, rubric_name, event, old_score, new_score, rationale, at)
        VALUES (NEW.id, NEW.item_pk, NEW.rater, NEW.rubric_name, 'update', OLD.score, NEW.score, NEW.rationale,
                NEW.updated_at);
    END IF;
    RETURN NULL;
END $$
;;
CREATE TRIGGER label_events_record AFTER INSERT OR UPDATE ON labels FOR EACH ROW EXECUTE FUNCTION label_events_record()
;;
CREATE FUNCTION label_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'label_events is append-only';
END $$
;;
CREATE TRIGGER label_events_append_only BEFORE UPDATE OR DELETE ON label_events
FOR EACH ROW EXECUTE FUNCTION label_events_append_only()
;;
CREATE FUNCTION adjudications_on_scale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM rubric_scale WHERE rubric_id = NEW.rubric_id AND value = NEW.score) THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', MESSAGE = 'adjudicated score is not on the rubric scale';
    END IF;
    RETURN NEW;
END $$
;;
CREATE TRIGGER adjudications_on_scale BEFORE INSERT ON adjudications
FOR EACH ROW EXECUTE FUNCTION adjudications_on_scale()
"""


@migration
def m002_reservations(conn: Conn) -> None:
    """Queue reservations: an item shown to a reviewer is held for them for a while."""
    _script(conn, """
CREATE TABLE reservations (
    item_pk INTEGER NOT NULL REFERENCES items(pk),
    rubric_name TEXT NOT NULL,
    rater TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (item_pk, rubric_name, rater)
) STRICT;
CREATE INDEX reservations_expiry ON reservations(rubric_name, expires_at);
CREATE INDEX flags_item ON flags(item_pk, rubric_name);
""")


@migration
def m003_leases(conn: Conn) -> None:
    """Leases: one holder at a time for a judge run or an import that is landing.

    A lease names its holder (a random token, process id and host) and the
    time of its last heartbeat; a lease whose heartbeat stopped is taken over.
    ``golden_sets.importing`` is the lease key of a large import still copying
    its rows in: such a set is invisible until one short transaction names it.
    The position index keeps the next position of a large set a lookup, not a scan.
    """
    _script(conn, """
CREATE TABLE leases (
    key TEXT PRIMARY KEY CHECK (length(key) > 0),
    token TEXT NOT NULL CHECK (length(token) > 0),
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    acquired_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL
) STRICT;
ALTER TABLE golden_sets ADD COLUMN importing TEXT;
CREATE INDEX items_position ON items(golden_set_id, position);
""")


@migration
def m004_blind_review(conn: Conn) -> None:
    """Blind review is a golden-set setting a lead controls: self-identification masking (on unless a lead turns
    it off) and the lead's own extra patterns (a JSON list of regular expressions)."""
    _script(conn, """
ALTER TABLE golden_sets ADD COLUMN mask_self_identification INTEGER NOT NULL DEFAULT 1
    CHECK (mask_self_identification IN (0, 1));
ALTER TABLE golden_sets ADD COLUMN mask_patterns TEXT NOT NULL DEFAULT '[]'
    CHECK (json_valid(mask_patterns) AND json_type(mask_patterns) = 'array');
""")


@migration
def m006_probes(conn: Conn) -> None:
    """Stress-probe runs: a run tagged with the probe whose perturbed items it judged (NULL: a calibration run).

    Probe runs are resumable and costed like any run, but never count as the judge's runs for calibration,
    compare, drift or export: the store's run and judgment queries leave them out.
    """
    _script(conn, """
ALTER TABLE runs ADD COLUMN probe TEXT CHECK (probe IS NULL OR length(probe) > 0);
CREATE INDEX runs_probe ON runs(golden_set_id, judge_pk, probe);
""")


@migration
def m007_refine(conn: Conn) -> None:
    """The refinement loop (issue 17): a seeded development / held-out split of a golden-set version, sessions of
    rounds that propose rubric edits, and each refined rubric version's parent and diff.

    A split's items keep the consensus they had when it was drawn, so the split is the same on every resume.
    A round's optimizer reply is saved before its child rubric is written, so a resumed round never asks again.
    """
    _script(conn, """
CREATE TABLE refine_splits (
    id INTEGER PRIMARY KEY,
    golden_set_id INTEGER NOT NULL REFERENCES golden_sets(id),
    golden_set_version_id INTEGER NOT NULL REFERENCES golden_set_versions(id),
    rubric_name TEXT NOT NULL,
    seed INTEGER NOT NULL,
    held_out_fraction REAL NOT NULL CHECK (held_out_fraction > 0 AND held_out_fraction < 1),
    strata TEXT NOT NULL,
    n_unresolved INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    UNIQUE (golden_set_version_id, rubric_name, seed, held_out_fraction)
) STRICT;

CREATE TABLE refine_split_items (
    split_id INTEGER NOT NULL REFERENCES refine_splits(id),
    item_pk INTEGER NOT NULL REFERENCES items(pk),
    part TEXT NOT NULL CHECK (part IN ('development', 'held_out')),
    consensus INTEGER NOT NULL,
    PRIMARY KEY (split_id, item_pk)
) STRICT;

CREATE TABLE refine_sessions (
    id INTEGER PRIMARY KEY,
    split_id INTEGER NOT NULL REFERENCES refine_splits(id),
    base_rubric_id INTEGER NOT NULL REFERENCES rubrics(id),
    judge_id TEXT NOT NULL,
    strategy TEXT NOT NULL CHECK (strategy IN ('optimizer', 'few-shot')),
    optimizer TEXT,
    max_examples INTEGER NOT NULL CHECK (max_examples >= 0),
    budget_usd REAL CHECK (budget_usd IS NULL OR budget_usd > 0),
    status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'accepted', 'closed')),
    created_at TEXT NOT NULL,
    CHECK ((strategy = 'optimizer') = (optimizer IS NOT NULL))
) STRICT;

CREATE TABLE refine_rounds (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES refine_sessions(id),
    number INTEGER NOT NULL CHECK (number >= 1),
    parent_rubric_id INTEGER NOT NULL REFERENCES rubrics(id),
    child_rubric_id INTEGER REFERENCES rubrics(id),
    edit TEXT CHECK (edit IS NULL OR json_valid(edit)),
    optimizer_cost_usd REAL,
    optimizer_tokens_in INTEGER,
    optimizer_tokens_out INTEGER,
    status TEXT NOT NULL DEFAULT 'proposing' CHECK (status IN
        ('proposing', 'evaluating', 'proposed', 'rejected', 'accepted', 'discarded', 'failed')),
    results TEXT CHECK (results IS NULL OR json_valid(results)),
    reason TEXT,
    decided_by TEXT,
    decided_at TEXT,
    accepted_rubric_id INTEGER REFERENCES rubrics(id),
    created_at TEXT NOT NULL,
    UNIQUE (session_id, number)
) STRICT;

CREATE TABLE rubric_lineage (
    rubric_id INTEGER PRIMARY KEY REFERENCES rubrics(id),
    parent_rubric_id INTEGER NOT NULL REFERENCES rubrics(id),
    diff TEXT NOT NULL,
    round_id INTEGER REFERENCES refine_rounds(id),
    created_at TEXT NOT NULL
) STRICT;
""")


@migration
def m005_active_queue(conn: Conn) -> None:
    """The labeling queue's order, a lead's per-golden-set choice: 'random' (each reviewer's own random order) or
    'active' (a stratified design with Neyman inclusion probabilities, one per item, from the judge's scores).
    Each label served by the active queue records its item's inclusion probability, for inverse-probability
    weights in calibration. A lead's re-plan starts a new phase of the design; each phase keeps its
    probabilities and queue priorities, and which phase first served each item is kept."""
    _script(conn, """
ALTER TABLE golden_sets ADD COLUMN queue_order TEXT NOT NULL DEFAULT 'random'
    CHECK (queue_order IN ('random', 'active'));
ALTER TABLE labels ADD COLUMN inclusion_probability REAL
    CHECK (inclusion_probability IS NULL OR (inclusion_probability > 0 AND inclusion_probability <= 1));

CREATE TABLE active_designs (
    golden_set_id INTEGER PRIMARY KEY REFERENCES golden_sets(id),
    phase INTEGER NOT NULL DEFAULT 1 CHECK (phase >= 1),
    rubric_name TEXT NOT NULL,
    judge_id TEXT NOT NULL,
    expected_labels REAL NOT NULL CHECK (expected_labels > 0),
    labeled_before REAL NOT NULL DEFAULT 0 CHECK (labeled_before >= 0 AND labeled_before <= 1),
    checks TEXT NOT NULL CHECK (json_valid(checks)),
    created_by TEXT,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE active_inclusion (
    item_pk INTEGER NOT NULL REFERENCES items(pk),
    phase INTEGER NOT NULL CHECK (phase >= 1),
    golden_set_id INTEGER NOT NULL REFERENCES golden_sets(id),
    stratum TEXT NOT NULL,
    probability REAL NOT NULL CHECK (probability > 0 AND probability <= 1),
    priority REAL NOT NULL CHECK (priority >= 0),
    PRIMARY KEY (item_pk, phase)
) STRICT;
CREATE INDEX active_inclusion_set ON active_inclusion(golden_set_id, phase, priority);

CREATE TABLE active_served (
    item_pk INTEGER NOT NULL REFERENCES items(pk),
    rubric_name TEXT NOT NULL,
    phase INTEGER NOT NULL CHECK (phase >= 1),
    PRIMARY KEY (item_pk, rubric_name)
) STRICT;
""")


@migration
def m008_board(conn: Conn) -> None:
    """The results board (store/board.py): several models' runs graded with approved bundles.

    Grades are keyed like judgments, by (judge config hash, item content hash,
    repeat), and shared by every board: an item is never graded twice with the
    same bundle, whichever board it arrives on.
    """
    _script(conn, """
CREATE TABLE boards (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE board_items (
    pk INTEGER PRIMARY KEY,
    board_id INTEGER NOT NULL REFERENCES boards(id),
    item_id TEXT NOT NULL CHECK (length(item_id) > 0),
    task_id TEXT NOT NULL,
    category TEXT NOT NULL,
    model TEXT NOT NULL CHECK (length(model) > 0),
    family TEXT,
    repeat INTEGER NOT NULL CHECK (repeat >= 0),
    content TEXT NOT NULL CHECK (json_valid(content)),
    content_hash TEXT NOT NULL,
    source TEXT NOT NULL,
    position INTEGER NOT NULL,
    UNIQUE (board_id, item_id),
    UNIQUE (board_id, task_id, model, repeat)
) STRICT;
CREATE INDEX board_items_hash ON board_items(content_hash);

CREATE TABLE board_bundles (
    board_id INTEGER NOT NULL REFERENCES boards(id),
    sha256 TEXT NOT NULL,
    tier TEXT NOT NULL CHECK (tier IN ('mechanical', 'judged')),
    config_hash TEXT NOT NULL,
    path TEXT NOT NULL,
    bundle TEXT NOT NULL CHECK (json_valid(bundle)),
    position INTEGER NOT NULL,
    PRIMARY KEY (board_id, sha256)
) STRICT;

CREATE TABLE board_grades (
    config_hash TEXT NOT NULL,
    item_content_hash TEXT NOT NULL,
    repeat INTEGER NOT NULL CHECK (repeat >= 0),
    score INTEGER,
    unscored_reason TEXT,
    rationale TEXT,
    evidence_steps TEXT CHECK (evidence_steps IS NULL OR json_valid(evidence_steps)),
    trace TEXT CHECK (trace IS NULL OR json_valid(trace)),
    tokens_in INTEGER,
    tokens_out INTEGER,
    tokens_cached INTEGER,
    cost_usd REAL,
    latency_ms REAL,
    model_version TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (config_hash, item_content_hash, repeat),
    CHECK ((score IS NULL) = (unscored_reason IS NOT NULL))
) STRICT;
""")


@migration
def m009_promptfoo_item_ids(conn: Conn) -> None:
    """Item ids that `import --from promptfoo` made before issue 27 named the provider (``test0-prompt1-openai:gpt-4o``),
    which reviewers read: they become ``test<i>-prompt<j>-<hash>`` as the adapter now makes them, so that a second
    import of the same results file maps to the same items rather than adding them again. Labels, judgments and
    leases point at the item's pk and stay with it; the content (and its hash) has no id. The formula is
    interop.promptfoo.item_id's, copied so that this migration never changes; an id already taken is left alone."""
    if dialect(conn) == "postgres":
        return  # a Postgres workspace was made after issue 27 (or copied from a migrated SQLite file): no old ids
    from workbench.core.hashing import sha256_hex

    rows = conn.execute("""SELECT pk, golden_set_id, item_id, json_extract(content, '$.metadata.promptfoo.provider')
                           FROM items WHERE json_type(content, '$.metadata.promptfoo') = 'object'""").fetchall()
    for pk, golden_set_id, item_id, provider in rows:
        old = re.fullmatch(r"test(\d+)-prompt(\d+)-(.+)", item_id)
        if old is None or old[3] != (provider or "provider"):
            continue  # not an id the old adapter made
        test_idx, prompt_idx = int(old[1]), int(old[2])
        new = f"test{test_idx}-prompt{prompt_idx}-{sha256_hex([test_idx, prompt_idx, provider])[:12]}"
        if conn.execute("SELECT 1 FROM items WHERE golden_set_id = ? AND item_id = ?", (golden_set_id, new)).fetchone():
            continue
        conn.execute("UPDATE items SET item_id = ? WHERE pk = ?", (new, pk))
