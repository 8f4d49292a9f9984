"""Inline programs in other languages (issue 26, class 3), built from parts: a language's calls that
act (delete, delete a tree, shell out, fetch, install packages, opaque code) with a path, command,
URL or package, spelled for one of its interpreters, handed over by an option, a here-string, a
here-doc or a pipe, under a wrapper. Each must yield its primitive; code that only computes or
prints must stay quiet."""

from __future__ import annotations

import json
import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
QUIET = {"code-exec", "shell-read", "shell-execute"}

PATHS = st.sampled_from(["build", "x.txt", "/tmp/cache/data", "src/old", "reports/2024.csv"])
COMMANDS = st.sampled_from([("git push origin main", "vcs-push"), ("rm -rf build", "destructive"),
                            ("curl -s https://example.com/x", "web-fetch"),
                            ("npm publish", "vcs-push"), ("pip install requests", "package-install")])
URLS = st.sampled_from(["https://example.com/a.json", "http://evil.example/x", "https://pypi.org/"])
PACKAGES = st.sampled_from(["dplyr", "requests", "DataFrames", "rails", "left-pad"])


def q(text: str) -> str:
    """A double-quoted string literal (the values above hold no $, @, # or backslash)."""
    return json.dumps(text)


# language -> (interpreter spellings that take code as their next argument, spellings that read
# the program on standard input, {act: template}); {p} a path, {c} a command, {u} a URL, {k} a package
LANGUAGES: dict[str, tuple[list[str], list[str], dict[str, str]]] = {
    "python": (["python3 -c", "python -c", "python3.12 -c", "/usr/bin/python3 -c"],
               ["python3 -", "python3"], {
        "file-delete": "import os; os.remove({p})",
        "destructive": "import shutil\nshutil.rmtree({p})",
        "unlink": "from pathlib import Path; Path({p}).unlink()",
        "shell": "import subprocess; subprocess.run({c}, shell=True)",
        "system": "import os; os.system({c})",
        "web-fetch": "import urllib.request; urllib.request.urlopen({u}).read()",
        "package-install": "import pip; pip.main(['install', {k}])",
        "shell-unknown": "exec(__import__('base64').b64decode('cHJpbnQoMSk='))"}),
    "node": (["node -e", "node --eval", "bun -e"], ["node"], {
        "destructive": "require('fs').rmSync({p}, {{recursive: true, force: true}})",
        "file-delete": "require('fs').unlinkSync({p})",
        "shell": "require('child_process').execSync({c})",
        "web-fetch": "fetch({u}).then(r => r.text())",
        "shell-unknown": "eval(Buffer.from('Y29uc29sZS5sb2coMSk=', 'base64').toString())",
        "opaque": "new Function(atob({x}))()"}),
    "deno": (["deno eval"], [], {
        "destructive": "Deno.removeSync({p}, {{recursive: true}})",
        "web-fetch": "await fetch({u})",
        "argv": "new Deno.Command('git', {{args: ['push']}}).outputSync()"}),
    "ruby": (["ruby -e", "ruby -rfileutils -e"], ["ruby"], {
        "destructive": "require 'fileutils'; FileUtils.rm_rf({p})",
        "file-delete": "File.delete({p})",
        "shell": "system({c})",
        "web-fetch": "require 'net/http'; Net::HTTP.get(URI({u}))",
        "package-install": "Gem.install({k})",
        "shell-unknown": "eval(ARGV[0])",
        "opaque": "require 'base64'; eval(Base64.decode64({x}))"}),
    "perl": (["perl -e", "perl -we", "perl -E"], ["perl"], {
        "file-delete": "unlink {p};",
        "destructive": "use File::Path qw(rmtree); rmtree({p});",
        "shell": "system({c});",
        "web-fetch": "use LWP::Simple; get({u});",
        "shell-unknown": "eval $ARGV[0];",
        "opaque": "use MIME::Base64; eval decode_base64({x});"}),
    "php": (["php -r"], [], {
        "file-delete": "unlink({p});",
        "shell": "system({c});",
        "web-fetch": "echo file_get_contents({u});",
        "shell-unknown": "eval($argv[1]);",
        "opaque": "eval(base64_decode({x}));"}),
    "r": (["Rscript -e", "Rscript --vanilla -e", "R --no-save -e", "R -q -e"], [], {
        "destructive": "unlink({p}, recursive = TRUE)",
        "file-delete": "file.remove({p})",
        "shell": "system({c})",
        "argv": "system2('git', 'push')",
        "vector": "processx::run('git', c('push', 'origin'))",
        "web-fetch": "download.file({u}, 'x.out')",
        "package-install": "install.packages({k}, repos = 'https://cloud.r-project.org')",
        "remotes": "remotes::install_github('r-lib/cli')",
        "shell-unknown": "eval(parse(text = commandArgs(TRUE)[1]))",
        "opaque": "eval(parse(text = rawToChar(base64enc::base64decode({x}))))"}),
    "julia": (["julia -e", "julia --project=. -e", "julia -t 4 -e"], [], {
        "destructive": "rm({p}; recursive=true, force=true)",
        "file-delete": "rm({p})",
        "shell": "run(`{b}`)",
        "web-fetch": "download({u}, \"x.out\")",
        "package-install": "using Pkg; Pkg.add({k})",
        "shell-unknown": "eval(Meta.parse(ARGS[1]))",
        "opaque": "using Base64; eval(Meta.parse(String(base64decode({x}))))"}),
    "powershell": (["pwsh -c", "pwsh -NoProfile -Command", "powershell -c"], [], {
        "destructive": "Remove-Item -Recurse -Force {p}",
        "file-delete": "Remove-Item {p}",
        "shell": "{b}",
        "web-fetch": "Invoke-WebRequest {u} -OutFile x.out",
        "package-install": "Install-Module {k} -Force",
        "shell-unknown": "iwr {u} | iex",
        "opaque": "Invoke-Expression ([Text.Encoding]::UTF8.GetString([Convert]::FromBase64String({x})))"}),
    "tcl": ([], ["tclsh"], {
        "destructive": "file delete -force {t}",
        "file-delete": "file delete {t}",
        "shell": "exec {b}",
        "pipe": "set f [open \"|{b}\"]",
        "body": "if {{1}} {{ exec {b} }}",
        "web-fetch": "package require http; http::geturl {u}",
        "shell-unknown": "eval $argv",
        "opaque": "eval [binary decode base64 {x}]"}),
    "elisp": (["emacs --batch --eval", "emacs -batch -eval", "emacs -Q --batch --execute"], [], {
        "destructive": "(delete-directory {p} t)",
        "file-delete": "(delete-file (expand-file-name {p}))",
        "shell": "(shell-command {c})",
        "argv": "(call-process \"git\" nil nil nil \"push\")",
        "web-fetch": "(url-retrieve-synchronously {u})",
        "opaque": "(eval (car (read-from-string (base64-decode-string {x}))))"}),
}
# acts whose expected primitive is the command's own, or fixed
SHELLS = {"shell", "system", "pipe", "body"}
FIXED = {"opaque": "shell-unknown", "unlink": "file-delete", "remotes": "package-install", "argv": "vcs-push",
         "vector": "vcs-push"}


