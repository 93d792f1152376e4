"""koma.keys bindings: select_keys / hold with the C++ settings, errors, progress, GIL."""
import numpy as np
import pytest

import koma

keys = koma.keys


@pytest.fixture(scope="module")
def walk():
    return koma.resample(koma.make_sample_motion(), 24.0)


def test_on_threes_keeps_a_third_and_respects_holds(walk):
    s = keys.KeySettings(on=3)
    s.constraints.min_hold = 2
    s.constraints.max_hold = 5
    s.constraints.locked = [20]
    sel = keys.select_keys(walk, s)
    k = sel.keys()
    assert k[0] == 0 and k[-1] == walk.frame_count - 1 and 20 in k
    assert all(b > a for a, b in zip(k, k[1:]))
    assert abs(len(k) - round((walk.frame_count - 1) / 3) - 1) <= 1
    assert keys.satisfies(k, walk.frame_count, s.constraints)
    assert sel.error >= 0 and sel.layers[0].name == "main"


def test_more_keys_never_cost_more_with_the_exact_selector(walk):
    errors = [keys.select_keys(walk, keys.KeySettings(keys=n)).error for n in (6, 12, 24)]
    assert errors[0] >= errors[1] >= errors[2] >= 0
    every = keys.select_keys(walk, keys.KeySettings(keys=walk.frame_count))
    assert every.error == pytest.approx(0.0, abs=1e-12)


def test_error_budget_is_met(walk):
    budget = 1e-4
    sel = keys.select_keys(walk, keys.KeySettings(max_error=budget))
    assert sel.error <= budget


def test_hold_shows_the_latest_key(walk):
    sel = keys.select_keys(walk, keys.KeySettings(on=2))
    held = keys.hold(walk, sel)
    shown = keys.hold_map(sel.keys(), walk.frame_count)
    np.testing.assert_array_equal(held.rotations, walk.rotations[shown])
    np.testing.assert_array_equal(held.translations, walk.translations[shown])
    assert keys.drawing_numbers(sel.keys(), walk.frame_count)[-1] == len(sel.keys())


def test_settings_errors_are_value_errors_with_the_cpp_message(walk):
    with pytest.raises(ValueError) as e:
        keys.select_keys(walk, keys.KeySettings(keys=1))
    assert isinstance(e.value, koma.InvalidSettingsError) and e.value.message
    with pytest.raises(ValueError):
        keys.select_keys(walk, keys.KeySettings(keys=10, on=2))
    with pytest.raises(TypeError, match="unknown setting"):
        keys.KeySettings(keyz=3)


def test_hold_of_another_motion_is_a_mismatch(walk):
    sel = keys.select_keys(walk, keys.KeySettings(on=2))
    with pytest.raises(koma.MismatchError):
        keys.hold(koma.cut(walk, 0, 10), sel)


def test_progress_is_reported(walk):
    seen = []
    keys.select_keys(walk, keys.KeySettings(keys=10), progress=seen.append)
    assert seen and all(0.0 <= f <= 1.0 for f in seen)


def test_selectors_by_name(walk):
    for name in ("exact", "cumsum", "uniform", "anneal"):
        s = keys.KeySettings(keys=8, selector=keys.parse_selector(name))
        s.anneal.iterations = 2000
        assert len(keys.select_keys(walk, s).keys()) == 8
    assert keys.parse_selector("nope") is None


def test_exact_methods_agree_and_certify(walk):
    """The level DP and the Lagrangian search give the same optimum, each with its certificate."""
    totals = {}
    for method in (keys.ExactMethod.levels, keys.ExactMethod.lagrange):
        s = keys.KeySettings(keys=walk.frame_count // 3)
        s.exact.method = method
        layer = keys.select_keys(walk, s).layers[0]
        assert layer.optimal and layer.lower_bound <= layer.total * (1 + 1e-9)
        totals[method] = layer.total
    assert totals[keys.ExactMethod.lagrange] == pytest.approx(totals[keys.ExactMethod.levels], rel=1e-9)
    assert keys.parse_exact_method("lagrange") == keys.ExactMethod.lagrange
    assert keys.parse_exact_method("nope") is None


def test_default_max_hold_is_two_seconds(walk):
    sel = keys.select_keys(walk, keys.KeySettings(ratio=0.2))
    assert sel.layers[0].max_hold == 48  # 2 s at 24 fps
    unlimited = keys.select_keys(walk, keys.KeySettings(ratio=0.2, max_hold_seconds=0))
    assert unlimited.layers[0].max_hold == walk.frame_count - 1
def test_errors_name_settings_fields_not_cli_flags(walk):
    """The library speaks its own vocabulary: Python users see the field they set, never a flag."""
    cases = [(keys.KeySettings(keys=1), "keys"),
             (keys.KeySettings(constraints=keys.HoldConstraints(max_hold=-1)), "constraints.max_hold"),
             (keys.KeySettings(constraints=keys.HoldConstraints(min_hold=0)), "constraints.min_hold"),
             (keys.KeySettings(constraints=keys.HoldConstraints(locked=[10_000])), "constraints.locked"),
             (keys.KeySettings(layers=keys.parse_layers("Wing:2")), "layers")]
    for settings, field in cases:
        with pytest.raises(ValueError) as e:
            keys.select_keys(walk, settings)
        assert str(e.value).startswith(field + ":"), str(e.value)
        assert "--" not in str(e.value)


def test_selection_carries_no_timings(walk):
    sel = keys.select_keys(walk, keys.KeySettings(on=2))
    assert not [n for n in dir(sel) if n.startswith("seconds")]


def test_curve_keys_give_every_count_its_optimal_keys(walk):
    # Explicit holds: by default the longest hold grows when fewer keys are asked for (to twice the
    # mean hold), so a 6-key run has looser constraints than the 20-key run whose curve this is.
    s = keys.KeySettings(keys=20)
    s.constraints.max_hold = walk.frame_count
    s.exact.curve_keys = True
    sel = keys.select_keys(walk, s)
    curve = sel.layers[0].curve
    assert list(curve[-1].frames) == list(sel.keys())
    for p in curve[::4]:
        assert len(p.frames) == p.keys
        alone = keys.KeySettings(keys=p.keys)
        alone.constraints.max_hold = walk.frame_count
        again = keys.select_keys(walk, alone)
        assert again.error == pytest.approx(p.error, rel=1e-9, abs=1e-15)
    assert all(len(p.frames) == 0 for p in keys.select_keys(walk, keys.KeySettings(keys=20)).layers[0].curve)
