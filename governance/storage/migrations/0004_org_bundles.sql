-- The organisation's signed bundles a team server publishes (`governance org publish`, served at
-- GET /org/bundle; governance/server/org_bundle.py): one row per version, `document` the exact
-- bytes the admin published. Versions only go up: the server refuses a version at or below the
-- highest stored, and serves the highest.
CREATE TABLE org_bundles (
    version bigint PRIMARY KEY CHECK (version >= 1),
    issued text NOT NULL,
    document bytea NOT NULL,
    published_at timestamptz NOT NULL DEFAULT now(),
    published_by text NOT NULL);
