-- Per-agent credentials of the team's servers (governance/server/identity.py): only the SHA-256 of
-- each token is kept, never the token. project_id NULL: a team-wide token.
CREATE TABLE tokens (
    token_hash text PRIMARY KEY,
    agent text NOT NULL,
    role text NOT NULL CHECK (role IN ('agent', 'reviewer', 'admin')),
    project_id text,
    created_at double precision NOT NULL,
    expires_at double precision,
    revoked_at double precision);
CREATE INDEX tokens_agent ON tokens (agent);
