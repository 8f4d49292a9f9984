"""Generative: commands that only print, stay on this machine, or are refused, read as such.

- A wrapper's help, version or query option (``ssh --help``, ``command -pv CMD``) runs nothing;
  an option a wrapper with a complete list does not take (``command -px CMD``) is refused.
- ``scp`` and ``rsync`` without a ``host:`` argument copy on this machine; ``socat`` between
  standard input and output, Unix sockets and loopback is a ``local-request``.
- ``git checkout`` refuses an option its complete table does not list, and paths together with
  a new branch, ``--track`` or ``--detach`` (checked against git itself).
- GNU ``truncate`` without ``-s`` or ``-r`` refuses to run.
- The verb lexicon: ``update``/``upgrade``/``submit`` act only for a program of their kind or
  after a package namespace; ``get`` after a plugin namespace lists; ``rollback`` after a
  deployment namespace is a deploy; the text of a message option is data.

Each class has its counterpart that still acts, built from the same parts.
"""

from __future__ import annotations

import string
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.resolver import known_name
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
EXAMPLES = 60


def acts(command: str) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}


NAMES = st.text("abcdefghijklmnoqrstuvwxyz", min_size=3, max_size=7)
PATHS = st.builds(lambda d, n, e: f"{d}{n}{e}", st.sampled_from(["", "./", "/tmp/", "src/",
                                                                   "~/x/"]),
                  NAMES, st.sampled_from(["", ".txt", ".tar.gz", "/"]))
HOSTS = st.builds(lambda u, h: f"{u}{h}", st.sampled_from(["", "me@", "deploy@"]),
                  st.sampled_from(["backup.example.com", "10.0.0.5", "build", "host"]))
DESTRUCTIVE = st.sampled_from(["git reset --hard", "rm -rf /srv/data", "git clean -fdx"])


# --- wrappers: help, version, query options ------------------------------------------------

@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["ssh", "mosh", "autossh"]), st.sampled_from(["--help", "--version"]),
       st.lists(HOSTS, max_size=1), st.lists(DESTRUCTIVE, max_size=1))
def test_a_remote_shell_asked_for_help_connects_nowhere(program: str, flag: str,
                                                        host: list[str], rest: list[str]) -> None:
    found = acts(" ".join([program, flag, *host, *rest]))
    assert found == {"shell-read"}


@settings(max_examples=EXAMPLES, deadline=None)
@given(HOSTS, st.sampled_from(["-v", "-4", "-p 2222", "-i key", "-o BatchMode=yes"]))
def test_a_remote_shell_with_other_options_still_connects(host: str, option: str) -> None:
    assert "web-fetch" in acts(f"ssh {option} {host} uptime")


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.permutations("pvV"), st.integers(1, 3), st.booleans(), DESTRUCTIVE)
def test_command_with_a_query_letter_anywhere_in_a_cluster_only_looks_up(
        letters: list[str], size: int, dashes: bool, inner: str) -> None:
    cluster = "".join(letters[:size])
    if "v" not in cluster and "V" not in cluster:
        cluster += "v"
    command = f"command -{cluster} {'-- ' if dashes else ''}{inner}"
    assert acts(command) == {"shell-read"}
    assert "destructive" in acts(f"command -p {'-- ' if dashes else ''}{inner}")


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([c for c in string.ascii_letters if c not in "pvV"]), DESTRUCTIVE)
def test_command_refuses_an_option_bash_does_not_give_it(letter: str, inner: str) -> None:
    ran = subprocess.run(["bash", "-c", f"command -p{letter} true"], capture_output=True)
    assert ran.returncode != 0                  # bash itself refuses it: nothing runs
    assert "destructive" not in acts(f"command -p{letter} {inner}")


# --- copies and sockets on this machine -----------------------------------------------------

@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["scp", "rsync -a", "scp -r", "rsync -av"]),
       st.lists(PATHS, min_size=1, max_size=3), PATHS)
def test_a_copy_without_a_host_stays_on_this_machine(program: str, sources: list[str],
                                                     target: str) -> None:
    found = acts(" ".join([program, *sources, target]))
    assert "web-fetch" not in found and "file-write" in found


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["scp", "rsync -a"]), PATHS, HOSTS, PATHS, st.booleans())
def test_a_copy_to_or_from_a_host_is_a_fetch(program: str, local: str, host: str, remote: str,
                                             upload: bool) -> None:
    there = f"{host}:{remote}"
    words = [local, there] if upload else [there, local]
    assert "web-fetch" in acts(" ".join([program, *words]))


