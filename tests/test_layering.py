"""``governance.layering``: a layer changes only what it writes, at every depth, at every site."""

from __future__ import annotations

import copy

from governance.layering import APPEND, PREPEND, REPLACE, overlay, stack, written


def test_a_key_a_layer_leaves_out_keeps_the_lower_value() -> None:
    base = {"default_action": "warn", "settings": {"on_error": "block", "fallback_state": "DO"}}
    top = {"settings": {"fallback_state": "PLAN"}}
    assert overlay(base, top) == {"default_action": "warn",
                                  "settings": {"on_error": "block", "fallback_state": "PLAN"}}


def test_null_is_not_a_value_at_any_depth() -> None:
    base = {"a": 1, "b": {"c": 2, "d": 3}}
    assert overlay(base, {"a": None, "b": {"c": None, "d": 4}}) == {"a": 1, "b": {"c": 2, "d": 4}}
    assert overlay(base, None) == base
    assert overlay({}, {"new": {"x": None, "y": 1}}) == {"new": {"y": 1}}


def test_mappings_merge_recursively_and_other_values_replace() -> None:
    base = {"risk": {"critical": {"threshold": 0.8, "words": ["deploy"]}}}
    top = {"risk": {"critical": {"words": ["ship"]}, "routine": {"threshold": 0.4}}}
    assert overlay(base, top) == {"risk": {"critical": {"threshold": 0.8, "words": ["ship"]},
                                           "routine": {"threshold": 0.4}}}
    assert overlay({"a": {"b": 1}}, {"a": 5}) == {"a": 5}  # a different kind replaces


def test_paths_named_replace_are_one_unit() -> None:
    how = {("rules", "*", "*"): REPLACE}
    base = {"rules": {"web": {"DO": {"action": "block", "message": "no"}, "PLAN": {"action": "ask"}}}}
    top = {"rules": {"web": {"DO": {"action": "warn"}}}}
    assert overlay(base, top, how) == {"rules": {"web": {"DO": {"action": "warn"},
                                                         "PLAN": {"action": "ask"}}}}


def test_lists_join_where_named_without_duplicates() -> None:
    how = {("names",): APPEND, ("commands", "*", "patterns"): PREPEND}
    base = {"names": ["a", "b"], "commands": {"git": {"patterns": [1, 2]}}, "other": [1]}
    top = {"names": ["b", "c"], "commands": {"git": {"patterns": [3, 1]}}, "other": [2]}
    assert overlay(base, top, how) == {"names": ["a", "b", "c"],
                                       "commands": {"git": {"patterns": [3, 1, 2]}}, "other": [2]}


def test_inputs_are_not_changed() -> None:
    base = {"a": {"b": [1]}, "c": 1}
    top = {"a": {"d": 2}}
    before = copy.deepcopy((base, top))
    overlay(base, top, {("a", "b"): APPEND})
    assert (base, top) == before


def test_stack_lays_each_layer_over_the_ones_below() -> None:
    """Three layers (packaged default, organisation, project), lowest first."""
    layers = [{"x": 1, "y": 1, "z": {"k": 1, "m": 1}}, {"y": 2, "z": {"k": 2}}, {"z": {"m": 3}}]
    assert stack(layers) == {"x": 1, "y": 2, "z": {"k": 2, "m": 3}}
    assert stack([]) is None


def test_written_gives_what_a_model_was_given_not_its_defaults() -> None:
    from governance.policy.schema import MatrixFile

    model = MatrixFile.model_validate({"extends": "default", "settings": {"require_intent": True},
                                       "rules": {"web": {"DO": {"action": "warn"}}}})
    assert written(model) == {"extends": "default", "settings": {"require_intent": True},
                              "rules": {"web": {"DO": {"action": "warn"}}}}
