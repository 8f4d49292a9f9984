"""Commands that run another program's code in their place (docs/shell.md, "Package launchers" and
"Claude Code"), and the permissions of governance folders:

- a package launcher (``npx``, ``bunx``, ``npm exec``, ``pnpm dlx``, ``yarn dlx``) runs the
  package's command with the words after it, and is decided as that command too: ``npx rimraf
  .claude`` deletes the governance folder as ``rimraf .claude`` does;
- a second Claude Code started under other settings or a looser permission mode than the user's
  runs without this project's governance: ``governance-admin``; a plain ``claude -p`` runs under
  the same hooks and is not;
- ``chmod``, ``chown``, ``chgrp`` and ``setfacl`` on the folder of governance files, or a
  recursive sweeping mode over a tree that holds them, lock the hooks out of their settings.

Decided as the PreToolUse hook decides, in a project with the default matrix whose protected files
exist on disk."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.policy.layer import GovernanceLayer
from tests.helpers import layer_in_do


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GovernanceLayer]:
    root = tmp_path_factory.mktemp("launched")
    project = root / "web-app"
    project.mkdir()
    for name in [".claude/settings.json", ".claude/governance/state.json", "src/app.ts",
                 "dist/app.js", "scripts/build.sh", "node_modules/.bin/rimraf"]:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("{}\n")
    (project / ".gitignore").write_text("dist/\nnode_modules/\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    with layer_in_do(project, root / "home") as layer:
        yield layer


def primitives(layer: GovernanceLayer, command: str) -> set[str]:
    acts, _ = layer.acts_for("Bash", {"command": command}, layer.project_dir)
    return {a.primitive for a in acts}


# --- launched packages ----------------------------------------------------------------------------
LAUNCHERS = ["npx", "npx -y", "npx --yes", "bunx", "npm exec", "npm exec --", "npm x",
             "pnpm dlx", "yarn dlx", "bun x", "env CI=1 npx", "timeout 60 pnpm dlx"]
VERSIONS = ["", "@5", "@latest"]
GOVERNANCE = [".claude", "./.claude", ".claude/", ".claude/settings.json", "$PWD/.claude",
              ".claude/governance"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(LAUNCHERS), st.sampled_from(VERSIONS), st.sampled_from(GOVERNANCE))
def test_a_launched_deleter_over_governance_files(layer: GovernanceLayer, launcher: str,
                                                 version: str, path: str) -> None:
    command = f"{launcher} rimraf{version} {path}"
    assert "governance-admin" in primitives(layer, command), command


@pytest.mark.parametrize("command", [
    "npx rimraf /", "pnpm dlx rimraf ~", "npx del-cli /srv/data", "bunx rimraf src",
    "npx rimraf --glob 'src/**'", "npx -p rimraf rimraf src",
])
def test_a_launched_deleter_of_a_tree_is_destructive(layer: GovernanceLayer, command: str) -> None:
    assert "destructive" in primitives(layer, command)


@pytest.mark.parametrize("command", ["npx rimraf dist", "npm exec -- rimraf dist node_modules"])
def test_a_launched_deleter_of_build_output_is_a_file_delete(layer: GovernanceLayer,
                                                            command: str) -> None:
    found = primitives(layer, command)
    assert "file-delete" in found and "destructive" not in found, found


@pytest.mark.parametrize("command", [
    "npx @anthropic-ai/claude-code --dangerously-skip-permissions -p 'fix it'",
    "npx -y @anthropic-ai/claude-code@latest --settings '{\"disableAllHooks\": true}' -p x",
    "npx -p @anthropic-ai/claude-code claude --setting-sources user -p x",
])
def test_a_package_is_decided_as_the_command_it_installs(layer: GovernanceLayer,
                                                         command: str) -> None:
    assert "governance-admin" in primitives(layer, command)


@pytest.mark.parametrize("command", [
    "npx eslint --fix src", "npx tsc --noEmit", "npx prettier --check .", "npx jest --watchAll=false",
    "npm exec vitest run", "pnpm dlx create-vite my-app --template react", "npx rimraf",
    "npx prettier --write src/app.ts",
])
def test_ordinary_launches_stay_out_of_governance(layer: GovernanceLayer, command: str) -> None:
    found = primitives(layer, command)
    assert not found & {"governance-admin", "destructive", "shell-unknown"}, (command, found)


def test_a_launched_command_is_read_with_its_own_options(layer: GovernanceLayer) -> None:
    # npx stops reading its options at the package: -rf and -p belong to what it runs
    assert "governance-admin" in primitives(layer, "npx shx rm -rf .claude")
    assert "governance-admin" in primitives(layer, "npx rimraf -g '.claude/*'")
    assert "file-write" in primitives(layer, "npx prettier -w src/app.ts")


# --- a second Claude Code -------------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    "claude --dangerously-skip-permissions -p 'run the tests'",
    "claude -p --allow-dangerously-skip-permissions x",
    "claude --permission-mode bypassPermissions -p x",
    "claude --permission-mode=acceptEdits -p x",
    "claude --settings /tmp/loose.json -p x",
    "claude --settings='{\"disableAllHooks\":true}' -p x",
    "claude --setting-sources user -p x",
    "claude --allowedTools 'Bash(*)' -p x",
    "claude --allowed-tools Bash -p x",
    "claude --permission-prompt-tool mcp__auto__approve -p x",
    "env CLAUDE_CODE_ENTRYPOINT=cli claude --dangerously-skip-permissions",
    "sh -c 'claude --dangerously-skip-permissions -p x'",
    "claude config set disableAllHooks true",
    "claude config set -g hooks '{}'",
    "claude config add allowedTools Bash",
    "claude config remove ignorePatterns x",
    "claude -p hi --bare", "CLAUDE_CODE_SIMPLE=1 claude -p hi",
    "env CLAUDE_CODE_SIMPLE=1 claude -p x", "export CLAUDE_CODE_SIMPLE=1; claude -p x",
    "ANTHROPIC_BASE_URL=https://llm.example claude -p hi",
    "claude -p x --mcp-config '{\"mcpServers\":{\"x\":{\"command\":\"rm\"}}}'",
    "claude --plugin-dir /tmp/plugins -p x", "claude plugin install tools@market",
    "claude mcp add tools -- node server.js", "claude mcp add-json x '{}'",
    "node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js --settings /tmp/e.json -p x",
])
def test_a_second_agent_under_looser_governance_is_governance_admin(layer: GovernanceLayer,
                                                                    command: str) -> None:
    assert "governance-admin" in primitives(layer, command), command


@pytest.mark.parametrize("command", [
    "claude -p 'summarise the diff'", "claude --version", "claude config get theme",
    "claude config list", "claude mcp list", "claude --model sonnet -p 'explain src/app.ts'",
    "claude -p --output-format json 'list the TODOs'", "claude doctor",
])
def test_a_second_agent_under_the_same_governance_is_not(layer: GovernanceLayer,
                                                         command: str) -> None:
    assert "governance-admin" not in primitives(layer, command), command


def test_updating_claude_installs_software(layer: GovernanceLayer) -> None:
    assert "package-install" in primitives(layer, "claude update")
    assert "governance-admin" not in primitives(layer, "env FOO=1 claude -p x")


# --- permissions of governance folders ------------------------------------------------------------
@pytest.mark.parametrize("command", [
    "chmod 000 .claude", "chmod a-rwx .claude/governance", "chmod 700 ./.claude/",
    "chown nobody .claude", "chgrp nogroup .claude/governance", "setfacl -m u:me:--- .claude",
    "setfacl -b .claude", "chmod -R a-r .", "chmod -R 000 ./", "chmod -R u-w .claude/..",
    "setfacl -R -m u:me:--- .", "chattr +i .claude",
])
def test_permissions_that_lock_governance_out(layer: GovernanceLayer, command: str) -> None:
    assert "governance-admin" in primitives(layer, command), command


@pytest.mark.parametrize("command", [
    "chmod +x scripts/build.sh", "chmod -R g+r .", "chmod -R u+w .", "chmod 644 src/app.ts",
    "chmod -R a+rX src", "chown -R me:me dist", "setfacl -m u:bob:rw src/app.ts",
    "chmod 755 .",
])
def test_everyday_permission_changes_are_file_writes(layer: GovernanceLayer, command: str) -> None:
    found = primitives(layer, command)
    assert "governance-admin" not in found and "file-write" in found, (command, found)


@pytest.mark.parametrize("command", [
    "git worktree add /tmp/old HEAD~5 && cd /tmp/old && claude -p 'finish the task'",
    "cd /tmp && claude -p hi", "env -C /srv/other claude --model sonnet -p x",
    "(cd .. && claude -p x)",
    # Claude Code reads project settings from the folder it starts in, not the repository's
    # root (anthropics/claude-code#74023): a subfolder runs without this project's hooks
    "cd src && claude -p hi",
])
def test_a_second_agent_outside_this_project_is_governance_admin(layer: GovernanceLayer,
                                                                 command: str) -> None:
    # it would run under that folder's settings, not this project's governance
    assert "governance-admin" in primitives(layer, command), command


def test_a_second_agent_in_this_project_or_an_unknown_folder(layer: GovernanceLayer) -> None:
    for command in ("claude -p hi", "cd src && cd .. && claude -p hi", "cd /tmp && claude --version",
                    "cd /tmp && claude mcp list"):
        assert "governance-admin" not in primitives(layer, command), command
    assert "shell-unknown" in primitives(layer, 'cd "$CHECKOUT" && claude -p x')


# --- git and SQLite over governance files ----------------------------------------------------------
@pytest.mark.parametrize("command", [
    "git mv .claude .claude-old", "git rm -r .claude", "git rm -rf .claude/governance",
    "git sparse-checkout set src", "git sparse-checkout init --cone",
    "sqlite3 .claude/governance/decisions.db \"update decisions set outcome='success'\"",
    "sqlite3 .claude/governance/decisions.db 'DELETE FROM decisions WHERE id = 3'",
    "sqlite3 .claude/governance/decisions.db < fix.sql",
    "printf 'drop table decisions;' | sqlite3 .claude/governance/decisions.db",
    "sqlite3 -cmd '.read fix.sql' .claude/governance/decisions.db .quit",
    "duckdb .claude/governance/decisions.db -c 'insert into t values (1)'",
])
def test_git_and_sqlite_changing_governance_files(layer: GovernanceLayer, command: str) -> None:
    assert "governance-admin" in primitives(layer, command), command


@pytest.mark.parametrize("command", [
    "git rm -r --cached .", "git rm --cached -r dist", "git mv src lib", "git sparse-checkout list",
    "sqlite3 .claude/governance/decisions.db 'select count(*) from decisions'",
    "sqlite3 -readonly .claude/governance/decisions.db .dump",
    "echo 'select 1;' | sqlite3 .claude/governance/decisions.db",
    "sqlite3 app.db 'delete from sessions where expires < 0'",
])
def test_reading_governance_databases_and_ordinary_git(layer: GovernanceLayer,
                                                       command: str) -> None:
    assert "governance-admin" not in primitives(layer, command), command


# --- schema tools, typed or launched --------------------------------------------------------------
@pytest.mark.parametrize(("command", "primitive"), [
    ("npx prisma migrate reset --force", "destructive"),
    ("prisma db push --accept-data-loss", "destructive"),
    ("npx prisma migrate deploy", "deploy"),
    ("npx drizzle-kit push --force", "destructive"),
    ("pnpm dlx drizzle-kit drop", "file-delete"),
])
def test_schema_tools_that_lose_data_or_deploy(layer: GovernanceLayer, command: str,
                                               primitive: str) -> None:
    assert primitive in primitives(layer, command), command


@pytest.mark.parametrize("command", ["npx prisma db push", "prisma migrate dev --name init",
                                     "npx prisma generate", "npx drizzle-kit push",
                                     "drizzle-kit generate"])
def test_pushing_a_schema_to_the_development_database_is_everyday_work(
        layer: GovernanceLayer, command: str) -> None:
    found = primitives(layer, command)
    assert not found & {"destructive", "vcs-push", "deploy", "governance-admin"}, (command, found)


@pytest.mark.parametrize("command", [
    "semantic-release", "npx semantic-release --no-ci", "npx gh-pages -d dist", "release-it --ci",
    "np patch", "electron-builder --publish always", "npx electron-builder -p onTag",
])
def test_release_tools_publish(layer: GovernanceLayer, command: str) -> None:
    assert "vcs-push" in primitives(layer, command), command


@pytest.mark.parametrize("command", ["npx semantic-release --dry-run", "release-it --dry-run",
                                     "np --preview", "electron-builder --publish never"])
def test_release_tools_that_only_rehearse(layer: GovernanceLayer, command: str) -> None:
    assert "vcs-push" not in primitives(layer, command), command


def test_an_option_after_the_package_is_the_packages_own(layer: GovernanceLayer) -> None:
    # npx only prints for its own --help; `npx -y PKG --help` still fetches and runs PKG
    assert primitives(layer, "npx --help") == {"shell-read"}
    assert "package-install" in primitives(layer, "npx -y some-tool --help")
    assert "package-install" in primitives(layer, "npx -y create-vite@latest app --version")


def test_a_launcher_reads_only_its_own_options_as_its_own(layer: GovernanceLayer) -> None:
    # -p and -c after the package are the package's: not npx --package, not npx --call
    found = primitives(layer, "npx eslint -c rm-rf.json src")
    assert "destructive" not in found and "shell-unknown" not in found, found
    acts, _ = layer.acts_for("Bash", {"command": "npx @anthropic-ai/claude-code -p 'fix it'"},
                             layer.project_dir)
    assert any("@anthropic-ai/claude-code" in a.reason for a in acts), [a.reason for a in acts]
