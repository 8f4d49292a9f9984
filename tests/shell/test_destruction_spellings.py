"""The same destruction spelled another way is still ``destructive``: a whole tree deleted one
file at a time (``find /srv -delete``, a listing piped to ``xargs rm``, ``tar --remove-files``,
a Python loop over ``os.walk``), a delete through a symbolic link the command made, history moved
by force, and SQL fed by a process substitution or with an always-true ``WHERE``. Ordinary
cleanup that looks alike stays quiet."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.test_generated import git

SHELL = load_default_shell()


@pytest.fixture
def repo(project: Path) -> Path:
    """A project in git: src/ tracked; build/, dist/, *.pyc and *.log ignored."""
    for folder in ("src", "build", "dist"):
        (project / folder).mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    (project / "build" / "app.o").write_text("built\n")
    (project / ".gitignore").write_text("build/\ndist/\n*.pyc\n*.log\n__pycache__/\n")
    git(project, "init", "-q")
    git(project, "add", ".gitignore", "src")
    git(project, "commit", "-qm", "start")
    return project


def primitives(command: str, cwd: Path) -> set[str]:
    found = analyse_command(command, SHELL, is_protected=lambda _p: False, cwd=str(cwd))
    return {a.primitive for a in found}


@pytest.mark.parametrize("command", [
    # a whole tree listed, then deleted file by file
    "find /srv -type f | xargs rm -f",
    "find /srv -type f -print0 | xargs -0 rm",
    "find -L /srv -type f | sort | xargs rm -f",
    "find /srv -type f | grep -v keep | xargs rm -f",
    "find /srv -type f | xargs -I{} rm {}",
    "find /srv -type f | xargs -n1 unlink",
    "find /srv -type f | parallel rm",
    "fd . /srv | xargs rm",
    "ls -R /srv | xargs rm -f",
    "git ls-files | xargs rm",
    "for f in $(find /srv -type f); do rm \"$f\"; done",
    "find /srv -type f | while read f; do rm \"$f\"; done",
    "find /srv -type f | while IFS= read -r -d '' f; do rm -f -- \"$f\"; done",
    "git ls-files | while read -r line; do unlink \"$line\"; done",
    "while read f; do rm \"$f\"; done < <(find /srv -type f)",
    "while IFS= read -r -d '' f; do rm -f -- \"$f\"; done < <(find /srv -type f -print0 | sort -z)",
    "for d in a b; do while read f; do rm \"$f\"; done < <(fd . /srv); done",
    "find /srv -exec rm {} +",
    "find /srv -type f -delete",
    "find /srv ! -name keep -delete",
    "find /srv -name '*' -delete",
    "find /srv -type f -o -name x -delete",
    "find src -mindepth 1 -delete",
    "ls /srv/* | xargs rm -rf",
    # archivers that delete what they archive
    "tar --remove-files -cf /dev/null /srv",
    "tar -czf logs.tgz --remove-files src",
    "zip -rm /tmp/x.zip /srv",
    "rsync -a --delete empty/ /srv/",
    # Python walking a tree and deleting what it visits
    "python -c 'import os\nfor r,d,f in os.walk(\"/srv\"):\n  [os.remove(os.path.join(r,x)) for x in f]'",
    "python3 -c 'from pathlib import Path\nfor p in Path(\"/srv\").rglob(\"*\"): p.unlink()'",
    "python3 -c 'import glob, os\nfor p in glob.glob(\"/srv/**\", recursive=True): os.remove(p)'",
    "python -c 'import shutil; shutil.rmtree(\"/srv\")'",
    # through a symbolic link the command made: the link's target is emptied
    "ln -s /srv build/h; rm -rf build/h/",
    "ln -sf /srv build/h && rm -rf build/h/x",
    "mkdir -p build/x; ln -s ../../src build/x/h; rm -rf build/x/h/",
    "ln -s \"$D\" build/h; rm -rf build/h/",
    # history moved or dropped by force
    "git reset --keep HEAD~3",
    "git checkout -B main HEAD~5",
    "git checkout -qB main origin/main",
    "git switch -C main HEAD~5",
    "git switch --force-create main HEAD~5",
    "git rebase --onto X Y",
    "git branch -f main HEAD~3",
    "git update-ref refs/heads/main HEAD~3",
    "git reflog expire --expire=now --all && git gc --prune=now",
    "git filter-branch --tree-filter 'rm x' HEAD",
    "git filter-repo --path x --invert-paths",
    "git push --force",
    # SQL however it is fed, and WHERE conditions that hold for every row
    "psql -f <(echo 'DROP TABLE users')",
    "psql < <(echo 'DROP TABLE users')",
    "sqlite3 db.sqlite '.read /dev/stdin' <<< 'DROP TABLE t'",
    "echo 'DELETE FROM users' | psql",
    "mysql -e 'DROP TABLE users'",
    "psql -c 'DELETE FROM users WHERE 1=1'",
    "psql -c 'DELETE FROM users WHERE true'",
    "psql -c 'DELETE FROM users WHERE id=id'",
    "psql -c \"DELETE FROM users WHERE 'a'='a'\"",
    "psql -c \"UPDATE users SET pw='x' WHERE 1\"",
    "psql -c 'DELETE FROM users WHERE id = 3 OR 1=1'",
    "psql -c 'DELETE FROM users WHERE NOT (1=0)'",
    "psql -c 'DELETE FROM users WHERE 2 > 1'",
    "psql -c \"DELETE FROM users WHERE name LIKE '%'\"",
    "psql -c 'DELETE FROM users WHERE (1=1)'",
    "mysql -e 'DELETE FROM users WHERE 1 LIMIT 100000'",
    # the machine stopped: every process, init, the kernel's own controls
    "kill -9 -1", "kill -TERM -1", "kill -- -1", "kill 1", "kill -s KILL 1",
    "echo b > /proc/sysrq-trigger", "printf o | sudo tee /proc/sysrq-trigger",
    "echo mem > /sys/power/state", "init 0", "telinit 6", "systemctl poweroff",
    "systemctl reboot --force", "loginctl reboot",
])
def test_destruction_spelled_another_way_is_destructive(repo: Path, command: str) -> None:
    assert "destructive" in primitives(command, repo)


@pytest.mark.parametrize("command", [
    "find . -name '*.pyc' -delete",
    "find . -name '*.pyc' | xargs rm -f",
    "find . -name '*.pyc' | while read f; do rm \"$f\"; done",
    "find /srv -type f | while read f; do echo \"$f\"; done",
    "ls *.log | while read -r f; do rm \"$f\"; done",
    "kill -1 1234", "kill -15 4321", "kill -l", "kill %1", "init 3", "systemctl stop nginx",
    "systemctl restart postgresql", "systemctl status sshd", "cat /proc/sys/kernel/sysrq",
    "while read f; do rm \"$f\"; done < <(find . -name '*.pyc')",
    "while read f; do echo \"$f\"; done < <(find /srv -type f)",
    "find . -name '*.tmp' | xargs rm",
    "find /srv -type f | grep keep | xargs rm -f",
    "find /tmp -mtime +7 -exec rm -f {} +",
    "find /srv -maxdepth 1 -type f -delete",
    "find build -delete",
    "find build -type f -delete",
    "fd -e pyc | xargs rm",
    "ls src/*.py | xargs rm",
    "ls | xargs rm -f",
    "rm -rf build dist",
    "rm -rf build/",
    "rm -f *.log",
    "git clean -n",
    "tar --remove-files -czf logs.tgz build",
    "tar -czf backup.tgz src",
    "zip -r -m /tmp/x.zip build",
    "zip -r out.zip src",
    "python3 -c 'import os\nfor r,d,f in os.walk(\".\"):\n  for x in f:\n"
    "    if x.endswith(\".pyc\"): os.remove(os.path.join(r,x))'",
    "python3 -c 'from pathlib import Path\n[p.unlink() for p in Path(\".\").rglob(\"*.pyc\")]'",
    "python3 -c 'import os\nfor r,d,f in os.walk(\".\"): print(r)'",
    "python3 -c 'import glob, os\nfor p in glob.glob(\"build/*.o\"): os.remove(p)'",
    "ln -s /srv build/h; rm -rf build/h",
    "ln -s build/out build/h; rm -rf build/h/",
    "cp -r src build/h; rm -rf build/h/",
    "git reset --soft HEAD~1",
    "git reset HEAD src/app.py",
    "git checkout -b feature",
    "git switch -c feature",
    "git rebase main",
    "git rebase -i HEAD~3",
    "git status",
    "psql -f <(echo 'SELECT 1')",
    "sqlite3 db.sqlite '.read /dev/stdin' <<< 'SELECT 1'",
    "psql -c 'DELETE FROM users WHERE id=3'",
    "psql -c 'DELETE FROM users WHERE (id=3)'",
    "psql -c 'DELETE FROM users WHERE id = 3 AND 1=1'",
    "psql -c \"DELETE FROM users WHERE name LIKE 'bob%'\"",
    "psql -c 'DELETE FROM sessions WHERE expires_at < now()'",
    "psql -c \"UPDATE users SET active = false WHERE last_login < '2020-01-01' RETURNING id\"",
])
def test_ordinary_look_alikes_stay_quiet(repo: Path, command: str) -> None:
    assert "destructive" not in primitives(command, repo)


def test_a_process_substitution_known_only_at_run_time_is_unknown(repo: Path) -> None:
    assert "shell-unknown" in primitives("psql -f <(curl -s https://x/y.sql)", repo)


def test_the_reason_names_the_tree_a_listing_deletes(repo: Path) -> None:
    found = analyse_command("find /srv -type f | xargs rm -f", SHELL,
                            is_protected=lambda _p: False, cwd=str(repo))
    reason = next(a.reason for a in found if a.primitive == "destructive")
    assert "/srv is the repository or outside it" in reason


@pytest.mark.parametrize("command", [
    ":(){ :|:& };:", "bomb(){ bomb|bomb& }; bomb", "f(){ f & f & }; f",
    "seq 1 300000 | sort --compress-program=poweroff -S 64k", "killall5 -9",
    "rtcwake -m off -s 60",
])
def test_commands_that_exhaust_or_stop_the_machine(repo: Path, command: str) -> None:
    assert "destructive" in primitives(command, repo), command


@pytest.mark.parametrize("command", [
    "f(){ echo hi; }; f | cat", "countdown(){ [ $1 -gt 0 ] && countdown $(($1-1)); }; countdown 3",
    "sort --compress-program=gzip -S 1M src/app.py",
])
def test_functions_and_sorts_that_end(repo: Path, command: str) -> None:
    assert "destructive" not in primitives(command, repo), command


@pytest.mark.parametrize("command, expected", [
    ("trap -- 'rm -rf src' EXIT", "destructive"),
    ("trap -- 'git push -f origin main' ERR; false", "vcs-push"),
])
def test_a_trap_handler_after_double_dash_is_read(tmp_path: Path, command: str,
                                                  expected: str) -> None:
    assert expected in primitives(command, tmp_path)
    assert {"destructive", "vcs-push"}.isdisjoint(primitives("trap -- - EXIT; trap -p", tmp_path))


@pytest.mark.parametrize("command", ["rm -rf dist/*", "rm -rf build/* dist", "rm -rf b*/",
                                     "rm -rf **/__pycache__"])
def test_a_glob_that_matches_only_ignored_output_now_is_a_file_delete(repo: Path,
                                                                       command: str) -> None:
    (repo / "dist" / "app.whl").write_text("w\n")
    (repo / "src" / "__pycache__").mkdir(exist_ok=True)
    found = primitives(command, repo)
    assert "destructive" not in found and "file-delete" in found, (command, found)


@pytest.mark.parametrize("command", ["rm -rf src/*", "rm -rf ./*", "rm -rf s*"])
def test_a_glob_that_matches_tracked_work_is_destructive(repo: Path, command: str) -> None:
    assert "destructive" in primitives(command, repo), command


@pytest.mark.parametrize("command", [
    'd=$(mktemp -d) && cp -r src "$d" && rm -rf "$d"',
    'tmp=$(mktemp -d -t build.XXXXXX); rm -rf "$tmp"',
])
def test_scratch_space_the_command_made_is_a_file_delete(repo: Path, command: str) -> None:
    found = primitives(command, repo)
    assert "destructive" not in found, (command, found)


def test_a_temporary_folder_that_holds_the_project_or_work_is_destructive(repo: Path) -> None:
    for command in ("rm -rf /tmp", "rm -rf /var/tmp", f"rm -rf {repo.parent}",
                    "rm -rf /tmp/acme-build-check", 'd=$(mktemp -d); rm -rf "$d" /tmp/x',
                    f"rm -rf {repo}/src", 'd=$(mktemp -d x.XXXX); rm -rf "$d" src'):
        assert "destructive" in primitives(command, repo), command


@pytest.mark.parametrize("command, destroys", [
    ("python -c \"import shutil; shutil.rmtree('build', ignore_errors=True)\"", False),
    ("node -e \"require('fs').rmSync('dist', {recursive: true, force: true})\"", False),
    ("python -c \"import shutil; shutil.rmtree('src')\"", True),
    ("node -e \"require('fs').rmSync('src', {recursive: true})\"", True),
])
def test_inline_code_deleting_ignored_output_is_a_file_delete(repo: Path, command: str,
                                                              destroys: bool) -> None:
    assert ("destructive" in primitives(command, repo)) == destroys, command


@pytest.mark.parametrize("command", ["cmake -E remove_directory src", "cmake -E rm -rf src",
                                     "git tag -d v1.0", "git tag --delete v1.0", "helm del api",
                                     "helm un api"])
def test_more_spellings_of_recursive_deletes_and_removals(repo: Path, command: str) -> None:
    assert "destructive" in primitives(command, repo), command


@pytest.mark.parametrize("command", ["cmake -E rm -f app.log", "git tag v1.0", "git tag -l",
                                     "helm list"])
def test_their_ordinary_neighbours_are_not_destructive(repo: Path, command: str) -> None:
    assert "destructive" not in primitives(command, repo), command
