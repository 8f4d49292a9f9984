-- A decision's posting rows (0006) in one place: governance_postings_of(decision) gives them,
-- the trigger that keeps them writes what it gives, and so does a bulk load that writes every
-- decision's rows at once with the trigger off (the team bench's COPY). A word over 2,000 bytes
-- has none (a btree entry holds at most 2,704 bytes with the project id).
CREATE FUNCTION governance_postings_of(d decisions)
    RETURNS TABLE (project_id text, term text, gid bigint, f real, words integer)
    LANGUAGE sql STABLE AS $$
    SELECT d.project_id, k.key, d.gid, k.value::real, d.words
      FROM jsonb_each_text(d.frequencies) AS k WHERE octet_length(k.key) <= 2000
$$;

CREATE OR REPLACE FUNCTION governance_postings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM decision_postings
         WHERE project_id = OLD.project_id AND gid = OLD.gid
           AND term IN (SELECT jsonb_object_keys(OLD.frequencies));
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO decision_postings (project_id, term, gid, f, words)
        SELECT * FROM governance_postings_of(NEW);
    END IF;
    RETURN NULL;
END $$;