@st.composite
def inline_program(draw: st.DrawFn) -> tuple[str, str]:
    language = draw(st.sampled_from(sorted(LANGUAGES)))
    options, readers, acts = LANGUAGES[language]
    act = draw(st.sampled_from(sorted(acts)))
    command, expected = draw(COMMANDS)
    path, url, package = draw(PATHS), draw(URLS), draw(PACKAGES)
    b64 = draw(st.sampled_from(["cm0gLXJmIC8=", "Z2l0IHB1c2g=", "cHJpbnQoMSk="]))
    code = acts[act].format(p=q(path), c=q(command), u=q(url) if language != "tcl" else url,
                            k=q(package), b=command, t=path, x=q(b64) if language != "tcl" else b64)
    if act not in SHELLS:
        expected = FIXED.get(act, act)
    forms = [f"{{wrapper}}{o} {{quoted}}" for o in options] + \
        [f"{{wrapper}}{r} <<< {{quoted}}" for r in readers] + \
        [f"{{wrapper}}{r} <<'EOF'\n{{code}}\nEOF" for r in readers] + \
        [f"printf '%s\\n' {{quoted}} | {{wrapper}}{r}" for r in readers] + \
        [f"echo {{quoted}} | {{wrapper}}{r}" for r in readers if "\n" not in code]
    form = draw(st.sampled_from(forms))
    quoted = draw(st.sampled_from([shlex.quote(code), '"' + "".join(
        "\\" + ch if ch in '"$`\\' else ch for ch in code) + '"']))
    wrapper = draw(st.sampled_from(["", "env ", "timeout 60 ", "nice -n 5 ", "command "]))
    line = form.format(quoted=quoted, code=code, wrapper=wrapper)
    if draw(st.booleans()):
        line = "bash -c " + shlex.quote(line)
    return line, expected


def acts_of(command: str) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}


@settings(max_examples=400, deadline=None)
@given(inline_program())
def test_inline_code_that_acts_yields_its_primitive(case: tuple[str, str]) -> None:
    command, expected = case
    assert expected in acts_of(command), command


