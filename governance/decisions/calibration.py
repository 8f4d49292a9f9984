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


Sums = tuple[int, float, float, float, float, float]   # n, conf, score, conf^2, conf*score, score^2


def sums(samples: Iterable[tuple[float, str]]) -> dict[int, Sums]:
    """Per confidence bin, the sums ``calibrate_sums`` reads, from (confidence, outcome) pairs;
    unknown outcomes are skipped. (The decision store keeps the same sums up to date itself.)"""
    found: dict[int, list[float]] = {}
    for conf, outcome in samples:
        if outcome not in OUTCOME_SCORE:
            continue
        score = OUTCOME_SCORE[outcome]
        slot = found.setdefault(_bin(conf), [0, 0.0, 0.0, 0.0, 0.0, 0.0])
        for k, value in enumerate((1, conf, score, conf * conf, conf * score, score * score)):
            slot[k] += value
    return {index: (int(v[0]), v[1], v[2], v[3], v[4], v[5]) for index, v in found.items()}


def calibrate(samples: Iterable[tuple[float, str]], category: str | None = None
              ) -> dict[str, Any]:
    """Calibration figures for (confidence, outcome) pairs; unknown outcomes are skipped."""
    return calibrate_sums(sums(samples), category)


def calibrate_sums(bins: dict[int, Sums], category: str | None = None) -> dict[str, Any]:
    """Calibration figures from per-bin sums (``sums``, or the store's ``calibration_sums``)."""
    live = {index: v for index, v in bins.items() if v[0] > 0}
    size = sum(v[0] for v in live.values())
    where = f"in {category}" if category else "overall"
    if not size:
        return {"category": category, "sample_size": 0, "accuracy": None, "brier": None,
                "ece": None, "gap": None, "bins": [], "tendency": "insufficient_data",
                "suggestion": f"No reviewed decisions {where} yet; review outcomes with "
                              f"`governance decisions review` so calibration can be measured."}
    total_conf = sum(v[1] for v in live.values())
    accuracy = sum(v[2] for v in live.values()) / size
    brier = max(0.0, sum(v[3] - 2 * v[4] + v[5] for v in live.values()) / size)
    bins_out = []
    ece = 0.0
    for index in sorted(live):
        n, conf, score = live[index][:3]
        mean_conf, mean_out = conf / n, score / n
        ece += n * abs(mean_conf - mean_out) / size
        bins_out.append({"range": [index / BINS, (index + 1) / BINS], "count": n,
                         "mean_confidence": round(mean_conf, 4),
                         "mean_outcome": round(mean_out, 4)})
    mean_conf = total_conf / size
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
            "brier": round(brier, 4), "ece": round(ece, 4), "gap": round(gap, 4),
            "bins": bins_out, "tendency": tendency,
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
    by_category: dict[str, list[tuple[float, str]]] = {}
    for cat, conf, outcome in rows:
        by_category.setdefault(cat, []).append((conf, outcome))
    return report_from_sums({cat: sums(pairs) for cat, pairs in by_category.items()}, category)


def report_from_sums(by_category: dict[str, dict[int, Sums]], category: str | None = None
                     ) -> dict[str, Any]:
    """Overall and per-category calibration from per-category, per-bin sums (the store's
    ``calibration_sums``)."""
    if category:
        return {"overall": calibrate_sums(by_category.get(category, {}), category),
                "categories": {}}
    overall: dict[int, list[float]] = {}
    for bins in by_category.values():
        for index, values in bins.items():
            slot = overall.setdefault(index, [0, 0.0, 0.0, 0.0, 0.0, 0.0])
            for k, value in enumerate(values):
                slot[k] += value
    return {"overall": calibrate_sums({i: (int(v[0]), v[1], v[2], v[3], v[4], v[5])
                                       for i, v in overall.items()}),
            "categories": {cat: calibrate_sums(bins, cat)
                           for cat, bins in sorted(by_category.items())}}
