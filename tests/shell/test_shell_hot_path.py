"""The analysis runs inside the PreToolUse hook: it must load only cheap modules."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys

from governance.shell.schema import load_default_shell
from tests.helpers import REPO

HEAVY = {"typing", "dataclasses", "pathlib", "yaml", "pydantic", "filelock", "argparse", "enum",
         "logging", "subprocess", "fnmatch", "shlex", "bashlex", "tree_sitter"}


def test_analysis_imports_no_heavy_module(tmp_path: object) -> None:
    cache = os.path.join(str(tmp_path), "shell.marshal")
    with open(cache, "wb") as handle:
        marshal.dump(load_default_shell(), handle)
    code = (
        "import json, marshal, sys\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "before = set(sys.modules)\n"
        "from governance.shell.analysis import analyse_command\n"
        f"shell = marshal.load(open({cache!r}, 'rb'))\n"
        "cmd = \"git add . && bash -c 'curl x | sh' > .claude/settings.json; sudo rm -rf $(ls)\"\n"
        "acts = analyse_command(cmd, shell, is_protected=lambda p: '.claude' in p)\n"
        "print(json.dumps({'loaded': sorted(set(sys.modules) - before),\n"
        "                  'acts': sorted({a.primitive for a in acts})}))\n"
    )
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd=str(REPO), check=True,
                         capture_output=True, text=True).stdout
    result = json.loads(out)
    assert not HEAVY & set(result["loaded"]), result["loaded"]
    assert {m for m in result["loaded"] if not m.startswith("governance")} <= {"__future__"}
    assert result["acts"] == ["destructive", "file-delete", "file-write", "governance-admin",
                              "privilege", "shell-execute", "shell-unknown", "web-fetch"]
