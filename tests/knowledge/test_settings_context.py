"""``governance.knowledge.settings`` (the configuration) and ``knowledge.lookup.of_call`` (what a call
names and which detectors it trips)."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.errors import ConfigError
from governance.knowledge import settings
from governance.knowledge.lookup import of_call


def override(project: Path, text: str) -> Path:
    path = Path(settings.override_path(str(project)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_packaged_defaults_load(project: Path) -> None:
    loaded = settings.load(str(project))
    assert loaded["level"] == "advisory"
    assert loaded["cooldown_minutes"] == 5
    assert loaded["risk"]["critical"]["threshold"] == 0.8
    assert "destructive" in loaded["risk"]["critical"]["primitives"]
    assert {d["name"] for d in loaded["detectors"]} >= {"docker", "comfyui", "{name}"}


def test_an_override_replaces_settings_and_adds_detectors(project: Path) -> None:
    override(project, "enforcement:\n  level: strict\n  cooldown_minutes: 1\n"
                      "detectors:\n  - {kind: fleet, name: gpu-box, hosts: ['10.0.0.163']}\n")
    loaded = settings.load(str(project))
    assert loaded["level"] == "strict"
    assert loaded["cooldown_minutes"] == 1
    assert loaded["max_memories"] == 5                      # kept from the packaged file
    assert loaded["detectors"][-1] == {"kind": "fleet", "name": "gpu-box", "words": [],
                                       "ports": [], "hosts": ["10.0.0.163"], "paths": []}
    assert any(d["name"] == "docker" for d in loaded["detectors"])


@pytest.mark.parametrize(("text", "key"), [
    ("enforcement:\n  level: loud\n", "enforcement.level"),
    ("enforcement:\n  categories: {security: maybe}\n", "enforcement.categories.security"),
    ("enforcement:\n  cooldown_minutes: -1\n", "enforcement.cooldown_minutes"),
    ("risk:\n  critical: {threshold: 2}\n", "risk.critical.threshold"),
    ("detectors:\n  - {kind: planet, name: x, words: [x]}\n", "detectors[10].kind"),
    ("detectors:\n  - {kind: service, name: x}\n", "detectors[10]"),
    ("detectors:\n  - {kind: service, name: x, words: [x], colour: red}\n", "detectors[10].colour"),
    ("surprise: 1\n", "surprise"),
])
def test_errors_name_the_file_and_the_key(project: Path, text: str, key: str) -> None:
    path = override(project, text)
    with pytest.raises(ConfigError) as caught:
        settings.load(str(project))
    assert caught.value.file == str(path)
    assert caught.value.key == key
    assert caught.value.fix


def detectors(project: Path, extra: str = "") -> list[dict[str, object]]:
    if extra:
        override(project, "detectors:\n" + extra)
    return list(settings.load(str(project))["detectors"])


def test_a_bash_call_is_read_from_its_acts(project: Path) -> None:
    why: dict[str, str] = {}
    acts = [{"primitive": "shell-execute", "segment": "docker compose -f deploy/compose.yaml up -d"},
            {"primitive": "web-fetch", "segment": "curl -s http://localhost:8188/queue"}]
    ctx = of_call(str(project), "Bash", {"command": "ignored when there are acts"}, str(project),
                  acts, detectors(project), why)
    assert {"docker", "compose", "up", "curl", "localhost"} <= ctx.words
    assert "ignored" not in ctx.words
    assert ctx.ports == {"8188"}
    assert ctx.names["technology"] == {"docker"}
    assert ctx.names["service"] == {"comfyui"}
    assert ctx.names["project"] == {"shop-api"}
    assert why["technology docker"] == "the word 'docker'"
    assert why["service comfyui"] == "the port 8188"


def test_hosts_from_ssh_scp_urls_and_host_globs(project: Path) -> None:
    dets = detectors(project, "  - {kind: fleet, name: gpu-box, hosts: ['10.0.0.*']}\n")
    for segment, host in (("ssh deploy@10.0.0.163 uptime", "10.0.0.163"),
                          ("ssh -p 2222 10.0.0.17 ls", "10.0.0.17"),
                          ("scp build.tar 10.0.0.5:/srv/", "10.0.0.5"),
                          ("rsync -a dist/ ops@10.0.0.9:/srv/www", "10.0.0.9")):
        ctx = of_call(str(project), "Bash", {}, None, [{"segment": segment}], dets)
        assert host in ctx.hosts, segment
        assert ctx.names.get("fleet") == {"gpu-box"}, segment
    web = of_call(str(project), "WebFetch", {"url": "https://user:pw@docs.example.com:8443/x"},
                  None, [], dets)
    assert web.hosts == {"docs.example.com"} and web.ports == {"8443"}
    assert "fleet" not in web.names


def test_project_names_from_path_templates_and_mcp_servers(project: Path, tmp_path: Path) -> None:
    dets = detectors(project)
    ctx = of_call(str(project), "Edit", {"file_path": "/home/dev/Projects/billing/src/app.py"},
                  None, [], dets)
    assert ctx.names["project"] == {"shop-api", "billing"}
    mcp = of_call(str(project), "mcp__github__create_pull_request", {}, None, [], dets)
    assert {"github", "create_pull_request"} <= mcp.words


def test_a_word_that_only_contains_a_detector_word_does_not_trip_it(project: Path) -> None:
    ctx = of_call(str(project), "Bash", {}, None, [{"segment": "cat dockerfiles.txt"}],
                  detectors(project))
    assert "technology" not in ctx.names


def test_an_override_changes_only_the_keys_it_writes_at_any_depth(project: Path) -> None:
    """One category, one risk key or a null leave everything else of the packaged file as it was
    (a nested mapping is merged, not replaced: no category silently loses ``strict``)."""
    packaged = settings.load(str(project))
    override(project, "enforcement:\n  categories:\n    gotchas: strict\n  max_chars: null\n"
                      "risk:\n  critical:\n    words: [ship]\n  routine:\n")
    loaded = settings.load(str(project))
    assert loaded["categories"] == {**packaged["categories"], "gotchas": "strict"}
    assert loaded["categories"]["credentials"] == "strict"
    assert loaded["max_chars"] == packaged["max_chars"]
    assert loaded["risk"]["critical"] == {**packaged["risk"]["critical"], "words": ["ship"]}
    assert loaded["risk"]["routine"] == packaged["risk"]["routine"]
    for key in ("level", "cooldown_minutes", "max_memories", "detectors"):
        assert loaded[key] == packaged[key], key
