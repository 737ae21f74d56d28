"""Where a failing trajectory went wrong: the decisive error step and the agent that took it, on labels and
judgments (features/steps)."""

from __future__ import annotations

from workbench.store.migrations import Conn, migration, script, triggers


@migration
def m017_step_labels(conn: Conn) -> None:
    """A label or judgment of a trajectory may carry ``step`` (the decisive error step: the first step whose mistake
    made the failure inevitable, 0-based over the item's steps) and ``agent`` (who took it). Absent stays NULL: an
    answer without steps, or a verdict that names none. ``label_events`` records both, so a changed step is a
    change of the label with its history, like a changed score; the event triggers are rewritten for that."""
    script(conn, """
ALTER TABLE labels ADD COLUMN step INTEGER CHECK (step IS NULL OR step >= 0);
ALTER TABLE labels ADD COLUMN agent TEXT CHECK (agent IS NULL OR length(agent) > 0);
ALTER TABLE judgments ADD COLUMN step INTEGER CHECK (step IS NULL OR step >= 0);
ALTER TABLE judgments ADD COLUMN agent TEXT CHECK (agent IS NULL OR length(agent) > 0);
ALTER TABLE label_events ADD COLUMN step INTEGER;
ALTER TABLE label_events ADD COLUMN agent TEXT;
""")
    triggers(conn, sqlite="""
DROP TRIGGER label_events_on_insert;
DROP TRIGGER label_events_on_update;
CREATE TRIGGER label_events_on_insert AFTER INSERT ON labels
BEGIN
    INSERT INTO label_events (label_id, item_pk, rater, rubric_name, event, old_score, new_score, rationale, at,
                              step, agent)
    VALUES (NEW.id, NEW.item_pk, NEW.rater, NEW.rubric_name, 'insert', NULL, NEW.score, NEW.rationale, NEW.updated_at,
            NEW.step, NEW.agent);
END;
CREATE TRIGGER label_events_on_update AFTER UPDATE ON labels
WHEN OLD.score IS NOT NEW.score OR OLD.rationale IS NOT NEW.rationale OR OLD.step IS NOT NEW.step
     OR OLD.agent IS NOT NEW.agent
BEGIN
    INSERT INTO label_events (label_id, item_pk, rater, rubric_name, event, old_score, new_score, rationale, at,
                              step, agent)
    VALUES (NEW.id, NEW.item_pk, NEW.rater, NEW.rubric_name, 'update', OLD.score, NEW.score, NEW.rationale,
            NEW.updated_at, NEW.step, NEW.agent);
END;
""", postgres="""
CREATE OR REPLACE FUNCTION label_events_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO label_events (label_id, item_pk, rater, rubric_name, event, old_score, new_score, rationale, at,
                                  step, agent)
        VALUES (NEW.id, NEW.item_pk, NEW.rater, NEW.rubric_name, 'insert', NULL, NEW.score, NEW.rationale,
                NEW.updated_at, NEW.step, NEW.agent);
    ELSIF OLD.score IS DISTINCT FROM NEW.score OR OLD.rationale IS DISTINCT FROM NEW.rationale
          OR OLD.step IS DISTINCT FROM NEW.step OR OLD.agent IS DISTINCT FROM NEW.agent THEN
        INSERT INTO label_events (label_id, item_pk, rater, rubric_name, event, old_score, new_score, rationale, at,
                                  step, agent)
        VALUES (NEW.id, NEW.item_pk, NEW.rater, NEW.rubric_name, 'update', OLD.score, NEW.score, NEW.rationale,
                NEW.updated_at, NEW.step, NEW.agent);
    END IF;
    RETURN NULL;
END $$
""")
