"""Generative: deleting HTTP requests and the hosted services' CLIs.

- An HTTP ``DELETE`` (curl ``-X``/``--request``/``-XDELETE``, wget ``--method``, httpie and xh's
  ``METHOD`` word, gh/glab api ``-X``) is destructive on any host, loopback included; a ``POST``
  (named or implied by a body) to a path whose segment starts with a deletion verb is too.
  ``GET`` and plain requests to loopback stay ``local-request``.
- The CLIs of hosted services (``lexicon: destructive`` with a web-fetch default): a deletion verb
  is destructive, any other call is a web-fetch, and help, version and local work stay quiet.
- Listed programs whose entry says ``lexicon: destructive`` (vault): a deletion verb no pattern
  names is destructive.

The hosts, paths and verbs below are written here, not read from the matrix.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
EXAMPLES = 150

LOCAL = st.sampled_from(["localhost", "127.0.0.1", "localhost:9200", "127.0.0.1:8001",
                         "http://localhost:7700", "http://127.0.0.1:9090", "[::1]:8080"])
REMOTE = st.sampled_from(["https://api.example.com", "http://es.internal:9200",
                          "api.stripe.com"])
SEGMENTS = st.lists(st.sampled_from(["indexes", "logs-2024", "services", "my-route", "v1",
                                     "users", "42", "_all", "plugins"]), min_size=0, max_size=3)
QUIET = st.sampled_from(["-s", "-sS", "-v", "-H 'Accept: application/json'", "--max-time 5",
                         "-o /dev/null"])
LAUNCHERS = ["{c}", "sudo {c}", "env A=1 {c}", "timeout 9 {c}", "bash -c \"{c}\"", "( {c} )",
             "true && {c}"]


def acts(command: str) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}


def url(host: str, segments: list[str]) -> str:
    return "/".join([host, *segments])


@st.composite
def deleting_request(draw: st.DrawFn) -> str:
    target = url(draw(st.one_of(LOCAL, REMOTE)), draw(SEGMENTS))
    method = draw(st.sampled_from(["DELETE", "delete", "Delete"]))
    extra = " ".join(draw(st.lists(QUIET, max_size=2)))
    form = draw(st.sampled_from(["-X {m} {u}", "--request {m} {u}", "-X{m} {u}", "{u} -X {m}",
                                 "--request={m} {u}"]))
    curl = " ".join(["curl", extra, form.format(m=method.upper(), u=f"'{target}'")])
    command = draw(st.sampled_from([
        curl, f"wget --method={method.upper()} {target}", f"http {method.upper()} {target}",
        f"xh {method} {target}", f"curlie -X {method.upper()} {target}"]))
    return draw(st.sampled_from(LAUNCHERS)).format(c=command)


@settings(max_examples=EXAMPLES, deadline=None)
@given(deleting_request())
def test_an_http_delete_is_destructive_on_any_host(command: str) -> None:
    assert "destructive" in acts(command), command


@st.composite
def deleting_post(draw: st.DrawFn) -> str:
    verb = draw(st.sampled_from(["delete", "destroy", "drop", "purge", "truncate", "wipe"]))
    segment = draw(st.sampled_from([f"_{verb}_by_query", f"{verb}_series", verb, f"{verb}-all"]))
    target = url(draw(LOCAL), [*draw(SEGMENTS), segment])
    form = draw(st.sampled_from(["curl -X POST '{u}'", "curl -d '{{}}' '{u}'",
                                 "curl --json '{{}}' '{u}'", "curl -XPUT '{u}'",
                                 "http POST {u} a=1"]))
    return form.format(u=target)


@settings(max_examples=EXAMPLES, deadline=None)
@given(deleting_post())
def test_a_write_to_a_deleting_path_is_destructive(command: str) -> None:
    assert "destructive" in acts(command), command


@st.composite
def ordinary_local_request(draw: st.DrawFn) -> str:
    target = url(draw(LOCAL), draw(SEGMENTS))
    extra = " ".join(draw(st.lists(QUIET, max_size=2)))
    form = draw(st.sampled_from(["curl {x} {u}", "curl {x} -X GET {u}", "curl {x} -I {u}",
                                 "curl {x} -X POST -d '{{}}' {u}", "curl {x} -XHEAD {u}",
                                 "http GET {u}", "http {u}", "xh get {u}", "wget -qO- {u}",
                                 "curl {x} --request OPTIONS {u}"]))
    return form.format(x=extra, u=f"'{target}'")


@settings(max_examples=EXAMPLES, deadline=None)
@given(ordinary_local_request())
def test_other_requests_to_this_machine_stay_local(command: str) -> None:
    found = acts(command)
    assert "destructive" not in found and "web-fetch" not in found, (command, found)


def test_a_method_known_only_at_run_time_is_unknown() -> None:
    assert "shell-unknown" in acts('curl -X "$METHOD" http://localhost:9200/logs')


def test_forge_apis_delete_with_their_method_option() -> None:
    for command in ("gh api -X DELETE repos/o/r/releases/1",
                    "glab api --method DELETE /projects/1/hooks/2",
                    "glab api -X DELETE projects/9"):
        assert "destructive" in acts(command), command
    assert "destructive" not in acts("gh api repos/o/r/releases")
    assert "destructive" not in acts("glab api projects/1")


HOSTED = st.sampled_from(["op", "doppler", "wrangler", "fastly", "stripe", "circleci", "ldcli",
                          "unleash", "pd", "newrelic", "glab"])
NOUNS = st.sampled_from(["item", "secrets", "service", "customers", "flags", "ci", "schedule",
                         "kv:key", "r2 bucket"])
NAMES = st.sampled_from(["my-flag", "Prod", "abc123", "--project backend", "-y"])


@st.composite
def hosted_call(draw: st.DrawFn, verbs: list[str]) -> str:
    parts = [draw(HOSTED), draw(NOUNS), draw(st.sampled_from(verbs)),
             *draw(st.lists(NAMES, max_size=2))]
    return draw(st.sampled_from(LAUNCHERS)).format(c=" ".join(parts))


@settings(max_examples=EXAMPLES, deadline=None)
@given(hosted_call(["delete", "destroy", "remove", "purge", "revoke", "forget", "delete-all"]))
def test_a_hosted_services_deletion_is_destructive(command: str) -> None:
    assert "destructive" in acts(command), command


@settings(max_examples=EXAMPLES, deadline=None)
@given(hosted_call(["list", "get", "describe", "view", "tail", "search", "archive"]))
def test_a_hosted_services_other_calls_are_web_fetches(command: str) -> None:
    found = acts(command)
    assert "web-fetch" in found and "destructive" not in found, (command, found)


@settings(max_examples=60, deadline=None)
@given(HOSTED.filter(lambda p: p != "glab"),
       st.sampled_from(["help", "version", "-v", "--version", "--help", "dev", "configure"]))
def test_a_hosted_services_own_help_and_local_work_stay_quiet(program: str, word: str) -> None:
    found = acts(f"{program} {word}")
    assert not found & {"web-fetch", "destructive", "shell-unknown"}, (program, word, found)


def test_a_run_under_a_secrets_cli_is_read_as_its_command() -> None:
    assert "destructive" in acts("doppler run -- rm -rf /")
    assert "destructive" in acts("op run -- git reset --hard")


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["policy delete my-policy", "lease revoke -prefix secret/",
                        "token revoke abc", "auth disable github", "-namespace=admin auth disable x",
                        "secrets disable kv/", "kv delete secret/app"]),
       st.sampled_from(LAUNCHERS))
def test_vaults_deletions_are_destructive(tail: str, launcher: str) -> None:
    assert "destructive" in acts(launcher.format(c=f"vault {tail}")), tail


def test_vaults_reads_are_not_destructive() -> None:
    for tail in ("kv get secret/app", "status", "policy read default", "token lookup"):
        assert "destructive" not in acts(f"vault {tail}"), tail


OPTION_VERBS = st.sampled_from(["delete", "remove", "purge", "drop", "destroy", "wipe"])


@st.composite
def option_driven(draw: st.DrawFn) -> tuple[str, bool]:
    """An unlisted program driven by options; whether a word comes before the deleting option
    (then the option is its subcommand's)."""
    program = draw(st.sampled_from(["zq-topics", "qkadmin", "vwctl"]))
    before = draw(st.lists(st.sampled_from(["--bootstrap-server localhost:9092", "--alter",
                                            "-p /prod", "--zookeeper zk:2181"]), max_size=2))
    sub = draw(st.sampled_from(["", "unlock", "zxq"]))
    verb = draw(OPTION_VERBS)
    option = draw(st.sampled_from([f"--{verb}", f"--{verb}-config retention.ms",
                                   f"--{verb}-all"]))
    after = draw(st.sampled_from(["", "--topic payments", "--group billing"]))
    words = [program, sub, *before, option, after]
    return " ".join(w for w in words if w), bool(sub)


@settings(max_examples=EXAMPLES, deadline=None)
@given(option_driven())
def test_a_deleting_option_of_an_option_driven_program_is_destructive(
        case: tuple[str, bool]) -> None:
    command, commanded = case
    assert ("destructive" in acts(command)) is not commanded, command


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["zq", "qk", "vw"]), OPTION_VERBS, st.sampled_from(["records", "all", "x"]))
def test_a_deleting_verb_in_an_unlisted_programs_name_is_destructive(
        head: str, verb: str, tail: str) -> None:
    assert "destructive" in acts(f"{head}-{verb}-{tail} --bootstrap-server h:1")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["zq", "qk", "vw"]), st.sampled_from(["--rm", "--reset", "--prune",
                                                           "--release", "--verbose"]))
