"""What the matrix's keys, actions and packaged primitives mean, in words: the text of the
generated reference page (``governance reference``). A key or primitive added without a line here
(or a ``description`` on its schema field) makes ``governance reference`` refuse to write."""

from __future__ import annotations

# The names shown for the mapping levels above a nested model, by key path.
PLACEHOLDERS: dict[str, list[str]] = {
    "rules": ["PRIMITIVE", "STATE"],
    "skill_restrictions": ["STATE"],
}

# key path -> meaning; "PATH:" -> a paragraph introducing that section.
KEYS: dict[str, str] = {
    "version": "The matrix format: 1 (also written \"1.0\", as HAIOS does). A file without it is format 1; "
               "a later format is an error that names the fix.",
    "extends": "`default`: lay this file over the packaged matrix, key by key (a key this file "
               "does not set keeps the packaged value). Unset: this file replaces the packaged "
               "matrix as a whole, except `tools`, `protected_paths`, `exec_config_paths`, "
               "`secrets`, `egress`, `sandbox_network`, `mcp_paths` and `shell`, "
               "which are inherited when this file has none.",
    "default_action": "The action for a primitive that has no rule in a state (an unknown tool "
                      "is the primitive `unknown`).",
    "states": "The workflow states. Unset: EXPLORE, DESIGN, PLAN, DO, CHECK, DONE.",
    "settings": "How governance itself behaves (below).",
    "rules": "`rules.PRIMITIVE.STATE` (or `rules.PRIMITIVE._all_states`): the rule for a "
             "primitive in a state (below). A state's own rule wins over `_all_states`.",
    "tools": "Tool name -> primitive. An exact name first, then fnmatch globs "
             "(`mcp__jira__create*`) in the order written; the first match wins.",
    "protected_paths": "Globs of files the agent may not change through any tool (relative to "
                       "the project, absolute, or `~/...`): a write to one is `governance-admin`.",
    "exec_config_paths": "Globs of files whose writing changes what a later command does (git "
                         "config and hooks, shell start-up files, package.json, Makefiles, "
                         "justfiles ...): a write to one, by any tool, is `exec-config`. A "
                         "pattern without `/` is a file name in any folder of the project; one "
                         "with `/` is relative to the project; also `~/...`, "
                         "`$XDG_CONFIG_HOME/...` and absolute paths. Every layer's entries are "
                         "joined.",
    "secrets": "What holds credentials (docs/secrets.md): reading one is `secret-read`; a "
               "secret reaching a network request is `exfiltration`, unless the host is one it "
               "belongs to (below).",
    "egress": "Where a session may still send requests after it read a secret (below).",
    "secrets.paths": "Globs of secret files, read as `exec_config_paths` are (a file name in any "
                     "folder, a path relative to the project, `~/...`, `$XDG_CONFIG_HOME/...`, "
                     "absolute; without regard to case). Every layer's entries are joined.",
    "secrets.not_paths": "Exceptions to `secrets.paths` (`.env.example`, `*.pub`): also how a "
                         "project allows one file. Joined across layers.",
    "secrets.variables": "Globs of environment variable names that hold secrets (`*_TOKEN`, "
                         "`*PASSWORD*`), compared in upper case. Joined across layers.",
    "secrets.not_variables": "Exceptions to `secrets.variables` (`*_PUBLIC_KEY`, `*_KEY_PATH`). "
                             "Joined across layers.",
    "secrets.owners": "A variable (glob) or a secret file's pattern -> the hosts it belongs to "
                      "(globs): sending it there is its use, not exfiltration (`GH_TOKEN: "
                      "[github.com, \"*.github.com\"]`). A layer's entry replaces the lower one.",
    "secrets.taint_minutes": "How long a session stays tainted after it read a secret (default "
                             "60): meanwhile a request to a host outside `egress.allow` is "
                             "`exfiltration`.",
    "egress.allow": "Host globs a tainted session may still reach: package registries, code "
                    "hosts, documentation. Joined across layers.",
    "sandbox_network": "`PRIMITIVE: [hosts]`: the acts that reach the network from a Bash "
                       "command, each with the hosts it needs. Where the sandbox is part of "
                       "governance, a state that blocks, asks or redirects any of them closes "
                       "Bash's network, except to the hosts of the acts it allows: governance's "
                       "own proxy decides each connection of a sandboxed command by the state "
                       "(docs/sandbox.md). "
                       "An act without hosts opens nothing (any web page; the git host, which "
                       "push and fetch share): the hook keeps deciding it. A layer's list "
                       "replaces the lower one for that primitive.",
    "mcp_paths": "Which keys of an MCP tool's input name files, checked against "
                 "`protected_paths` (below).",
    "skill_restrictions": "Per state: the skills (the Skill tool's skill name, fnmatch) that are "
                          "blocked or alone allowed (below).",
    "phase_to_state": "`cycle/PHASE` -> state: which state a cycle's phase puts the project in.",
    "cycles": "Cycle -> its phases in order, for `governance state next`. Unset: the order of "
              "`phase_to_state`.",
    "shell": "The Bash analysis: commands, wrappers, interpreters and patterns that turn a "
             "command line into acts with primitives (docs/shell.md, \"The patterns\").",
    "settings:": "Every key is optional; a layer changes only the keys it sets.",
    "settings.on_error": "When governance itself fails: `allow` lets the call through and says "
                         "so (fail open), `block` denies it (fail closed).",
    "settings.grant_on_allow": "`true`: an allowed call also skips Claude Code's own permission "
                               "prompt. `false`: an allow grants nothing, Claude Code's own "
                               "permission rules still decide.",
    "settings.require_intent": "`true`: every change needs an active intent and stays inside "
                               "its scope (docs/intents.md).",
    "settings.fallback_state": "The state used when no state is set, the state file cannot be "
                               "read, or its phase is unknown.",
    "settings.ledger_max_bytes": "The ledger file is rotated when it grows past this size "
                                 "(bytes).",
    "rules.PRIMITIVE.STATE:": "One rule: the action for a primitive in a state, and what the "
                              "model is told.",
    "rules.PRIMITIVE.STATE.action": "What happens to the call (see Actions below).",
    "rules.PRIMITIVE.STATE.message": "The reason given to the model (and, for `warn`, to the "
                                     "user).",
    "rules.PRIMITIVE.STATE.redirect_to": "For `redirect`: the tool or agent to use instead "
                                         "(required with `redirect`).",
    "rules.PRIMITIVE.STATE.locked": "Only in the organisation's matrix: `false` makes the cell a "
                                    "default a project may override; otherwise it is a floor no "
                                    "project can loosen (docs/organisation.md).",
    "skill_restrictions.STATE.allowed": "Only these skills are allowed in the state (fnmatch "
                                        "globs); unset: every skill not blocked.",
    "skill_restrictions.STATE.blocked": "Skills blocked in the state (fnmatch globs).",
    "skill_restrictions.STATE.block_message": "The reason given for a blocked skill; `{skill}` "
                                              "is replaced by its name.",
    "mcp_paths.keys": "Input keys that name a file in any MCP tool (`path`, `destination`, ...).",
    "mcp_paths.servers": "MCP server name -> the input keys that name files in its tools.",
}

