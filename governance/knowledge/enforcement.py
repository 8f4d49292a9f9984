"""The levels at work: what a session has acknowledged or been shown, whether this call is held
(strict), acknowledged (the retry of a held call) or given the knowledge (advisory), and the text
the model reads. See ``governance.knowledge.lookup`` for the levels. Hot path, loaded only
when knowledge applies to the call.
"""

from __future__ import annotations

from governance.knowledge.acknowledgment import Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.knowledge.lookup import Found, Outcome

SECTION_TITLES = {"preflight": "Preflight", "gotchas": "Gotchas", "credentials": "Credentials"}


def _items(found: Found) -> list[tuple[str, list[str], dict[str, Any]]]:
    return [*((f"sop:{s['name']}", s["categories"], s) for s in found.sops),
            *((f"mem:{m['id']}", m["categories"], m) for m in found.memories)]


def strict_for(settings: dict[str, Any], categories: list[str]) -> bool:
    level = settings["level"]
    if level != "category":
        return bool(level == "strict")
    return any(settings["categories"].get(c) == "strict" for c in categories)


def apply(project: str, session: str, data: dict[str, Any], decision: Any,
          now: float | None = None) -> Outcome | None:
    """Consult and enforce in one step, as the hook does (``governance.hook.run``)."""
    import time

    from governance.knowledge.indexer import rebuild_index
    from governance.knowledge.lookup import consult

    looked = consult(project, data, decision, rebuild_index)
    if looked is None:
        return None
    outcome, found, settings = looked
    if found:
        enforce(project, session, data, settings, found, outcome,
                time.time() if now is None else now)
    return outcome


def enforce(project: str, session: str, data: dict[str, Any], settings: dict[str, Any],
            found: Found, outcome: Outcome, now: float) -> Outcome:
    """Hold, acknowledge or show the found knowledge, as the level says; fills ``outcome``."""
    from governance.ledger.chain import digest

    record = outcome.record
    cooldown = settings["cooldown_minutes"] * 60.0
    items = _items(found)
    call = digest({"tool": data["tool_name"], "input": data["tool_input"]})
    record.update(level=settings["level"], threshold=found.threshold,
                  sops=[{"name": s["name"], "sections": sorted(s["sections"]), "why": s["why"]}
                        for s in found.sops],
                  memories=[{"id": m["id"], "confidence": m["confidence"]}
                            for m in found.memories])
    with Session(project, session, now) as state:
        outcome.ignored = [_ignored(entry, session) for entry in state.expired_blocks()]
        fresh = [item for item in items if not state.was_shown(item[0])]
        strict = [item for item in items
                  if strict_for(settings, item[1]) and not state.acknowledged(item[0])]
        if strict:
            from governance.knowledge import bypass

            held = bypass.active(project, now)
            if held is not None:
                record["bypass"] = {"reason": held.get("reason", ""), "until": held["until"]}
                strict = []
        retry = state.retry_of(call)
        if retry is not None and {i[0] for i in strict} <= set(retry["items"]):
            state.acknowledge(list(retry["items"]), now + cooldown)
            state.settle(call)
            record["outcome"] = "acknowledged"
            record["acknowledged"] = list(retry["items"])
            record["blocked_at"] = retry["at"]
            rest = [item for item in fresh if item[0] not in retry["items"]]
            if rest:
                state.show([i[0] for i in rest], now + cooldown)
                outcome.context = _text(rest, found, settings)
            return outcome
        if strict:
            shown = _unique(strict + fresh)
            state.block(call, [i[0] for i in shown], now + cooldown, data["tool_name"])
            text = _text(shown, found, settings)
            minutes = f"{settings['cooldown_minutes']:g} minute" + (
                "" if settings["cooldown_minutes"] == 1 else "s")
            outcome.deny = True
            outcome.reason = (
                f"Governance knowledge: this call is held once so that the knowledge below is read "
                f"first. If the call is still right, retry exactly the same call within {minutes} "
                f"and it will run; the knowledge then counts as acknowledged for {minutes} in this "
                f"session.\n\n{text}")
            outcome.context = text
            outcome.system = ((outcome.system + "\n" if outcome.system else "")
                              + "governance: knowledge held this call until it is acknowledged ("
                              + ", ".join(i[0] for i in shown) + ")")
            record["outcome"] = "blocked"
            record["items"] = [i[0] for i in shown]
            return outcome
        if not fresh:
            record["outcome"] = "repeat"
            return outcome
        state.show([i[0] for i in fresh], now + cooldown)
        outcome.context = _text(fresh, found, settings)
        record["outcome"] = "bypassed" if "bypass" in record else "injected"
        record["items"] = [i[0] for i in fresh]
    return outcome


def _unique(items: list[tuple[str, list[str], dict[str, Any]]]
            ) -> list[tuple[str, list[str], dict[str, Any]]]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item[0] not in seen:
            seen.add(item[0])
            out.append(item)
    return out


def _ignored(entry: dict[str, Any], session: str) -> dict[str, Any]:
    return {"event": "KnowledgeIgnored", "session": session, "tool": entry.get("tool", ""),
            "items": entry.get("items", []), "blocked_at": entry.get("at"),
            "decision": "none"}


def _text(items: list[tuple[str, list[str], dict[str, Any]]], found: Found,
          settings: dict[str, Any]) -> str:
    """The knowledge as the model reads it, clipped to ``max_chars``."""
    lines = [f"[KNOWLEDGE] for this call ({found.risk} risk):"]
    for key, categories, entry in items:
        if key.startswith("sop:"):
            lines.append(f"SOP {entry['name']}: {entry['title']} (applies: "
                         f"{'; '.join(entry['why'])})")
            for section in ("preflight", "gotchas", "credentials"):
                if entry["sections"].get(section):
                    lines.append(f"{SECTION_TITLES[section]}:\n{entry['sections'][section]}")
        else:
            lines.append(f"Memory {entry['id']} ({', '.join(categories)}; confidence "
                         f"{entry['confidence']:.2f}; source {entry['source']}): {entry['text']}")
    text = "\n".join(lines)
    limit = int(settings["max_chars"])
    return text if len(text) <= limit else text[:limit - 40] + "\n[... knowledge clipped]"
