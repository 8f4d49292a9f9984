"""The shell: section: validation errors name file and key, compiled form, merging, user patterns."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from governance.errors import ConfigError
from governance.shell.analysis import analyse_command
from governance.shell.schema import compile_shell, load_default_shell, merge_shell
from tests.shell.corpus import is_protected


def prims(command: str, shell: dict[str, object]) -> set[str]:
    return {a.primitive for a in analyse_command(command, shell, is_protected=is_protected)}


def test_default_section_compiles_to_plain_marshal_data() -> None:
    shell = load_default_shell()
    assert marshal.loads(marshal.dumps(shell)) == shell
    assert {"destructive", "web-fetch", "governance-admin", "vcs-push"} <= set(shell["primitives"])


def test_empty_section_compiles() -> None:
    shell = compile_shell(None, "m.yaml")
    assert shell["commands"] == {} and shell["limits"]["max_length"] > 0
    assert prims("curl x", shell) == {"shell-unlisted"}


@pytest.mark.parametrize(("section", "key"), [
    ({"commands": {"rm": {"patterns": [{"primitive": "Bad Name"}]}}},
     "shell.commands.rm.patterns[0].primitive"),
    ({"commands": {"rm": {"patterns": [{"primitive": "x", "targets": "some"}]}}},
     "shell.commands.rm.patterns[0].targets"),
    ({"commands": {"rm": {"patterns": [{"primitive": "x", "flagz": ["-r"]}]}}},
     "shell.commands.rm.patterns[0].flagz"),
    ({"wrappers": {"sudo": {"skip": -1}}}, "shell.wrappers.sudo.skip"),
    ({"limits": {"max_length": 0}}, "shell.limits.max_length"),
    ({"read_only": "ls"}, "shell.read_only"),
])
def test_errors_name_file_and_key(section: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        compile_shell(section, "/p/.claude/governance/activity_matrix.yaml")
    assert info.value.key == key
    assert info.value.file == "/p/.claude/governance/activity_matrix.yaml"
    assert "docs/shell.md" in (info.value.fix or "")


def test_user_patterns_add_primitives_without_python() -> None:
    base = load_default_shell()
    over = compile_shell({"commands": {
        "terraform": {"patterns": [{"primitive": "deploy", "sub": "apply",
                                    "reason": "terraform apply changes infrastructure"}]},
        "rm": {"patterns": [{"primitive": "needs-review", "flags": ["-i"]}]},
    }, "read_only": ["mytool"]}, "project.yaml")
    shell = merge_shell(base, over)
    assert prims("terraform apply -auto-approve", shell) == {"deploy"}
    assert prims("terraform destroy", shell) == {"destructive"}
    assert prims("rm -i x", shell) == {"needs-review", "file-delete"}
    assert prims("mytool --list", shell) == {"shell-read"}
    assert "deploy" in shell["primitives"]
    acts = analyse_command("terraform apply", shell, is_protected=is_protected)
    assert acts[0].reason == "terraform apply changes infrastructure"


def test_replace_drops_the_default_patterns() -> None:
    over = compile_shell({"commands": {"curl": {"replace": True, "patterns": [
        {"primitive": "web-fetch", "args": ["https://internal.example/*"], "reason": "internal"},
    ]}}}, "p.yaml")
    shell = merge_shell(load_default_shell(), over)
    assert prims("curl https://internal.example/x", shell) == {"web-fetch"}
    assert prims("curl https://elsewhere.example", shell) == {"shell-execute"}


def test_text_targets_and_flags_conditions(tmp_path: Path) -> None:
    shell = compile_shell({"commands": {"deploy": {
        "with_value": ["--env"],
        "patterns": [
            {"primitive": "prod-change", "text": ["PROD"], "reason": "touches production"},
            {"primitive": "file-write", "target_options": ["--log"], "flags": ["--log"]},
        ]}}}, "p.yaml")
    assert prims("deploy --env prod", shell) == {"prod-change"}
    assert prims("deploy --env staging", shell) == {"shell-execute"}
    assert prims("deploy --log .claude/governance/x", shell) == {"file-write",
                                                                 "governance-admin"}
