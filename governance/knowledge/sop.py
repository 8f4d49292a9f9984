"""SOP files: ``<project>/.claude/sops/*.ai.sop`` and ``~/.claude/sops/*.ai.sop``.

Markdown with an optional YAML front matter between ``---`` lines. Sections are ``##`` headings;
only ``preflight``, ``gotchas`` and ``credentials`` reach the model. The front matter's ``match:``
says when the SOP applies (lists of projects, services, hosts, technologies, tools, commands,
paths; all optional); an SOP without ``match:`` applies when its whole file name is a detected
name (``docker.ai.sop`` <- technology ``docker``; ``shop-api.ai.sop`` <- project ``shop-api``,
not ``shop``). Cold path: read when the knowledge index is built (``knowledge.indexer``), with
``yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from governance import system
from governance.errors import ConfigError
from governance.knowledge.lookup import SOP_SUFFIX, sop_dirs
from governance.project import managed_dir, org_dir

SUFFIX = SOP_SUFFIX
SECTIONS = {"preflight": "process", "gotchas": "gotchas", "credentials": "credentials"}
MATCH_KEYS = ("projects", "services", "hosts", "technologies", "tools", "commands", "paths")
FRONT_KEYS = ("match", "title")
MAX_BYTES = 256 * 1024


@dataclass
class Sop:
    """One SOP: its name (the file name without ``.ai.sop``), where it is, when it applies and
    the sections the model is shown (section -> text)."""

    name: str
    path: str
    title: str
    match: dict[str, list[str]] | None
    sections: dict[str, str] = field(default_factory=dict)


def load_all(project_dir: str) -> tuple[list[Sop], list[ConfigError]]:
    """Every SOP that parses, and an error for each one that does not (the rest still serve)."""
    found: dict[str, Sop] = {}
    problems: list[ConfigError] = []
    for folder in sop_dirs(project_dir):
        try:
            names = sorted(system.listdir(folder))
        except OSError:
            continue
        # the organisation's: read only when nobody but root could have written it
        organisation = folder == system.join(org_dir(), "sops")
        if organisation and (refused := _untrusted(folder, folder=True)):
            problems.append(refused)
            continue
        for name in names:
            if not name.endswith(SUFFIX) or name[:-len(SUFFIX)] in found:
                continue
            if organisation and (refused := _untrusted(system.join(folder, name))):
                problems.append(refused)
                continue
            try:
                sop = parse(system.join(folder, name))
            except ConfigError as exc:
                problems.append(exc)
                continue
            found[sop.name] = sop
    return list(found.values()), problems


def _untrusted(path: str, folder: bool = False) -> ConfigError | None:
    """The organisation's SOP (or its ``folder``, with the organisation's folders above it) as a
    problem when someone other than root could have written it: it is not read."""
    from governance.policy import managed

    chain = [managed_dir(), org_dir(), path] if folder else [path]
    for step in chain:
        why = managed.untrusted(step, folder=folder)
        if why:
            return ConfigError(f"the organisation's SOPs are not read from here ({why})",
                               file=step, fix=managed.FIX.replace("PATH", step))
    return None


def parse(path: str) -> Sop:
    """One SOP file; raises ConfigError naming the file (and key) when it is malformed."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read the SOP ({exc.strerror})", file=path,
                          fix="check the file's permissions") from None
    if len(raw) > MAX_BYTES:
        raise ConfigError(f"the SOP is larger than {MAX_BYTES // 1024} KB", file=path,
                          fix="split it into several SOPs")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError("the SOP is not UTF-8 text", file=path,
                          fix="save it as UTF-8") from None
    name = system.basename(path)[:-len(SUFFIX)]
    front, body = _front_matter(text, path)
    sections, title = _sections(body)
    match = _match(front.get("match"), path) if "match" in front else None
    if not any(sections.get(s) for s in SECTIONS):
        raise ConfigError("the SOP has no preflight, gotchas or credentials section", file=path,
                          fix="add a '## Preflight', '## Gotchas' or '## Credentials' section")
    return Sop(name, path, str(front.get("title") or title or name), match,
               {k: v for k, v in sections.items() if v})


def _front_matter(text: str, path: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---\n") and not text.startswith("---\r\n"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        raise ConfigError("the front matter has no closing '---' line", file=path,
                          fix="end the front matter with a line holding only ---")
    import yaml

    try:
        front = yaml.safe_load(text[text.index("\n") + 1:end]) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise ConfigError(f"the front matter is not valid YAML{where}", file=path,
                          fix="correct the YAML between the --- lines") from None
    if not isinstance(front, dict):
        raise ConfigError("the front matter is not a mapping", file=path,
                          fix="write it as keys: match:, title:")
    unknown = sorted(str(k) for k in front if k not in FRONT_KEYS)
    if unknown:
        raise ConfigError(f"unknown front matter key {unknown[0]!r}", file=path, key=unknown[0],
                          fix=f"use only {', '.join(FRONT_KEYS)}")
    rest = text[end + 4:]
    return front, rest[rest.find("\n") + 1:] if "\n" in rest else ""


def _match(value: object, path: str) -> dict[str, list[str]]:
    if not isinstance(value, dict) or not value:
        raise ConfigError("match must be a mapping of lists", file=path, key="match",
                          fix=f"use keys among {', '.join(MATCH_KEYS)}, each a list of names")
    out: dict[str, list[str]] = {}
    for key, items in value.items():
        if key not in MATCH_KEYS:
            raise ConfigError(f"unknown match key {key!r}", file=path, key=f"match.{key}",
                              fix=f"use only {', '.join(MATCH_KEYS)}")
        listed = [items] if isinstance(items, str) else items
        if not isinstance(listed, list) or not listed or not all(
                isinstance(i, str | int) and str(i).strip() for i in listed):
            raise ConfigError("expected a list of names", file=path, key=f"match.{key}",
                              fix="write a list such as [docker, compose]")
        out[key] = [str(i).strip() for i in listed]
    return out


def _sections(body: str) -> tuple[dict[str, str], str]:
    """``##`` sections by their canonical name (``## Pre-flight checks`` -> preflight), and the
    ``#`` title if there is one."""
    sections: dict[str, list[str]] = {}
    title = ""
    current: str | None = None
    fence = False
    for line in body.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        if not fence and line.startswith("# ") and not title:
            title = line[2:].strip()
            current = None
            continue
        if not fence and line.startswith("## "):
            current = _canonical(line[3:])
            if current is not None:
                sections.setdefault(current, [])
            continue
        if current is not None:
            sections[current].append(line)
    return {k: "\n".join(v).strip() for k, v in sections.items()}, title


def _canonical(heading: str) -> str | None:
    word = "".join(c for c in heading.lower() if c.isalpha() or c == " ").strip()
    for name in SECTIONS:
        squashed = word.replace(" ", "")
        if squashed.startswith(name) or squashed.startswith(name.rstrip("s")):
            return name
    return None
