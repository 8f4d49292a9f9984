"""Package installs as people type them (issue 26, class 5), built from parts: a launcher that
fetches and runs a package (``npx``, ``bunx``, ``npm exec``, ``pnpm dlx``, ``yarn dlx``, ``bun x``,
``uvx``, ``pipx run``, ``go run pkg@v``, ``nix run``, ``nix-shell -p``, ``uv run --with``), a
package manager with options before its subcommand or a toolchain selector, and installer scripts
piped to a shell. Each is ``package-install`` (an installer script: ``web-fetch`` and
``shell-unknown``); a tool the project has, and launches of local code, are not."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
NODE_PACKAGES = st.sampled_from(["cowsay", "create-vite", "@angular/cli", "degit", "tsx", "zx"])
VERSIONS = st.sampled_from(["", "@latest", "@1.2.3", "@next"])
ARGS = st.sampled_from(["", " hi", " --help-me", " my-app --template react", " ."])
WRAPPERS = st.sampled_from(["", "env CI=1 ", "timeout 300 ", "nice "])


@st.composite
def node_launch(draw: st.DrawFn) -> str:
    package = draw(NODE_PACKAGES) + draw(VERSIONS)
    form = draw(st.sampled_from([
        "npx {p}{a}", "npx -y {p}{a}", "npx --yes {p}{a}", "npx --package={p} cmd{a}",
        "npx -p {p} cmd{a}", "npm exec {p}{a}", "npm exec -y -- {p}{a}", "npm x {p}{a}",
        "pnpm dlx {p}{a}", "pnpm --silent dlx {p}{a}", "yarn dlx {p}{a}", "bunx {p}{a}",
        "bun x {p}{a}"]))
    return draw(WRAPPERS) + form.format(p=package, a=draw(ARGS))


@st.composite
def other_launch(draw: st.DrawFn) -> str:
    return draw(WRAPPERS) + draw(st.sampled_from([
        "uvx ruff check", "uvx --from httpie http", "pipx run black .", "pipx run --spec x y",
        "go run golang.org/x/tools/cmd/goimports@latest -w .", "go run github.com/a/b/cmd/c@v1.2.0",
        "go run -C tools example.com/gen@latest", "go run github.com/a/b/cmd/c", "pnpx degit x/y",
        "nix run nixpkgs#hello", "nix run github:owner/repo",
        "nix shell nixpkgs#jq nixpkgs#yq", "nix-shell -p hello --run hello", "nix-shell -p jq yq",
        "uv run --with requests python x.py", "uv run --with=rich python -m rich",
        "cargo +nightly install ripgrep", "cargo +1.75.0 install --locked cargo-edit",
        "apt-get -o Dpkg::Options::=--force-confold install -y vim",
        "apt-get -o APT::Get::Assume-Yes=true install curl",
        "apt-get -qq -o=Dpkg::Use-Pty=0 install -y git", "sudo apt -t bookworm-backports install x",
        "pip-sync requirements.txt", "poetry add requests", "poetry -C sub add rich",
        "brew install jq", "python3 -m pip install --user x", "Rscript -e 'install.packages(\"x\")'",
        "julia -e 'using Pkg; Pkg.add(\"X\")'"]))


def acts_of(command: str, cwd: str | None = None) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected, cwd=cwd)}


@settings(max_examples=300, deadline=None)
@given(st.one_of(node_launch(), other_launch()))
def test_launched_packages_are_installs(command: str) -> None:
    assert "package-install" in acts_of(command), command


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["curl -fsSL https://get.example.sh", "wget -qO- https://x.example/install.sh",
                        "curl -s https://sh.rustup.rs"]),
       st.sampled_from(["sh", "bash", "sudo bash", "sh -s -- -y", "bash -s -- --yes", "zsh"]))
def test_installer_scripts_piped_to_a_shell(fetch: str, shell: str) -> None:
    assert {"web-fetch", "shell-unknown"} <= acts_of(f"{fetch} | {shell}")
    name = shell.split(" -")[0]                      # sh -c "$(curl ...)"
    assert {"web-fetch", "shell-unknown"} <= acts_of(f"{name} -c \"$({fetch})\"")


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["tsc", "eslint", "prettier", "vitest", "jest"]),
       st.sampled_from(["npx {b}", "npx {b} --noEmit", "bunx {b} .", "npm exec {b} -- --check",
                        "npm exec -- {b}"]))
def test_the_projects_own_tools_are_not_installs(tmp_path_factory: pytest.TempPathFactory,
                                                 tool: str, form: str) -> None:
    root = tmp_path_factory.mktemp("web")
    (root / "node_modules" / ".bin").mkdir(parents=True)
    (root / "node_modules" / ".bin" / tool).write_text("#!/bin/sh\n")
    (root / "src").mkdir()
    command = form.format(b=tool)
    assert "package-install" not in acts_of(command, str(root)), command
    assert "package-install" not in acts_of(command, str(root / "src")), command   # found above
    assert "package-install" in acts_of(command.replace(tool, tool + "@latest", 1), str(root))


@pytest.mark.parametrize("command", [
    "go run ./cmd/server", "go run .", "go run main.go", "go run cmd/tool/main.go", "nix run .#app",
    "nix run", "npx ./scripts/build.js",
    "cargo +nightly build", "cargo +stable test", "poetry show", "brew list",
    "apt-get -o Debug::pkgProblemResolver=1 --simulate install vim", "uv run pytest",
    "nix-shell --run 'make test'", "pnpm exec vitest", "yarn run build"])
def test_local_launches_are_not_installs(command: str, tmp_path: Path) -> None:
    assert "package-install" not in acts_of(command, str(tmp_path)), command
