-- The decision store on PostgreSQL: every row carries its project's id.
-- Mirrors the SQLite engine (governance/storage/sqlite.py): decisions with their searchable words,
-- the number of decisions holding each word, sentence vectors, calibration sums kept by triggers.

-- A GIN index over (project_id, search) needs btree_gin for the text column (trusted since
-- PostgreSQL 13: the database's owner may create it).
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- One row per project; "decisions" numbers its decisions (seq), so the newest N of a project are
-- seq > decisions - N, as on SQLite; "words" counts the words they hold (BM25's mean length).
CREATE TABLE projects (
    project_id text PRIMARY KEY,
    decisions bigint NOT NULL DEFAULT 0,
    words bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now());

CREATE TABLE decisions (
    gid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id text NOT NULL REFERENCES projects (project_id),
    seq bigint NOT NULL,
    id text NOT NULL,
    agent_id text NOT NULL,
    description text NOT NULL,
    category text NOT NULL,
    stakes text NOT NULL,
    confidence double precision NOT NULL,
    reasons text NOT NULL,        -- JSON, as written (jsonb would reorder a context's keys)
    tags text NOT NULL,           -- JSON
    pattern text NOT NULL,
    context text NOT NULL,        -- JSON
    state text, cycle text, phase text, work_item text,
    created_at double precision NOT NULL,   -- epoch seconds, as on SQLite
    outcome text, outcome_note text, reviewed_at double precision,
    tag_list text[] NOT NULL,     -- the tags, for the tag filter
    -- the searchable words, split in Python as for SQLite (governance/storage/text.py), labelled
    -- A description, B tags, C pattern, D reasons: the GIN index finds a query's matches ...
    search tsvector NOT NULL,
    -- ... and BM25 ranks them as FTS5 does: each word's frequency, weighted by its fields, and
    -- the number of words
    frequencies jsonb NOT NULL,
    words integer NOT NULL,
    UNIQUE (project_id, id),
    UNIQUE (project_id, seq));
CREATE INDEX decisions_search ON decisions USING gin (project_id, search);
CREATE INDEX decisions_tags ON decisions USING gin (project_id, tag_list);
CREATE INDEX decisions_created ON decisions (project_id, created_at);
CREATE INDEX decisions_calibration ON decisions (project_id, agent_id, category, outcome);

CREATE TABLE decision_terms (
    project_id text NOT NULL,
    term text NOT NULL,
    docs bigint NOT NULL,
    PRIMARY KEY (project_id, term));

CREATE TABLE decision_vectors (
    gid bigint PRIMARY KEY REFERENCES decisions (gid) ON DELETE CASCADE,
    project_id text NOT NULL,
    vec bytea NOT NULL);          -- float32, as numpy writes it
CREATE INDEX decision_vectors_project ON decision_vectors (project_id);

-- Calibration per project x agent x category x confidence bin, kept by the triggers below in the
-- transaction that records or reviews (a review changes one row); team-wide = summed over projects.
CREATE TABLE calibration_sums (
    project_id text NOT NULL,
    agent_id text NOT NULL,
    category text NOT NULL,
    bin integer NOT NULL,
    n bigint NOT NULL,
    conf double precision NOT NULL,
    score double precision NOT NULL,
    conf2 double precision NOT NULL,
    conf_score double precision NOT NULL,
    score2 double precision NOT NULL,
    PRIMARY KEY (project_id, agent_id, category, bin));

CREATE FUNCTION governance_score(outcome text) RETURNS double precision
    LANGUAGE sql IMMUTABLE AS
$$ SELECT CASE outcome WHEN 'success' THEN 1.0 WHEN 'partial' THEN 0.5
                       WHEN 'failure' THEN 0.0 END $$;

CREATE FUNCTION governance_bin(confidence double precision) RETURNS integer
    LANGUAGE sql IMMUTABLE AS
$$ SELECT least(trunc(confidence * 5)::integer, 4) $$;

CREATE FUNCTION calibration_sums_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s double precision;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.outcome IN ('success', 'partial', 'failure') THEN
        s := governance_score(OLD.outcome);
        UPDATE calibration_sums SET n = n - 1, conf = conf - OLD.confidence, score = score - s,
               conf2 = conf2 - OLD.confidence * OLD.confidence,
               conf_score = conf_score - OLD.confidence * s, score2 = score2 - s * s
         WHERE project_id = OLD.project_id AND agent_id = OLD.agent_id
           AND category = OLD.category AND bin = governance_bin(OLD.confidence);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.outcome IN ('success', 'partial', 'failure') THEN
        s := governance_score(NEW.outcome);
        INSERT INTO calibration_sums AS c VALUES (
            NEW.project_id, NEW.agent_id, NEW.category, governance_bin(NEW.confidence), 1,
            NEW.confidence, s, NEW.confidence * NEW.confidence, NEW.confidence * s, s * s)
        ON CONFLICT (project_id, agent_id, category, bin) DO UPDATE SET
            n = c.n + 1, conf = c.conf + excluded.conf, score = c.score + excluded.score,
            conf2 = c.conf2 + excluded.conf2, conf_score = c.conf_score + excluded.conf_score,
            score2 = c.score2 + excluded.score2;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER calibration_insert AFTER INSERT ON decisions FOR EACH ROW
    WHEN (NEW.outcome IS NOT NULL) EXECUTE FUNCTION calibration_sums_apply();
CREATE TRIGGER calibration_update AFTER UPDATE OF outcome, confidence, category, agent_id
    ON decisions FOR EACH ROW EXECUTE FUNCTION calibration_sums_apply();
CREATE TRIGGER calibration_delete AFTER DELETE ON decisions FOR EACH ROW
    EXECUTE FUNCTION calibration_sums_apply();
