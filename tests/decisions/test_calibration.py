"""Calibration maths against cases computed by hand."""

from __future__ import annotations

import pytest

from governance.decisions.calibration import calibrate, calibration_report


def test_overconfident_case() -> None:
    # outcomes 1, 0, 0.5, 0 -> accuracy 1.5/4 = 0.375
    # brier: (0.9-1)^2 + 0.9^2 + (0.6-0.5)^2 + 0.3^2 = 0.01+0.81+0.01+0.09 = 0.92 -> 0.23
    # bins: [0.8,1.0] conf 0.9 out 0.5 (n=2, gap 0.4); [0.6,0.8) gap 0.1; [0.2,0.4) gap 0.3
    # ece = (2*0.4 + 0.1 + 0.3) / 4 = 0.3; gap = 0.675 - 0.375 = 0.3
    result = calibrate([(0.9, "success"), (0.9, "failure"), (0.6, "partial"),
                        (0.3, "failure")], "architecture")
    assert result["sample_size"] == 4
    assert result["accuracy"] == pytest.approx(0.375)
    assert result["brier"] == pytest.approx(0.23)
    assert result["ece"] == pytest.approx(0.3)
    assert result["gap"] == pytest.approx(0.3)
    assert result["tendency"] == "overconfident"
    assert [b["count"] for b in result["bins"]] == [1, 1, 2]
    assert result["bins"][2] == {"range": [0.8, 1.0], "count": 2, "mean_confidence": 0.9,
                                 "mean_outcome": 0.5}
    assert "overconfident in architecture" in result["suggestion"]
    assert result["suggestion"].count(".") >= 1 and "\n" not in result["suggestion"]


def test_underconfident_case() -> None:
    # accuracy 1; mean confidence (0.3*3 + 0.5)/4 = 0.35; gap -0.65
    # brier (3*0.49 + 0.25)/4 = 0.43; ece (3*0.7 + 0.5)/4 = 0.65
    result = calibrate([(0.3, "success")] * 3 + [(0.5, "success")])
    assert result["accuracy"] == pytest.approx(1.0)
    assert result["brier"] == pytest.approx(0.43)
    assert result["ece"] == pytest.approx(0.65)
    assert result["gap"] == pytest.approx(-0.65)
    assert result["tendency"] == "underconfident"


def test_well_calibrated_case() -> None:
    # four successes and one failure at 0.8: accuracy 0.8, brier (4*0.04 + 0.64)/5 = 0.16
    result = calibrate([(0.8, "success")] * 4 + [(0.8, "failure")])
    assert result["accuracy"] == pytest.approx(0.8)
    assert result["brier"] == pytest.approx(0.16)
    assert result["ece"] == pytest.approx(0.0)
    assert result["tendency"] == "well_calibrated"


def test_abandoned_and_unknown_outcomes_are_left_out() -> None:
    result = calibrate([(1.0, "success"), (0.0, "abandoned"), (0.5, None)])  # type: ignore[list-item]
    assert result["sample_size"] == 1
    assert result["brier"] == pytest.approx(0.0)
    assert result["bins"][0]["range"] == [0.8, 1.0]  # confidence 1.0 falls in the top bin
    assert result["tendency"] == "insufficient_data"


def test_empty() -> None:
    result = calibrate([], "security")
    assert result["sample_size"] == 0 and result["accuracy"] is None
    assert result["tendency"] == "insufficient_data"
    assert "security" in result["suggestion"]


def test_report_splits_by_category() -> None:
    rows = [("architecture", 0.9, "failure"), ("architecture", 0.9, "failure"),
            ("tooling", 0.5, "partial")]
    report = calibration_report(rows)
    assert report["overall"]["sample_size"] == 3
    assert report["categories"]["architecture"]["brier"] == pytest.approx(0.81)
    assert report["categories"]["tooling"]["brier"] == pytest.approx(0.0)
    only = calibration_report(rows, "tooling")
    assert only["overall"]["category"] == "tooling" and only["categories"] == {}
