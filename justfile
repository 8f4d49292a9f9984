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
    @just --list --justfile {{quote(justfile())}}

# create .venv and install claude-governance with its dev tools (idempotent)
setup: (_install ".[dev]")
    @echo "claude-governance installed in {{venv}}"

# a tour in a temporary project: a deny, an ask, a knowledge block, an intent refusal (installs no dev tools)
demo: (_install ".")
    {{quote(gov)}} demo

# regenerate the reference pages (docs/reference: the matrix format, the CLI) from the code
docs: (_install ".")
    {{quote(py)}} -m governance.commands.cli reference --write docs/reference

# create .venv if missing and install `target` into it
_install target:
    @test -x {{quote(py)}} || python3 -m venv {{quote(venv)}}
    @{{quote(py)}} -m pip install -q --disable-pip-version-check --upgrade pip
    @{{quote(py)}} -m pip install -q --disable-pip-version-check {{quote(target)}}
    @# setuptools' distutils-precedence.pth runs code at every interpreter start: the hooks do not need it
    @{{quote(py)}} -m pip uninstall -q -y setuptools 2>/dev/null || true

# run the whole test suite, on two processes (pytest-xdist; `pytest` alone runs it on one)
test: setup
    {{quote(py)}} -m pytest -n 2

# lint and type-check
lint: setup
    {{quote(venv / "bin" / "ruff")}} check governance hooks tests
    {{quote(venv / "bin" / "mypy")}}

# what CI runs
ci: setup lint
    {{quote(py)}} -m pytest

# hook cost against a bare interpreter (exits 1 when a target is missed), then ledger, decisions, report; `just bench team [flags]`: the team database (docs/team.md)
bench *which="": setup
    #!/usr/bin/env bash
    set -uo pipefail
    set -- {{which}}
    if [ "$#" -gt 0 ]; then
        [ "$1" = team ] || { echo "just bench: no bench named '$1' (just bench, or just bench team)" >&2; exit 2; }
        shift
        exec {{quote(py)}} -m governance.bench.team "$@"
    fi
    status=0
    {{quote(py)}} -m governance.bench.hooks || status=$?
    {{quote(py)}} -m governance.bench.ledger || status=$?
    {{quote(py)}} -m governance.bench.decisions || status=$?
    {{quote(py)}} -m governance.bench.knowledge || status=$?
    {{quote(py)}} -m governance.bench.intents || status=$?
    {{quote(py)}} -m governance.bench.report || status=$?
    {{quote(py)}} -m pip install -q --disable-pip-version-check ".[load]" \
        && {{quote(py)}} -m governance.bench.server || status=$?
    exit $status

# PreToolUse hook time in the real Claude Code: command, http and mcp_tool hooks side by side
bench-client *flags="": setup
    {{quote(py)}} tests/e2e/hook_timing.py {{flags}}

# 10 minutes of mixed and hostile load on governance serve: no 5xx, no answer without the token,
# RSS flat, the ledger verifies (not part of CI)
soak *flags="": setup
    {{quote(py)}} -m governance.bench.soak {{flags}}

# the resident server for a project (CSTP for agents, hooks over HTTP), in the background
[no-cd]
serve dir=project *flags="":
    {{quote(gov)}} serve --project {{quote(dir)}} --detach {{flags}}

# stop the project's resident server
[no-cd]
serve-stop dir=project:
    {{quote(gov)}} serve --project {{quote(dir)}} --stop

# register the hooks in a project's .claude/settings.json
[no-cd]
install dir=project *flags="":
    GOVERNANCE_VIA=just {{quote(gov)}} install --project {{quote(dir)}} {{flags}}

# remove our hooks from a project's settings
[no-cd]
uninstall dir=project:
    GOVERNANCE_VIA=just {{quote(gov)}} uninstall --project {{quote(dir)}}

# check that governance works in a project
[no-cd]
doctor dir=project:
    {{quote(gov)}} doctor --project {{quote(dir)}}

# validate the project's activity matrix and accept it (governance uses only an accepted matrix)
[no-cd]
validate dir=project:
    GOVERNANCE_VIA=just {{quote(gov)}} validate --project {{quote(dir)}}

# accept the state, matrix and owned settings as they are now (after a change made outside governance)
[no-cd]
accept dir=project:
    GOVERNANCE_VIA=just {{quote(gov)}} accept --project {{quote(dir)}}

# set the cycle state, e.g. just set-cycle implementation-cycle DO WORK-064
set-cycle cycle phase work="":
    GOVERNANCE_VIA=just {{quote(gov)}} state set --project {{quote(project)}} {{quote(cycle)}} {{quote(phase)}} {{quote(work)}}

# print cycle/PHASE/WORK
get-cycle:
    @{{quote(gov)}} state get --project {{quote(project)}}

# move to the next phase of the current cycle
next:
    GOVERNANCE_VIA=just {{quote(gov)}} state next --project {{quote(project)}}

# the state and what is allowed, warned and blocked in it
state:
    @{{quote(gov)}} state show --project {{quote(project)}}

# how a Bash command is analysed and decided, e.g. just explain 'git add . && git push --force'
explain command:
    {{quote(gov)}} explain-command --project {{quote(project)}} {{quote(command)}}

# decide a tool call as the hook would, e.g. just check WebFetch '{"url": "https://x"}'
check tool input="{}":
    {{quote(gov)}} check --project {{quote(project)}} {{quote(tool)}} --input {{quote(input)}}
