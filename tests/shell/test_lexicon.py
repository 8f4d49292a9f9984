"""Generative: the classes that are read by mechanism rather than by name.

- Programs without an entry, read by their subcommand words (``shell.lexicon``): a program name
  nobody listed, the verb spelled alone or inside ``ns.verb``/``ns:verb``/``verb-noun``/
  ``verbNoun``, after group words and options, under launchers and nested shells.
- Remote addresses (``shell.remote``): a URL or ``user@host:path`` given to a program that is not
  known to only print it.
- Disks and destructive tools (``shell.devices`` and the git, docker, helm, kubectl, terraform
  patterns): any write to a disk device, whatever writes it.

Each class has harmless counterparts built from the same parts, which must stay quiet. The verbs'
meanings below are the issue's, written here, not read from the matrix.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.resolver import known_name
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
EXAMPLES = 200
# primitives the default matrix blocks (or asks about) in DO
LOUD = {"web-fetch", "destructive", "vcs-push", "package-install", "governance-admin",
        "privilege", "shell-unknown", "cycle-advance", "deploy", "deploy-production",
        "deploy-staging"}

VERBS = {
    "destructive": ["destroy", "delete", "drop", "flush", "prune", "purge", "wipe", "reset",
                    "uninstall", "remove", "nuke", "teardown", "fresh", "erase", "truncate"],
    "package-install": ["install", "add", "sync", "reinstall"],
    "vcs-push": ["publish", "push", "release", "upload"],
    "web-fetch": ["download", "pull", "fetch", "clone"],
    "deploy": ["deploy", "rollout"],
}
PAIRS = [(verb, primitive) for primitive, verbs in VERBS.items() for verb in verbs]
LEXICON = SHELL["lexicon"]


def acts(command: str) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}


def _plain_word(word: str) -> bool:
    """A word that is neither a verb, a namespace, nor a program the analysis knows."""
    return (word not in LEXICON["verbs"] and word not in LEXICON["packages"] and
            word not in LEXICON["settings"] and not known_name(SHELL, word) and
            not any(word.startswith(v) or word.endswith(v) for v, _p in PAIRS))


WORDS = st.text("bcfghjkmqvwxz", min_size=3, max_size=8).filter(_plain_word)
PROGRAMS = st.builds(lambda a, b: f"{a}{b}", st.sampled_from(["zx", "qk", "vw", "jq-"]),
                     WORDS).filter(lambda n: not known_name(SHELL, n) and
                                   n not in SHELL["read_only"])
# the nouns cloud and infrastructure CLIs group their verbs under (openstack server delete)
GROUPS = st.sampled_from(["server", "instance", "cluster", "compute", "app", "stack", "bucket",
                          "node", "volume", "service", "function", "project", "domain", "vm",
                          "network", "secret", "key", "image", "container", "job", "queue"])
OPTIONS = st.sampled_from(["--yes", "-y", "--force", "--all", "-q", "--verbose", "--region=eu",
                           "--non-interactive", "-v"])


@st.composite
def spelled(draw: st.DrawFn, verb: str) -> str:
    """The verb as a subcommand word: alone, or inside ns.verb, ns:verb, verb-noun, verbNoun."""
    form = draw(st.sampled_from(["alone", "dot", "colon", "dash", "camel", "under"]))
    other = draw(WORDS)
    return {"alone": verb, "dot": f"{other}.{verb}", "colon": f"{other}:{verb}",
            "dash": f"{verb}-{other}", "camel": verb + other.capitalize(),
            "under": f"{verb}_{other}"}[form]


# options whose value selects tests or names (pytest -k, ctest -R, --filter)
SELECTORS = st.sampled_from(["-k", "-t", "--grep", "--filter", "--focus", "-run", "-R",
                             "--match", "--testNamePattern", "--name"])
# test runners: their words select tests (pytest -k add, jest -t install, rspec -e install)
RUNNERS = st.sampled_from(["pytest", "jest", "vitest", "mocha", "rspec", "ctest", "bats",
                           "phpunit", "ginkgo"])
LAUNCHERS = ["{c}", "sudo {c}", "env CI=1 {c}", "timeout 60 {c}", "bash -c '{c}'",
             "sh -c \"{c}\"", "nohup {c} &", "true && {c}", "f() {{ {c}; }}; f", "( {c} )"]


@st.composite
def unlisted_subcommand(draw: st.DrawFn) -> tuple[str, str]:
    verb, primitive = draw(st.sampled_from(PAIRS))
    program = draw(PROGRAMS)
    words = draw(st.lists(st.one_of(WORDS, GROUPS), max_size=2))
    before = draw(st.lists(OPTIONS, max_size=1))
    after = draw(st.lists(st.one_of(OPTIONS, st.sampled_from(["my-app", "prod", "./x"])),
                          max_size=3))
    command = " ".join([program, *before, *words, draw(spelled(verb)), *after])
    launcher = draw(st.sampled_from(LAUNCHERS))
    return launcher.format(c=command), primitive


@settings(max_examples=EXAMPLES, deadline=None)
@given(unlisted_subcommand())
def test_an_unlisted_programs_subcommand_says_what_it_does(case: tuple[str, str]) -> None:
    command, primitive = case
    found = acts(command)
    if primitive == "deploy":
        assert any(p.startswith("deploy") for p in found), (command, found)
    else:
        assert primitive in found, (command, found)


@st.composite
def unlisted_mention(draw: st.DrawFn) -> str:
    """The same verbs where they are not a subcommand: a help or dry-run question, a file name
    or a path, after a read or build verb, as text to a program that prints."""
    verb, _primitive = draw(st.sampled_from(PAIRS))
    program = draw(PROGRAMS)
    form = draw(st.sampled_from(["help", "dry", "path", "file", "after-read", "after-build",
                                 "printer", "grep", "message", "capital", "selector", "runner"]))
    return {
        "help": f"{program} {verb} --help",
        "dry": f"{program} {verb} --dry-run",
        "path": f"{program} ./{verb}/{draw(WORDS)}",
        "file": f"{program} {verb}.{draw(st.sampled_from(['sh', 'py', 'sql', 'json', 'yaml']))}",
        "after-read": f"{program} {draw(st.sampled_from(['list', 'show', 'status']))} {verb}",
        "after-build": f"{program} {draw(st.sampled_from(['build', 'test', 'lint']))} {verb}",
        "printer": f"{draw(st.sampled_from(['echo', 'printf %s', 'cowsay']))} {verb}",
        "grep": f"grep -rn {verb} src/",
        "message": f"git commit -m '{verb} the old cache'",
        "capital": f"{program} -configuration {verb.capitalize()} build",
        "selector": f"{program} {draw(SELECTORS)} {verb}",
        "runner": f"{draw(RUNNERS)} {draw(st.sampled_from(['', '-x', '-v']))} "
                  f"{draw(st.sampled_from(['-k', '-t', '--grep', '-f', '-e', '']))} {verb}",
    }[form]


@settings(max_examples=EXAMPLES, deadline=None)
@given(unlisted_mention())
def test_a_verb_that_is_not_a_subcommand_stays_quiet(command: str) -> None:
    assert not acts(command) & LOUD, (command, acts(command))


# --- remote addresses ---------------------------------------------------------------------------
LABELS = st.text("abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)
HOSTS = st.builds(lambda a, b, tld: f"{a}.{b}.{tld}", LABELS, LABELS,
                  st.sampled_from(["com", "io", "example", "net", "dev"]))


@st.composite
def urls(draw: st.DrawFn, host: str) -> str:
    scheme = draw(st.sampled_from(["http", "https", "ftp", "oci", "git", "ssh", "wss",
                                   "git+https", "s3"]))
    user = draw(st.sampled_from(["", "me@", "git@"]))
    port = draw(st.sampled_from(["", ":8443", ":22"]))
    path = draw(st.sampled_from(["", "/", "/x.tar.gz", "/org/repo.git", "/api/v1?q=1"]))
    return f"{scheme}://{user}{host}{port}{path}"


@st.composite
def given_remote(draw: st.DrawFn) -> str:
    host = draw(HOSTS)
    url = draw(urls(host))
    scp = f"{draw(st.sampled_from(['git', 'me', 'deploy']))}@{host}:{draw(WORDS)}/x"
    form = draw(st.sampled_from(["unlisted", "unlisted-option", "unlisted-scp", "kubectl",
                                 "helm", "docker-build", "getter", "client"]))
    program = draw(PROGRAMS)
    command = {
        "unlisted": f"{program} {url}",
        "unlisted-option": f"{program} --source={url} --out x",
        "unlisted-scp": f"{program} {scp} ./local",
        "kubectl": f"kubectl apply -n web -f {url}",
        "helm": f"helm install web {url} --version 1.2.3",
        "docker-build": f"docker build -t app {url}",
        "getter": f"terragrunt plan --source git::{url}",
        "client": f"{draw(st.sampled_from(['axel', 'aria2c', 'httpx', 'xh', 'lftp']))} {url}",
    }[form]
    return draw(st.sampled_from(LAUNCHERS)).format(c=command)


@settings(max_examples=EXAMPLES, deadline=None)
@given(given_remote())
def test_a_program_given_a_remote_address_fetches(command: str) -> None:
    assert "web-fetch" in acts(command), (command, acts(command))


@st.composite
def remote_as_data(draw: st.DrawFn) -> str:
    """Remote addresses that are printed, searched, stored or written, and local ones."""
    host = draw(HOSTS)
    url = draw(urls(host))
    local = draw(urls(draw(st.sampled_from(["localhost", "127.0.0.1", "api.localhost"]))))
    program = draw(PROGRAMS)
    return draw(st.sampled_from([
        f"echo {url}", f"printf '%s\\n' {url}", f"grep -rn {url} docs/",
        f"git commit -m 'see {url}'", f"git commit -am {url}", f"git log --grep={url}",
        f"git remote add upstream {url}", f"git remote set-url origin git@{host}:org/x.git",
        f"npm config set registry {url}", f"jq --arg u {url} '.url = $u' a.json",
        f"{program} {local}", f"kubectl apply -f {local}", f"{program} --message {url}",
        f"cat > notes.md <<'EOF'\n{url}\nEOF",
    ]))


@settings(max_examples=EXAMPLES, deadline=None)
@given(remote_as_data())
def test_a_remote_address_as_data_is_not_a_fetch(command: str) -> None:
    assert "web-fetch" not in acts(command), (command, acts(command))


# --- disks and destructive tools ----------------------------------------------------------------
DISKS = st.one_of(
    st.builds(lambda p, x, n: f"/dev/{p}{x}{n}", st.sampled_from(["sd", "hd", "vd", "xvd"]),
              st.sampled_from("abcdz"), st.sampled_from(["", "1", "2"])),
    st.builds(lambda a, b, p: f"/dev/nvme{a}n{b}{p}", st.integers(0, 3), st.integers(1, 2),
              st.sampled_from(["", "p1"])),
    st.builds(lambda n, p: f"/dev/mmcblk{n}{p}", st.integers(0, 2), st.sampled_from(["", "p1"])),
    st.builds(lambda k, n: f"/dev/{k}{n}", st.sampled_from(["disk", "rdisk", "loop", "md",
                                                            "dm-"]), st.integers(0, 9)),
    st.builds(lambda n: f"/dev/mapper/{n}", LABELS),
    st.builds(lambda n: f"/dev/disk/by-id/{n}", LABELS),
)
WRITES = ["cat img > {d}", "cat img >> {d}", "gunzip -c img.gz | tee {d} > /dev/null",
          "pv img | tee -a {d}", "cp img.iso {d}", "dd if=img.iso of={d} bs=4M",
          "sudo sh -c 'cat img > {d}'", "zcat img.gz &> {d}", "ddrescue img {d}",
          "bmaptool copy img {d}", "dcfldd if=img of={d}", "install -m 644 img {d}",
          "curl -o {d} https://x.example/img"]
# forms that are whole commands of their own (not put under a launcher)
COMPOUND = ["cp img \"{d}\"", "D={d}; cat img > $D", "exec 3>{d}; cat img >&3",
            "cat img > \"${{DEV:-{d}}}\"", "cd /dev && cat img > {n}"]


@st.composite
def disk_write(draw: st.DrawFn) -> str:
    disk = draw(DISKS)
    if draw(st.booleans()):
        return draw(st.sampled_from(COMPOUND)).format(d=disk, n=disk[len("/dev/"):])
    form = draw(st.sampled_from(WRITES))
    return draw(st.sampled_from(LAUNCHERS[:6])).format(c=form.format(d=disk))


@settings(max_examples=EXAMPLES, deadline=None)
@given(disk_write())
def test_a_write_to_a_disk_is_destructive(command: str) -> None:
    assert "destructive" in acts(command), (command, acts(command))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["cat log > {d}", "make 2> {d}", "echo hi | tee {d}", "date >> {d}",
                        "cat log > ${{OUT:-{d}}}", "cp x \"{d}\"",
                        "lsblk {x}", "smartctl -a {x}", "cat {x} | head -c 512 | xxd",
                        "blkid {x}"]),
       st.sampled_from(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/2"]),
       DISKS)
def test_output_to_the_terminal_and_reading_disks_stay_quiet(form: str, safe: str,
                                                              disk: str) -> None:
    command = form.format(d=safe, x=disk)
    assert not acts(command) & LOUD, (command, acts(command))


REF = st.sampled_from(["", " stash@{0}", " stash@{2}", " 1"])
NAME = st.sampled_from(["web", "api-staging", "prod", "x1"])
TOOLS = [
    lambda d: f"git stash drop{d(REF)}", lambda d: "git stash clear",
    lambda d: f"git clean {d(st.sampled_from(['-f', '-fd', '-fdx', '-xdf', '--force', '-d -f', '-ffd']))}",
    lambda d: f"git rm {d(st.sampled_from(['-r', '-rf', '-r -q', '-f']))} "
              f"{d(st.sampled_from(['src', 'lib/', 'x.py']))}",
    lambda d: f"git checkout --pathspec-from-file={d(st.sampled_from(['list.txt', '-']))}",
    lambda d: "git lfs prune", lambda d: "git-lfs prune --verify-remote",
    lambda d: f"docker compose rm {d(st.sampled_from(['-f', '-fsv', '--force', '-s -f']))}",
    lambda d: f"helm uninstall {d(NAME)} -n {d(NAME)}", lambda d: f"helm delete {d(NAME)}",
    lambda d: f"kubectl delete {d(st.sampled_from(['pod', 'ns', 'deploy']))} {d(NAME)}",
    lambda d: f"kubectl -n {d(NAME)} delete -f k8s/",
    lambda d: f"terraform destroy {d(st.sampled_from(['', '-auto-approve', '-target=x']))}",
    lambda d: f"terraform -chdir=infra destroy {d(st.sampled_from(['', '-auto-approve']))}",
    lambda d: f"terragrunt run-all destroy {d(st.sampled_from(['', '--terragrunt-non-interactive']))}",
    lambda d: "tofu destroy -auto-approve",
]


@st.composite
def destructive_tool(draw: st.DrawFn) -> str:
    command = draw(st.sampled_from(TOOLS))(draw)
    return draw(st.sampled_from(LAUNCHERS)).format(c=command)


@settings(max_examples=EXAMPLES, deadline=None)
@given(destructive_tool())
def test_destructive_tools_are_destructive(command: str) -> None:
    assert "destructive" in acts(command), (command, acts(command))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from([
    "git stash list", "git stash show -p", "git clean -n", "git clean -nd", "git clean --dry-run",
    "git rm --cached x.py", "git rm -r --cached .", "git lfs ls-files", "helm list -A",
    "helm status web", "kubectl get pods -n default", "kubectl describe pod web-0",
    "terraform plan", "terraform validate", "terragrunt plan", "docker compose ps",
    "docker ps -a", "aws configure list", "gcloud config list", "az account show",
    "npm run test", "zxtool --help", "git log --grep=drop", "echo https://example.com",
    "kubectl delete pod web-0 --dry-run=client", "terraform destroy --help",
]), st.sampled_from(LAUNCHERS[:4]))
def test_everyday_counterparts_stay_quiet(command: str, launcher: str) -> None:
    full = launcher.format(c=command)
    assert not acts(full) & (LOUD - {"privilege"}), (full, acts(full))


@settings(max_examples=50, deadline=None)
@given(PROGRAMS, st.sampled_from([(v, p) for v, p in PAIRS if p != "deploy"]))
def test_the_reason_says_how_the_subcommand_was_read(program: str, pair: tuple[str, str]
                                                     ) -> None:
    verb, primitive = pair
    found = analyse_command(f"{program} {verb} x", SHELL, is_protected=is_protected)
    reasons = [a.reason for a in found if a.primitive == primitive]
    assert reasons and f"{program} is not a command governance knows" in reasons[0]
    assert f"its subcommand {verb!r} reads as {primitive}" in reasons[0]


# --- the cloud CLIs (``lexicon: remote``): every call goes to the provider's service ----------
CLOUD = {"aws": ["s3", "ec2", "sesv2", "ssm", "iam", "lambda"],
         "gcloud": ["compute instances", "storage buckets", "sql instances", "run services"],
         "az": ["vm", "storage account", "webapp", "aks"],
         "doctl": ["compute droplet", "kubernetes cluster"],
         "gsutil": [""]}
READ_VERBS = ["list", "describe", "get", "show", "ls", "cat", "status"]


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(sorted(CLOUD)).flatmap(
    lambda cli: st.tuples(st.just(cli), st.sampled_from(CLOUD[cli]))),
    st.sampled_from(READ_VERBS), st.sampled_from(["", "-widgets", "-instances", "-send-quota"]),
    st.sampled_from(["", " --region us-east-1", " --output json", " gs://bucket/key"]),
    st.sampled_from(LAUNCHERS[:4]))
def test_a_cloud_clis_reads_reach_the_provider_and_its_local_words_stay_quiet(
        cli_group: tuple[str, str], verb: str, noun: str, tail: str, launcher: str) -> None:
    """A read of the provider's service (``aws ec2 describe-instances``, ``gcloud compute
    instances list``, ``gsutil cat gs://b/k``) goes over the internet: ``web-fetch``, as gh's and
    the hosted services' calls are (DO is black-box). Help, version, a dry run and the CLI's local
    settings stay quiet, and a delete is still destructive."""
    cli, group = cli_group
    command = " ".join(w for w in (cli, group, verb + noun) if w) + tail
    assert "web-fetch" in acts(launcher.format(c=command)), command
    for quiet in (f"{cli} --version", f"{cli} help", f"{command} --dry-run"):
        assert not acts(launcher.format(c=quiet)) & (LOUD - {"privilege"}), quiet
    assert "destructive" in acts(" ".join(w for w in (cli, group, "delete") if w) + " x")


@given(st.sampled_from(["aws configure list", "aws configure get region", "gcloud config list",
                        "gcloud auth list", "gcloud info", "az account show", "az account list",
                        "doctl auth list", "mc alias list", "gsutil version"]),
       st.sampled_from(LAUNCHERS[:4]))
def test_a_cloud_clis_local_settings_are_read_on_this_machine(command: str,
                                                               launcher: str) -> None:
    assert acts(launcher.format(c=command)) - {"privilege"} <= {"shell-read", "shell-execute"}, command


# --- selectors are not subcommands ----------------------------------------------------------------
@pytest.mark.parametrize("command", [
    "pytest -k add", "pytest -k install", "pytest -x -k 'install and not slow' tests/",
    "python -m pytest -k install", "uv run pytest -k add", "jest -t install", "bats -f add tests",
    "npm test -- --grep install", "cargo test add", "go test -run Install ./...",
    "make test ARGS=install", "ctest -R install", "mocha --grep install", "rspec -e install",
    "zqtool -k install", "zqtool --filter install", "zqtool --name install list",
])
def test_a_test_selector_is_not_a_subcommand(command: str) -> None:
    assert not acts(command) & LOUD, (command, acts(command))


@pytest.mark.parametrize("command, primitive", [
    ("zqtool --filter web destroy", "destructive"),   # the value passed over, the verb read
    ("zqtool -k key install pkg", "package-install"),
    ("zqtool -t prod delete cluster", "destructive"),
    ("zqtool --yes destroy", "destructive"),          # a flag, not a selector
    ("terragrunt -k x destroy", "destructive"),
    ("pytest -k add; zqtool destroy", "destructive"),
])
def test_a_verb_after_a_selectors_value_is_still_read(command: str, primitive: str) -> None:
    assert primitive in acts(command), (command, acts(command))
