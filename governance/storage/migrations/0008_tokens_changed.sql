-- Every change to the tokens (minted, revoked, expired by hand, deleted) is announced on the
-- channel governance_tokens when it commits. A server listening there keeps the tokens it looked
-- up until one changes (governance/server/token_watch.py), rather than looking each one up again
-- every few seconds, and a revoke takes effect as soon as it is announced.
CREATE FUNCTION governance_tokens_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('governance_tokens', TG_OP);
    RETURN NULL;
END $$;

CREATE TRIGGER tokens_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tokens
    FOR EACH STATEMENT EXECUTE FUNCTION governance_tokens_changed();