def test_options_that_only_look_like_deletion_stay_quiet(program: str, option: str) -> None:
    assert "destructive" not in acts(f"{program}ctl {option} x"), option


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["'PATH=/usr/bin'", "'A=1 B=2'", "-", "'-i'"]),
       st.sampled_from(["git reset --hard", "rm -rf /", "git clean -fdx"]),
       st.sampled_from(["-S {s} {c}", "--split-string={s} {c}"]))
def test_env_split_string_runs_the_arguments_after_it(string: str, command: str,
                                                      form: str) -> None:
    if string == "-":
        string = "'X=1'"
    assert "destructive" in acts("env " + form.format(s=string, c=command)), (string, command)


def test_env_split_string_of_a_harmless_command_stays_quiet() -> None:
    assert acts("env -S 'A=1' ls -la") == {"shell-read"}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["--config-env include.path=X", "--config-env a.b=C", "--super-prefix p/",
                        "-C .", "-c a=b"]))
def test_gits_global_options_with_a_value_do_not_hide_the_subcommand(option: str) -> None:
    assert "destructive" in acts(f"git {option} reset --hard"), option
    assert "destructive" not in acts(f"git {option} status"), option


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["user", "policy", "bucket", "group"]),
       st.sampled_from(["remove", "delete", "disable", "rm"]))
def test_mc_admin_removals_are_destructive(noun: str, verb: str) -> None:
    assert "destructive" in acts(f"mc admin {noun} {verb} myminio thing")
    assert "destructive" not in acts(f"mc admin {noun} list myminio")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["jenkins-cli.jar", "tools/admin-cli.jar", "/opt/x/cli.jar"]),
       st.sampled_from(["", "-s http://localhost:8080", "-auth @creds -s http://ci:8080/"]),
       st.sampled_from(["delete-job", "delete-builds", "delete-node", "purge-queue"]))
def test_the_subcommand_of_a_jar_run_by_java_is_read(jar: str, options: str, verb: str) -> None:
    command = f"java -Xmx1g -jar {jar} {options} {verb} my-job"
    assert "destructive" in acts(command), command
    assert "destructive" not in acts(f"java -jar {jar} {options} list-jobs")
