-- Short pending lists for the GIN indexes. A GIN index gathers the words of new rows in a pending
-- list until it holds gin_pending_list_limit (4 MB by default) or a vacuum merges it, and every
-- match reads that whole list, one row at a time, before the index proper. Under a steady stream
-- of recorded decisions the list grew to some 300 pages (4,400 rows), and a match spent 2.9 ms in
-- it for 0.1 ms in its posting lists. At 64 kB the list is merged every two hundred
-- decisions or so, which a record's time does not show, and a match reads at most 8 pages of it.
ALTER INDEX decisions_search SET (gin_pending_list_limit = 64);
ALTER INDEX decisions_tags SET (gin_pending_list_limit = 64);
SELECT gin_clean_pending_list('decisions_search'::regclass),
       gin_clean_pending_list('decisions_tags'::regclass);
