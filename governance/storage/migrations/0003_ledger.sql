-- The central copy of each project's audit ledger (`governance ledger ship`): one row per record,
-- its exact JSONL line, chained by (seq, prev, hash) as in the project's own ledger.jsonl. The
-- server checks continuity before it inserts (governance/server/audit.py).
CREATE TABLE central_ledger (
    project_id text NOT NULL,
    seq bigint NOT NULL,
    hash text NOT NULL,
    prev text NOT NULL,
    line text NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, seq));