ACTIONS: dict[str, str] = {
    "allow": "The call goes ahead; Claude Code's own permission rules still decide "
             "(unless `settings.grant_on_allow`).",
    "warn": "The call goes ahead; the model and the user are told why it is unusual.",
    "block": "The call is denied; the model is told why and what to do instead.",
    "redirect": "The call is denied, naming what to use instead (`redirect_to`).",
    "ask": "Claude Code asks the user to approve the call (refused where nobody can answer, as "
           "under `claude -p`).",
}

PRIMITIVES: dict[str, str] = {
    "file-read": "Reading a file.",
    "file-search": "Finding files by name.",
    "content-search": "Searching file contents or code symbols.",
    "file-write": "Writing a file (a new file or a whole one), by a tool or a shell redirection.",
    "file-edit": "Changing part of a file.",
    "file-delete": "Deleting files (`rm` without recursion, `unlink`, ...).",
    "notebook-edit": "Changing a Jupyter notebook.",
    "shell-read": "A command known only to read or print (`ls`, `cat`, `git status`, ...).",
    "shell-execute": "A Bash command that runs something (a build, the tests, a known program).",
    "shell-unlisted": "A program governance has no entry for (its arguments are still read for "
                      "commands it runs).",
    "shell-background": "A command left running in the background (`run_in_background`, "
                        "Monitor).",
    "shell-unknown": "A command that could not be fully analysed (text produced at run time, "
                     "a parse limit, a binary or a file too large or too deep to read).",
    "code-exec": "Inline interpreter code (`python -c`, `node -e`, ...) or a variable that makes "
                 "a command load other code.",
    "destructive": "Recursive deletes, hard resets, force pushes, disk writes: data or history "
                   "lost.",
    "package-install": "Installing packages (pip, npm, apt, ...).",
    "privilege": "Running with elevated privileges (`sudo`, `su`, `doas`, ...).",
    "vcs-commit": "Recording changes in version control (`git commit`, ...).",
    "vcs-push": "Publishing commits (`git push`, ...).",
    "web-fetch": "Fetching a URL.",
    "deploy": "A deploy whose environment the command does not name (`helm upgrade`, `kubectl "
              "apply`, `terraform apply`, `pulumi up`, `fly deploy`, `serverless deploy`, "
              "`docker --context X compose up` ...; docs/shell.md, \"Deploys\").",
    "deploy-dev": "A deploy to a dev environment (a word of `shell.deploy_environments.dev` in "
                  "the command: `-n dev`, `--stack org/dev`, a `vercel` preview).",
    "deploy-staging": "A deploy to staging (a word of `shell.deploy_environments.staging` in the "
                      "command: `-n staging`, `--stage uat`).",
    "deploy-production": "A deploy to production (a word of "
                         "`shell.deploy_environments.production` in the command: `--prod`, "
                         "`--context prod-eu`).",
    "local-request": "A request that stays on this machine: to a loopback address (127.0.0.0/8, "
                     "::1, localhost, *.localhost), a Unix socket or one of the project's dev "
                     "hosts (`shell.local_hosts`), with no proxy or address mapping that could "
                     "send it elsewhere.",
    "web-search": "Searching the web.",
    "user-query": "Asking the user a question.",
    "memory-search": "Reading an agent memory store (an MCP memory server).",
    "memory-store": "Writing to an agent memory store.",
    "task-spawn": "Starting a sub-agent or workflow.",
    "task-manage": "The task and todo lists.",
    "skill-invoke": "Running a skill (see `skill_restrictions`).",
    "plan-enter": "Entering plan mode.",
    "plan-exit": "Leaving plan mode.",
    "worktree": "Entering or leaving a git worktree.",
    "schedule": "Scheduled or remote work (cron, wake-ups, remote triggers).",
    "message": "Messages and files sent to the user or to other agents.",
    "meta": "Tools about the session itself (tool search, agent lists, notifications).",
    "mcp-read": "An MCP tool that only lists, gets or reads.",
    "mcp-call": "Any other MCP tool: it may change an external system.",
    "cycle-advance": "Moving the cycle to its next phase (`governance state next`) from the "
                     "agent.",
    "exec-config": "Writing a file that changes what a later command does (`exec_config_paths`: "
                   "`.git/config`, `.git/hooks/*`, `~/.bashrc`, `package.json`, a Makefile ...) "
                   "or setting a key with `git config`.",
    "secret-read": "Reading what holds credentials (`secrets.paths`: `.env`, `~/.ssh/id_*`, "
                   "`~/.aws/credentials` ...) with a file tool or a shell reader, or dumping the "
                   "environment.",
    "exfiltration": "A request that carries a secret (a secret variable, a secret file's "
                    "content, a secret-shaped value) to a host it does not belong to, or that "
                    "leaves a session that read a secret for a host outside `egress.allow`.",
    "governance-admin": "Changing governance itself: the state, the matrix, the hook settings, "
                        "the SOPs, the intents, our installation.",
    "sandbox-escape": "A Bash call with `dangerouslyDisableSandbox: true` while the sandbox is "
                      "part of governance.",
}
