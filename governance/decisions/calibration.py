"""Calibration: how well an agent's stated confidence matched the outcomes of its decisions.

Outcomes score success = 1, partial = 0.5, failure = 0 (abandoned decisions are left out).

- ``accuracy``: the mean outcome score.
- ``brier``: the mean of (confidence - outcome)^2; 0 is perfect, 0.25 is a coin flip at 0.5.
- reliability bins: five equal-width confidence bins [0, 0.2), ..., [0.8, 1.0]; each bin's gap is
  its mean confidence minus its mean outcome. ``ece`` is the sample-weighted mean of the absolute
  gaps and ``gap`` the weighted mean of the signed gaps (mean confidence minus mean outcome).
- ``tendency``: ``overconfident`` when ece and gap both exceed 0.1, ``underconfident`` when ece
  exceeds 0.1 and gap is below -0.1, else ``well_calibrated``; ``insufficient_data`` below
  :data:`MIN_SAMPLES` reviewed decisions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

OUTCOME_SCORE = {"success": 1.0, "partial": 0.5, "failure": 0.0}
BINS = 5
MIN_SAMPLES = 3
THRESHOLD = 0.1


def _bin(confidence: float) -> int:
    return min(int(confidence * BINS), BINS - 1)


def calibrate(samples: Iterable[tuple[float, str]], category: str | None = None
              ) -> dict[str, Any]:
    """Calibration figures for (confidence, outcome) pairs; unknown outcomes are skipped."""
    pairs = [(conf, OUTCOME_SCORE[outcome]) for conf, outcome in samples
             if outcome in OUTCOME_SCORE]
    size = len(pairs)
    where = f"in {category}" if category else "overall"
    if not size:
        return {"category": category, "sample_size": 0, "accuracy": None, "brier": None,
                "ece": None, "gap": None, "bins": [], "tendency": "insufficient_data",
                "suggestion": f"No reviewed decisions {where} yet; review outcomes with "
                              f"`governance decisions review` so calibration can be measured."}
    accuracy = sum(score for _, score in pairs) / size
    brier = sum((conf - score) ** 2 for conf, score in pairs) / size
    grouped: dict[int, list[tuple[float, float]]] = {}
    for conf, score in pairs:
        grouped.setdefault(_bin(conf), []).append((conf, score))
    bins = []
    ece = 0.0
    for index in sorted(grouped):
        members = grouped[index]
        mean_conf = sum(c for c, _ in members) / len(members)
        mean_out = sum(s for _, s in members) / len(members)
        ece += len(members) * abs(mean_conf - mean_out) / size
        bins.append({"range": [index / BINS, (index + 1) / BINS], "count": len(members),
                     "mean_confidence": round(mean_conf, 4), "mean_outcome": round(mean_out, 4)})
    mean_conf = sum(c for c, _ in pairs) / size
    gap = mean_conf - accuracy
    if size < MIN_SAMPLES:
        tendency = "insufficient_data"
    elif ece > THRESHOLD and gap > THRESHOLD:
        tendency = "overconfident"
    elif ece > THRESHOLD and gap < -THRESHOLD:
        tendency = "underconfident"
    else:
        tendency = "well_calibrated"
    return {"category": category, "sample_size": size, "accuracy": round(accuracy, 4),
            "brier": round(brier, 4), "ece": round(ece, 4), "gap": round(gap, 4), "bins": bins,
            "tendency": tendency,
            "suggestion": suggestion(tendency, where, size, mean_conf, accuracy, brier)}


def suggestion(tendency: str, where: str, size: int, mean_conf: float, accuracy: float,
               brier: float) -> str:
    """One sentence telling the agent how to adjust its confidence."""
    if tendency == "insufficient_data":
        return (f"Only {size} reviewed decision(s) {where}; review more outcomes before relying "
                f"on this calibration.")
    if tendency == "overconfident":
        return (f"You are overconfident {where}: stated confidence averages {mean_conf:.2f} but "
                f"outcomes average {accuracy:.2f}, so lower your confidence by about "
                f"{mean_conf - accuracy:.2f} or gather more evidence first.")
    if tendency == "underconfident":
        return (f"You are underconfident {where}: outcomes average {accuracy:.2f} against a stated "
                f"confidence of {mean_conf:.2f}, so you can state about {accuracy - mean_conf:.2f} "
                f"more confidence.")
    return (f"Your confidence {where} matches outcomes (Brier {brier:.3f} over {size} "
            f"decisions); keep stating it the same way.")


def calibration_report(rows: Iterable[tuple[str, float, str]], category: str | None = None
                       ) -> dict[str, Any]:
    """Overall and per-category calibration from (category, confidence, outcome) rows."""
    rows = list(rows)
    by_category: dict[str, list[tuple[float, str]]] = {}
    for cat, conf, outcome in rows:
        by_category.setdefault(cat, []).append((conf, outcome))
    if category:
        return {"overall": calibrate(by_category.get(category, []), category),
                "categories": {}}
    return {"overall": calibrate((conf, outcome) for _, conf, outcome in rows),
            "categories": {cat: calibrate(pairs, cat)
                           for cat, pairs in sorted(by_category.items())}}
