"""The shell: section: validation errors name file and key, compiled form, merging, user patterns."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from governance.errors import ConfigError
from governance.project import default_matrix_path
from governance.shell.analysis import analyse_command
from governance.shell.schema import compile_layers, compile_shell, load_default_shell
from tests.shell.corpus import is_protected


def _default_section() -> tuple[str, dict[str, object]]:
    import yaml

    path = default_matrix_path()
    return path, yaml.safe_load(Path(path).read_text())["shell"]


DEFAULT_SHELL = _default_section()


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
    ({"commands": {"zcloud": {"lexicon": "remote"}}}, "shell.commands.zcloud"),
])
def test_errors_name_file_and_key(section: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        compile_shell(section, "/p/.claude/governance/activity_matrix.yaml")
    assert info.value.key == key
    assert info.value.file == "/p/.claude/governance/activity_matrix.yaml"
    assert "docs/shell.md" in (info.value.fix or "")


def test_user_patterns_add_primitives_without_python() -> None:
    over = {"commands": {
        "terraform": {"patterns": [{"primitive": "deploy", "sub": "apply",
                                    "reason": "terraform apply changes infrastructure"}]},
        "rm": {"patterns": [{"primitive": "needs-review", "flags": ["-i"]}]},
    }, "read_only": ["mytool"]}
    shell = compile_layers([DEFAULT_SHELL, ("project.yaml", over)])
    assert prims("terraform apply -auto-approve", shell) == {"deploy"}
    assert prims("terraform destroy", shell) == {"destructive"}
    assert prims("rm -i x", shell) == {"needs-review", "file-delete"}
    assert prims("mytool --list", shell) == {"shell-read"}
    assert "deploy" in shell["primitives"]
    acts = analyse_command("terraform apply", shell, is_protected=is_protected)
    assert acts[0].reason == "terraform apply changes infrastructure"


def test_replace_drops_the_default_patterns() -> None:
    over = {"commands": {"curl": {"replace": True, "patterns": [
        {"primitive": "web-fetch", "args": ["https://internal.example/*"], "reason": "internal"},
    ]}}}
    shell = compile_layers([DEFAULT_SHELL, ("p.yaml", over)])
    assert prims("curl https://internal.example/x", shell) == {"web-fetch"}
    assert prims("curl elsewhere.example", shell) == {"shell-execute"}


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


def test_a_layer_changes_only_the_keys_it_writes() -> None:
    """A project's section that writes one limit, one wrapper key or one interpreter list keeps
    every other value of the packaged section (an unset key is not a value)."""
    base = load_default_shell()
    name, wrapper = next(iter(DEFAULT_SHELL[1]["wrappers"].items()))
    interpreter = next(iter(DEFAULT_SHELL[1]["interpreters"]))
    over = {"limits": {"max_depth": 3},
            "wrappers": {name: {"reason": "a project's reason"}},
            "interpreters": {interpreter: {"module": ["extra-module"]}},
            "read_only": ["mytool"]}
    shell = compile_layers([DEFAULT_SHELL, ("p.yaml", over)])
    assert shell["limits"] == {**base["limits"], "max_depth": 3}
    assert shell["wrappers"][name] == {**base["wrappers"][name], "reason": "a project's reason"}
    assert shell["interpreters"][interpreter]["inline"] == base["interpreters"][interpreter]["inline"]
    assert shell["interpreters"][interpreter]["module"] == {"extra-module": 1}
    assert set(base["read_only"]) | {"mytool"} == set(shell["read_only"])
    for key in ("commands", "finders", "modules", "evaluators", "protected_markers", "shells"):
        assert shell[key] == base[key], key
    assert wrapper  # the packaged wrapper has keys of its own that were kept


def test_an_added_pattern_is_tried_first_and_keeps_the_commands_other_keys() -> None:
    base = load_default_shell()
    over = {"commands": {"git": {"patterns": [{"primitive": "vcs-push", "sub": "sync"}]}}}
    shell = compile_layers([DEFAULT_SHELL, ("p.yaml", over)])
    git, old = shell["commands"]["git"], base["commands"]["git"]
    assert git["patterns"][0]["sub"] == ["sync"] and git["patterns"][1:] == old["patterns"]
    for key in ("with_value", "runs", "recipes", "harmless", "command_options", "program"):
        assert git[key] == old[key], key


def test_a_null_is_not_a_value() -> None:
    base = load_default_shell()
    wrappers = {name: {"primitive": None, "after": None, "default": None}
                for name in DEFAULT_SHELL[1]["wrappers"]}
    shell = compile_layers([DEFAULT_SHELL, ("p.yaml", {"wrappers": wrappers})])
    assert shell == base


def test_an_error_in_a_layer_names_its_file() -> None:
    with pytest.raises(ConfigError) as info:
        compile_layers([DEFAULT_SHELL, ("p.yaml", {"limits": {"max_depth": -1}})])
    assert (info.value.file, info.value.key) == ("p.yaml", "shell.limits.max_depth")


def test_a_remote_lexicon_reads_its_read_verbs_as_the_default() -> None:
    """``lexicon: remote`` (a provider's CLI): a read verb is the entry's default act, a
    destructive verb stays destructive, help stays a read."""
    shell = compile_layers([DEFAULT_SHELL, ("p.yaml", {"commands": {"zcloud": {
        "lexicon": "remote", "default": {"primitive": "web-fetch", "reason": "zcloud calls its API"}}}})])
    assert prims("zcloud widgets list", shell) == {"web-fetch"}
    assert prims("zcloud widgets delete w1", shell) == {"destructive"}
    assert prims("zcloud help", shell) == {"shell-read"}
    with pytest.raises(ConfigError) as info:
        compile_shell({"commands": {"zcloud": {"lexicon": "remote"}}}, "/p/m.yaml")
    assert "default" in str(info.value)