LOCAL_ENDS = st.sampled_from(["STDIO", "-", "stdin", "UNIX-CONNECT:/run/app.sock",
                              "unix-client:/tmp/x", "/var/run/haproxy.sock", "/run/docker.sock",
                              "TCP:localhost:8080", "tcp4:127.0.0.1:6379"])
REMOTE_ENDS = st.builds(lambda kind, host, port: f"{kind}:{host}:{port}",
                        st.sampled_from(["TCP", "tcp4", "UDP", "OPENSSL", "ssl"]),
                        st.sampled_from(["db.example.com", "203.0.113.9", "api.example.org"]),
                        st.integers(1, 65535))


@settings(max_examples=EXAMPLES, deadline=None)
@given(LOCAL_ENDS, LOCAL_ENDS, st.sampled_from(["", "echo 'show stat' | ", "-d -d "]))
def test_socat_between_local_ends_is_a_local_request(a: str, b: str, lead: str) -> None:
    command = f"{lead}socat {a} {b}" if not lead.startswith("-") else f"socat {lead}{a} {b}"
    found = acts(command)
    assert "web-fetch" not in found and "local-request" in found


@settings(max_examples=EXAMPLES, deadline=None)
@given(LOCAL_ENDS, REMOTE_ENDS, st.booleans())
def test_socat_to_a_remote_host_is_a_fetch(local: str, remote: str, first: bool) -> None:
    ends = [remote, local] if first else [local, remote]
    assert "web-fetch" in acts(f"socat {' '.join(ends)}")


@pytest.mark.parametrize("address", ["TCP-LISTEN:8080", "EXEC:sh", "/etc/hosts", "CREATE:/tmp/x"])
def test_socat_ends_that_are_not_requests_stay_a_fetch(address: str) -> None:
    assert "web-fetch" in acts(f"socat STDIO {address}")


@pytest.mark.parametrize(("command", "fetches"), [
    ("rclone config", False), ("rclone listremotes", False), ("rclone version", False),
    ("rclone config reconnect remote:", True), ("rclone md5sum remote:bucket", True),
    ("rclone ls remote:bucket", True), ("rclone copy remote:a /tmp/a", True)])
def test_rclone_talks_to_storage_except_in_its_local_subcommands(command: str,
                                                                 fetches: bool) -> None:
    assert ("web-fetch" in acts(command)) is fetches


# --- git checkout: what git refuses ---------------------------------------------------------

CHECKOUT = set(SHELL["commands"]["git"]["options"]["checkout"])
UNKNOWN_LONG = NAMES.map(lambda n: f"--{n}-x").filter(
    lambda o: not any(k.startswith(o) for k in CHECKOUT))
NEW_BRANCH = st.sampled_from(["-b new", "--orphan new", "--track", "-t", "--detach",
                              "-d", "--track=direct", "-qb new"])


@settings(max_examples=EXAMPLES, deadline=None)
@given(UNKNOWN_LONG, st.sampled_from(["", " 3"]), st.sampled_from(["main f", "main -- f", "."]))
def test_git_checkout_refuses_an_option_its_table_does_not_list(option: str, value: str,
                                                                rest: str) -> None:
    found = acts(f"git checkout {option}{value} {rest}")
    assert "destructive" not in found and "file-write" not in found


@settings(max_examples=EXAMPLES, deadline=None)
@given(NEW_BRANCH, st.sampled_from(["main f", "main -- f", "-- f", "direct main", "main f g"]))
def test_git_checkout_refuses_paths_with_a_new_branch(option: str, rest: str) -> None:
    assert "destructive" not in acts(f"git checkout {option} {rest}")


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["", "-q ", "--no-overlay ", "--ours ", "-3 ", "--conflict merge "]),
       st.sampled_from(["main f", "main -- f", "-- f", "HEAD~1 src/"]))
def test_git_checkout_of_paths_with_known_options_stays_destructive(option: str,
                                                                    rest: str) -> None:
    assert "destructive" in acts(f"git checkout {option}{rest}")


@pytest.mark.parametrize("args", [["--track", "direct", "main"], ["--unified", "3", "main"],
                                  ["-b", "new", "main", "f"], ["--track", "main", "f"],
                                  ["--detach", "main", "f"], ["-x", "main", "f"]])
def test_git_itself_refuses_these_checkouts(tmp_path: Path, args: list[str]) -> None:
    def git(*words: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *words],
                              cwd=tmp_path, capture_output=True)

    git("init", "-q", "-b", "main")
    (tmp_path / "f").write_text("one\n")
    git("add", "f")
    git("commit", "-qm", "one")
    (tmp_path / "f").write_text("changed\n")
    assert git("checkout", *args).returncode != 0
    assert (tmp_path / "f").read_text() == "changed\n"      # nothing was overwritten
    assert "destructive" not in acts("git checkout " + " ".join(args))