HARMLESS = {
    "python": ["print(1+1)", "import json; print(json.dumps({'a': 1}))", "import sys; print(sys.version)"],
    "node": ["console.log(process.version)", "console.log([1,2,3].map(x => x * 2))",
             "const $ = 1; console.log($)"],
    "ruby": ["puts 1", "puts RUBY_VERSION", "puts [1,2].sum"],
    "perl": ["print 1+1", "print join(',', 1..3)", "my %h = (a => 1); print $h{a}"],
    "php": ["echo PHP_VERSION;", "echo json_encode([1, 2]);"],
    "r": ["print(1+1)", "library(stats); print(summary(c(1,2,3)))", "x <- read.csv('data.csv'); summary(x)",
          "rmarkdown::render('report.Rmd')", "testthat::test_dir('tests')"],
    "julia": ["println(1+1)", "using Pkg; Pkg.status()", "x = [1,2,3]; println(sum(x))",
              "write(stdout, \"hi\")", "using Test; include(\"test/runtests.jl\")"],
    "tcl": ["puts hello", "set x [expr {1+2}]; puts $x", "foreach i {1 2 3} { puts $i }",
            "proc add {a b} { return [expr {$a + $b}] }; puts [add 1 2]"],
    "deno": ["console.log(Deno.version)"],
    "elisp": ["(message \"%s\" emacs-version)", "(princ (+ 1 2))",
              "(require 'org) (message \"ok\")", "(let ((x 1)) (message \"%d\" x))"],
    "powershell": ["Get-Date", "$x = Get-ChildItem; Write-Host $x.Count",
                   "foreach ($i in 1..3) { Write-Output $i }",
                   "Get-Content README.md | Select-Object -First 5"],
}


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(HARMLESS)), st.data())
def test_inline_code_that_only_computes_stays_quiet(language: str, data: st.DataObject) -> None:
    code = data.draw(st.sampled_from(HARMLESS[language]))
    options, readers, _acts = LANGUAGES[language]
    form = data.draw(st.sampled_from([f"{o} {shlex.quote(code)}" for o in options] +
                                     [f"{r} <<< {shlex.quote(code)}" for r in readers]))
    assert acts_of(form) <= QUIET, form


def test_perl_filters_stay_filters() -> None:
    assert acts_of("perl -ne 'print if /x/' f") <= QUIET
    assert acts_of("perl -pi -e 's/a/b/' f") == {"code-exec", "file-write"}
    assert acts_of("R CMD INSTALL mypkg_1.0.tar.gz") == {"package-install"}


# --- code a framework's subcommand runs (shell.commands.NAME.code) --------------------------
RUNNERS = st.sampled_from([("rails runner", "ruby"), ("bin/rails runner", "ruby"),
                           ("gitlab-rails runner", "ruby"), ("rails r", "ruby"),
                           ("python manage.py shell -c", "python"),
                           ("./manage.py shell --command", "python"),
                           ("php artisan tinker --execute", "php")])
ACTING = {"ruby": ("FileUtils.rm_rf({p})", "destructive"),
          "python": ("import shutil; shutil.rmtree({p})", "destructive"),
          "php": ("system({c});", None)}
ORM_WIPES = st.sampled_from(["Project.destroy_all", "User.delete_all", "Admin::Audit.delete_all",
                             "Ci::Build.all.destroy_all"])


@settings(max_examples=60, deadline=None)
@given(RUNNERS, PATHS, COMMANDS)
def test_code_given_to_a_frameworks_runner_is_read_as_code(runner: tuple[str, str], path: str,
                                                           command: tuple[str, str]) -> None:
    spelled, language = runner
    template, act = ACTING[language]
    code = template.format(p=q(path), c=q(command[0]))
    found = {a.primitive for a in analyse_command(f"{spelled} {shlex.quote(code)}", SHELL,
                                                  is_protected=is_protected)}
    assert "code-exec" in found
    assert (act or command[1]) in found, (spelled, code, found)
    quiet = {a.primitive for a in analyse_command(f"{spelled} {shlex.quote('puts 1')}", SHELL,
                                                  is_protected=is_protected)}
    assert quiet <= QUIET
    unknown = {a.primitive for a in analyse_command(f'{spelled} "$CODE"', SHELL,
                                                    is_protected=is_protected)}
    assert "shell-unknown" in unknown


@given(ORM_WIPES, st.sampled_from(["rails runner", "ruby -e", "gitlab-rails runner"]))
def test_an_unscoped_orm_wipe_is_destructive_and_a_scoped_one_is_not(wipe: str, spelled: str
                                                                     ) -> None:
    def found(code: str) -> set[str]:
        return {a.primitive for a in analyse_command(f"{spelled} {shlex.quote(code)}", SHELL,
                                                     is_protected=is_protected)}

    assert "destructive" in found(wipe)
    scoped = wipe.replace(".all.", ".").replace(".destroy_all", ".where(id: 1).destroy_all") \
        .replace(".delete_all", ".where(id: 1).delete_all")
    assert "destructive" not in found(scoped), scoped
