# claude-governance: workflow governance for Claude Code.
# Bootstrap once: python3 -m venv .venv && .venv/bin/pip install rust-just  (then .venv/bin/just ...)

set shell := ["bash", "-euo", "pipefail", "-c"]

venv := justfile_directory() / ".venv"
py := venv / "bin" / "python"
gov := venv / "bin" / "governance"
# The project the state commands act on: $GOVERNANCE_PROJECT, else the folder just was called from.
project := env_var_or_default("GOVERNANCE_PROJECT", invocation_directory())

# list the recipes
default:
    @just --list --justfile {{justfile()}}

# create .venv and install claude-governance with its dev tools (idempotent)
setup:
    @test -x {{py}} || python3 -m venv {{venv}}
    @{{py}} -m pip install -q --disable-pip-version-check --upgrade pip
    @{{py}} -m pip install -q --disable-pip-version-check ".[dev]"
    @# setuptools' distutils-precedence.pth runs code at every interpreter start: the hooks do not need it
    @{{py}} -m pip uninstall -q -y setuptools 2>/dev/null || true
    @echo "claude-governance installed in {{venv}}"

# set up, then show governed tool calls end to end in a temporary project
demo: setup
    {{py}} -m governance.bench.demo

# run the whole test suite
test: setup
    {{py}} -m pytest

# lint and type-check
lint: setup
    {{venv}}/bin/ruff check governance hooks tests
    {{venv}}/bin/mypy

# what CI runs
ci: setup lint
    {{py}} -m pytest

# hook cost against a bare interpreter (exits 1 when a target is missed), then ledger and decisions
bench: setup
    #!/usr/bin/env bash
    set -uo pipefail
    status=0
    {{py}} -m governance.bench.hooks || status=$?
    {{py}} -m governance.bench.ledger || status=$?
    {{py}} -m governance.bench.decisions || status=$?
    {{py}} -m governance.bench.knowledge || status=$?
    {{py}} -m governance.bench.intents || status=$?
    {{py}} -m pip install -q --disable-pip-version-check ".[load]" \
        && {{py}} -m governance.bench.server || status=$?
    exit $status

# PreToolUse hook time in the real Claude Code: command, http and mcp_tool hooks side by side
bench-client *flags="": setup
    {{py}} tests/e2e/hook_timing.py {{flags}}

# 10 minutes of mixed and hostile load on governance serve: no 5xx, no answer without the token,
# RSS flat, the ledger verifies (not part of CI)
soak *flags="": setup
    {{py}} -m governance.bench.soak {{flags}}

# the resident server for a project (CSTP for agents, hooks over HTTP), in the background
serve dir=project *flags="":
    {{gov}} serve --project {{dir}} --detach {{flags}}

# stop the project's resident server
serve-stop dir=project:
    {{gov}} serve --project {{dir}} --stop

# register the hooks in a project's .claude/settings.json
install dir=project *flags="":
    {{gov}} install --project {{dir}} {{flags}}

# remove our hooks from a project's settings
uninstall dir=project:
    {{gov}} uninstall --project {{dir}}

# check that governance works in a project
doctor dir=project:
    {{gov}} doctor --project {{dir}}

# validate the project's activity matrix and accept it (governance uses only an accepted matrix)
validate dir=project:
    {{gov}} validate --project {{dir}}

# accept the state, matrix and owned settings as they are now (after a change made outside governance)
accept dir=project:
    {{gov}} accept --project {{dir}}

# set the cycle state, e.g. just set-cycle implementation-cycle DO WORK-064
set-cycle cycle phase work="":
    {{gov}} state set --project {{project}} {{cycle}} {{phase}} {{work}}

# print cycle/PHASE/WORK
get-cycle:
    @{{gov}} state get --project {{project}}

# move to the next phase of the current cycle
next:
    {{gov}} state next --project {{project}}

# the state and what is allowed, warned and blocked in it
state:
    @{{gov}} state show --project {{project}}

# how a Bash command is analysed and decided, e.g. just explain 'git add . && git push --force'
explain command:
    {{gov}} explain-command --project {{project}} {{quote(command)}}

# decide a tool call as the hook would, e.g. just check WebFetch '{"url": "https://x"}'
check tool input="{}":
    {{gov}} check --project {{project}} {{tool}} --input '{{input}}'
