-- Each project's own search index. The GIN index on (project_id, search) keeps one posting list
-- per word for the whole team: a project's match read the lists of every project holding its
-- words (at 1,000,000 decisions over 100 projects, most of a preAction's time). own_search holds
-- the same words, each named with its project (the first 8 hex digits of md5(project_id), a colon,
-- the word: short, and alike for every row of a project), so its GIN index keeps one posting list
-- per project and word, and a project's match reads its own decisions only. Two projects whose
-- names share those 8 digits share lists: the match still filters on project_id. Words are
-- indexed without positions (BM25 reads `frequencies`); a word over 2,037 bytes is left out (the
-- name makes it too long for a tsvector), and a query holding one matches on `search` instead.
-- The team-wide match (every project) keeps using `search`.
CREATE FUNCTION governance_own_words(project text, search tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT array_to_tsvector(ARRAY(
       SELECT left(md5(project), 8) || ':' || word FROM unnest(tsvector_to_array(search)) AS word
        WHERE octet_length(word) <= 2037)) $$;

ALTER TABLE decisions ADD COLUMN own_search tsvector
    GENERATED ALWAYS AS (governance_own_words(project_id, search)) STORED;
CREATE INDEX decisions_own_search ON decisions USING gin (own_search);