# --- truncate -------------------------------------------------------------------------------

@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(PATHS, min_size=1, max_size=3),
       st.sampled_from(["-s 0", "-s0", "--size=0", "--size 0", "-r ref", "-cs 0"]))
def test_truncate_cuts_only_when_given_a_size(paths: list[str], size: str) -> None:
    assert "destructive" not in acts(" ".join(["truncate", *paths]))
    assert "destructive" in acts(" ".join(["truncate", size, *paths]))


# --- the verb lexicon -----------------------------------------------------------------------

PROGRAMS = NAMES.map(lambda n: f"zq{n}").filter(
    lambda n: not known_name(SHELL, n) and n not in SHELL["read_only"]
    and not n.endswith(("pm", "pkg")))
NOUNS = st.sampled_from(["flag", "form", "record", "user", "device", "ticket", "config"])


@settings(max_examples=EXAMPLES, deadline=None)
@given(PROGRAMS, st.lists(NOUNS, max_size=1), st.sampled_from(["update", "upgrade", "submit"]),
       st.sampled_from(["", " my-item", " my-item --name renamed"]))
def test_a_resource_update_is_no_act(program: str, noun: list[str], verb: str,
                                     rest: str) -> None:
    found = acts(" ".join([program, *noun, verb]) + rest)
    assert not found & {"package-install", "vcs-push"}


@settings(max_examples=EXAMPLES, deadline=None)
@given(PROGRAMS, st.sampled_from(["pm", "pkg", "-get"]), st.sampled_from(["update", "upgrade"]))
def test_a_package_manager_update_installs(stem: str, end: str, verb: str) -> None:
    program = stem + end
    if known_name(SHELL, program):
        return
    assert "package-install" in acts(f"{program} {verb}")
    assert "package-install" in acts(f"{stem} plugin {verb} thing")


@settings(max_examples=EXAMPLES, deadline=None)
@given(PROGRAMS, st.sampled_from(["plugin", "plugins", "extension", "addon"]),
       st.sampled_from(["pub", "deps", "dependencies"]))
def test_get_lists_after_a_plugin_namespace_and_fetches_after_dependencies(
        program: str, plugins: str, dependencies: str) -> None:
    assert "package-install" not in acts(f"{program} {plugins} get")
    assert "package-install" in acts(f"{program} {plugins} install x")
    assert "package-install" in acts(f"{program} {dependencies} get")


@settings(max_examples=EXAMPLES, deadline=None)
@given(PROGRAMS, st.sampled_from(["deployments", "deployment", "versions", "rollout"]),
       st.sampled_from(["rollback", "revert", "undo"]))
def test_rolling_back_a_deployment_is_a_deploy(program: str, namespace: str, verb: str) -> None:
    found = acts(f"{program} {namespace} {verb}")
    assert "destructive" not in found and found & {"deploy", "deploy-production",
                                                  "deploy-staging", "deploy-dev"}
    assert "destructive" in acts(f"{program} deployments delete")


@settings(max_examples=EXAMPLES, deadline=None)
@given(PROGRAMS, st.sampled_from(["--notes", "--message", "--body", "--title", "--description",
                                  "--comment", "-m"]),
       st.sampled_from(["git reset --hard", "rm -rf /", "example: git push --force"]),
       st.booleans())
def test_message_text_of_an_unlisted_program_is_data(program: str, option: str, text: str,
                                                     attached: bool) -> None:
    given_text = f"{option}='{text}'" if attached and option.startswith("--") else \
        f"{option} '{text}'"
    found = acts(f"{program} show x {given_text}")
    assert not found & {"destructive", "vcs-push", "file-delete"}
    assert "destructive" in acts(f"{program} delete x {given_text}")
    assert found_destructive(f"{program} '{text}'")


def found_destructive(command: str) -> bool:
    return bool(acts(command) & {"destructive", "vcs-push", "shell-unknown"})


@settings(max_examples=EXAMPLES, deadline=None)
@given(PROGRAMS, st.sampled_from(["--title", "--notes", "--message"]),
       st.sampled_from(["reset", "delete", "drop"]))
def test_a_one_word_message_is_not_the_subcommand(program: str, option: str, word: str) -> None:
    assert "destructive" not in acts(f"{program} {option} {word}")
    assert "destructive" in acts(f"{program} {word}")
