-- Each project's posting lists as rows: one per decision and searchable word, with the word's
-- weighted frequency in it and the decision's length, under a btree on (project, word) that holds
-- them. A project's match reads its query words' rows from that index alone and sums their BM25
-- parts (governance/storage/bm25.py), never a decision: at 1,000,000 decisions over 100 projects
-- it took 0.95 ms where the GIN match on own_search, which read and scored each matched decision,
-- took 2.8 ms, and ranked the same decisions in the same order.
-- A trigger keeps the rows: every route that inserts, deletes or rewrites a decision's words moves
-- its postings with it. A word over 2,000 bytes has none (a btree entry holds at most 2,704 bytes
-- with the project id); a query holding one matches on `search`, as the team-wide and newest-only
-- matches do. own_search (0005), which these rows replace, is dropped.
LOCK TABLE decisions IN SHARE MODE;   -- no decision is written between the copy and the trigger

CREATE TABLE decision_postings (
    project_id text NOT NULL,
    term text NOT NULL,
    gid bigint NOT NULL,
    f real NOT NULL,          -- the word's frequency in the decision, weighted by field
    words integer NOT NULL);  -- the decision's number of words

CREATE FUNCTION governance_postings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM decision_postings
         WHERE project_id = OLD.project_id AND gid = OLD.gid
           AND term IN (SELECT jsonb_object_keys(OLD.frequencies));
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO decision_postings (project_id, term, gid, f, words)
        SELECT NEW.project_id, k.key, NEW.gid, k.value::real, NEW.words
          FROM jsonb_each_text(NEW.frequencies) AS k WHERE octet_length(k.key) <= 2000;
    END IF;
    RETURN NULL;
END $$;

INSERT INTO decision_postings (project_id, term, gid, f, words)
SELECT d.project_id, k.key, d.gid, k.value::real, d.words
  FROM decisions d, jsonb_each_text(d.frequencies) AS k WHERE octet_length(k.key) <= 2000;
CREATE INDEX decision_postings_words ON decision_postings (project_id, term) INCLUDE (gid, f, words);

CREATE TRIGGER postings_insert AFTER INSERT ON decisions FOR EACH ROW
    EXECUTE FUNCTION governance_postings();
CREATE TRIGGER postings_update AFTER UPDATE OF project_id, gid, frequencies, words ON decisions
    FOR EACH ROW EXECUTE FUNCTION governance_postings();
CREATE TRIGGER postings_delete AFTER DELETE ON decisions FOR EACH ROW
    EXECUTE FUNCTION governance_postings();

DROP INDEX decisions_own_search;
ALTER TABLE decisions DROP COLUMN own_search;
DROP FUNCTION governance_own_words(text, tsvector);
