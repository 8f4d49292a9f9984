"""The report as one self-contained HTML page: the figures rendered by a Jinja2 template, with
the stylesheet and the SVG charts inline and a Content-Security-Policy that lets the page fetch
nothing at all. Every chart has its numbers in a table beside it, and the figures are in the page
as JSON too (``<script type="application/json" id="figures">``, data that never runs).
"""

from __future__ import annotations

import json
import os
from typing import Any

from governance.report import charts

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
# Nothing may be loaded: no script runs, styles are the inline sheet, images are inline SVG. A
# live page's filter form may only submit to the server that served it.
POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
          "form-action 'self'")


def _number(value: Any) -> str:
    if value is None or value == "":
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}" if isinstance(value, int | float) else str(value)


def _percent(value: Any) -> str:
    return "–" if value is None else f"{value:.1%}"


def _decimal(value: Any, places: int = 3) -> str:
    return "–" if value is None else f"{value:.{places}f}"


def _script_json(data: Any) -> str:
    """JSON that cannot end the script element it sits in, or open a comment."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _charts(figures: dict[str, Any]) -> dict[str, Any]:
    activity, denials, asks = figures["activity"], figures["denials"], figures["asks"]
    knowledge, intents, memory = figures["knowledge"], figures["intents"], figures["memory"]
    timeline = activity["timeline"]
    found: dict[str, Any] = {
        "timeline": charts.stacked_bars("chart-timeline", f"Decisions per {timeline['unit']} "
                                        "by action", timeline["rows"], timeline["actions"]),
        "actions": charts.hbars("chart-actions", "Decisions by action",
                                list(activity["actions"].items()),
                                colours=[charts.colour(a, i) for i, a in
                                         enumerate(activity["actions"])]),
        "denials_primitive": charts.hbars("chart-denials-primitive", "Denials by primitive",
                                          list(denials["by_primitive"].items())[:12]),
        "denials_state": charts.hbars("chart-denials-state", "Denials by state",
                                      list(denials["by_state"].items())[:12]),
        "asks": charts.hbars("chart-asks", "Asks and their answers",
                             list(asks["answers"].items())),
        "ack_rate": charts.hbars("chart-ack-rate", "Acknowledgment rate per SOP",
                                 [(row["sop"], row["acknowledgment_rate"] or 0.0)
                                  for row in knowledge["per_sop"] if row["blocked"]][:12],
                                 maximum=1.0, percent=True),
        "traced": charts.share_bar("chart-traced", "Edited lines traced to an intent",
                                   intents["traced_lines"], intents["edited_lines"],
                                   ("traced to an intent", "no intent")),
    }
    if memory.get("present") and "overall" in memory:
        found["reliability"] = charts.reliability("chart-reliability", "Reliability diagram",
                                                  memory["overall"]["bins"])
        found["brier"] = charts.hbars("chart-brier", "Brier score per category (lower is "
                                      "better)", [(c["category"], c["brier"])
                                                  for c in memory["categories"]
                                                  if c["brier"] is not None][:12],
                                      maximum=1.0, places=3)
    return found


def _environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(
        ["html", "j2"], default=True), undefined=StrictUndefined, trim_blocks=True,
        lstrip_blocks=True)
    env.filters.update(num=_number, pct=_percent, dec=_decimal)
    return env


def render(figures: dict[str, Any], live: dict[str, Any] | None = None) -> str:
    """The page for ``figures`` (``governance.report.figures.build``). ``live``: the filter form
    of the page ``governance serve`` answers at ``/report`` (``action``, ``values``)."""
    from markupsafe import Markup

    from governance.project import installed_version

    with open(os.path.join(TEMPLATES, "report.css"), encoding="utf-8") as handle:
        css = handle.read()
    template = _environment().get_template("report.html.j2")
    return str(template.render(
        f=figures, charts=_charts(figures), css=Markup(css), policy=POLICY, live=live,
        data=Markup(_script_json(figures)), version=installed_version()))
