"""The YAML task files are read in (``governance.shell.blockyaml``): what PyYAML reads from a
block-style document, this reader reads the same (every scalar as text), or it says it cannot."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.shell.blockyaml import load


def as_text(value: Any) -> Any:
    """PyYAML's reading with every scalar as the text this reader keeps."""
    if isinstance(value, dict):
        return {str(k): as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_text(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return None if value is None else str(value)


SCALARS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
                  max_size=30).filter(lambda s: s.strip() == s)
KEYS = st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True)
DOCUMENTS = st.recursive(SCALARS, lambda inner: st.lists(inner, min_size=1, max_size=4) |
                         st.dictionaries(KEYS, inner, min_size=1, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, DOCUMENTS, min_size=1, max_size=5), st.sampled_from([2, 4]))
def test_what_pyyaml_dumps_in_block_style_is_read_back(data: dict[str, Any], indent: int) -> None:
    text = yaml.safe_dump(data, default_flow_style=False, indent=indent, allow_unicode=True,
                          width=40)
    found = load(text)
    if found is not None:
        assert found == as_text(yaml.safe_load(text)), text


@pytest.mark.parametrize("text", [
    "version: '3'\ntasks:\n  build:\n    cmds:\n      - go build ./... # compile\n"
    "      - cmd: echo \"done # really\"\n      - task: lint\n    deps: [fmt, 'vet']\n",
    "k: |\n  echo a\n\n  echo b\nf: >-\n  one\n  two\n\n  three\nz: last\n",
    "repos:\n-   repo: local\n    hooks:\n    -   id: x\n        entry: make lint\n",
    "a:\n- 1\n- - x\n  - y\nb: plain words\n  go on\nq: 'it''s'\n",
    "---\nfirst: 1\n",
])
def test_task_files_are_read_as_pyyaml_reads_them(text: str) -> None:
    assert load(text) == as_text(yaml.safe_load(text))


@pytest.mark.parametrize("text", [
    "a: &x 1\nb: *x\n", "a: !!str 1\n", "one: 1\n---\ntwo: 2\n", "<<: {a: 1}\n",
    "a: [1,\n  2]\n", "a: [[1]]\n", "? complex\n: key\n", "a:\n\t- tab\n", "%YAML 1.2\n---\na: 1\n",
])
def test_what_it_does_not_read_it_says(text: str) -> None:
    assert load(text) is None
