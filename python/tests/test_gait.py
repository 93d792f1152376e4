"""koma.gait bindings: analyze -> synth round trips, adverbs, gait/adverb files, errors, GIL."""
import copy

import numpy as np
import pytest

from conftest import bandai_walks, runs_without_the_gil

import koma

gait = koma.gait

DEG = np.pi / 180


def sample(**kw):
    return koma.make_sample_motion(koma.SampleSettings(jump=False, walk_cycles=6, **kw))


@pytest.fixture(scope="module")
def walk():
    return sample()


@pytest.fixture(scope="module")
def neutral(walk):
    return gait.analyze_gait(walk)


@pytest.fixture(scope="module")
def swingy():
    return gait.analyze_gait(sample(arm_swing=1.6))


def test_period_and_reconstruction_of_the_sample_walk(walk):
    settings = koma.SampleSettings()
    period = gait.estimate_period(walk)
    assert period.period == pytest.approx(settings.cycle_seconds, rel=0.02)
    assert period.confidence > 0.9
    cycle = gait.extract_cycle(walk, gait.CycleSettings(samples=64))
    g = gait.fourier_analyze(cycle, gait.FourierSettings(harmonics=5))
    err = gait.reconstruction_error(cycle, g)
    assert err.worst_rms < 1.5 * DEG and len(err.joint_rms) == walk.joint_count  # the knee kinks at toe-off
    # The loss is truncation only: more harmonics, less error.
    err15 = gait.reconstruction_error(cycle, gait.fourier_analyze(cycle, gait.FourierSettings(harmonics=15)))
    assert err15.worst_rms < 0.5 * err.worst_rms
    # The spectrum re-sampled at the cycle's phases is the cycle (up to the dropped harmonics).
    rec = gait.reconstruct_cycle(g, 64)
    assert rec.shape == cycle.samples.shape == (g.basis.channel_count(), 64)
    joints = slice(gait.kRootChannels, None)
    rms = np.sqrt(np.mean((rec[joints] - cycle.samples[joints]) ** 2))
    assert rms < 0.5 * DEG


def test_period_routes_and_spectrum_reports(walk):
    settings = koma.SampleSettings()
    by_contacts = gait.estimate_period(walk, gait.CycleSettings(period_method=gait.PeriodMethod.contacts))
    assert by_contacts.method == gait.PeriodMethod.contacts and by_contacts.contacts >= 4
    assert by_contacts.period == pytest.approx(settings.cycle_seconds, rel=0.03)
    cycle = gait.extract_cycle(walk)
    g = gait.fourier_analyze(cycle, gait.FourierSettings(harmonics=5))
    assert g.basis.period_method in (gait.PeriodMethod.autocorrelation, gait.PeriodMethod.contacts)
    assert cycle.jumps == []  # a procedural walk has no glitches
    # Parseval: the K-harmonic reconstruction error is the energy above K.
    np.testing.assert_allclose(gait.energy_above(cycle, 5), gait.reconstruction_error(cycle, g).joint_rms,
                               rtol=0.03, atol=1e-9)
    amps = np.array(gait.joint_amplitudes(g))
    assert amps.shape == (walk.joint_count, 5) and (amps >= 0).all()
    # The heading turning +Z into +X is a quarter turn about +Y.
    np.testing.assert_allclose(np.abs(gait.heading_rotation([1.0, 0.0])), [0, np.sqrt(0.5), 0, np.sqrt(0.5)], atol=1e-12)
    np.testing.assert_allclose(gait.joint_rotation(g.basis, 1, [0.0, 0.0, 0.0]), g.basis.mean_rotations[1], atol=1e-12)


def test_analyze_synth_analyze_round_trip(walk, neutral, swingy):
    # Synthesising a gait and analysing the result gives back the same gait: the distance is tiny
    # next to the distance between two different gaits.
    out = gait.synthesize(neutral, gait.SynthSettings(seconds=8 * neutral.basis.period, frame_rate=60.0))
    again = gait.analyze_gait(out)
    assert again.basis.period == pytest.approx(neutral.basis.period, rel=1e-3)
    d_same = gait.coefficient_distance(neutral, again)
    d_other = gait.coefficient_distance(neutral, swingy)
    assert d_same < 0.1 * d_other and d_same < 2 * DEG
    # Same skeleton, looping: 8 cycles at 60 fps.
    assert out.frame_count == round(8 * neutral.basis.period * 60) and out.joint_count == walk.joint_count


def test_synth_loops_and_scales(neutral):
    s = gait.SynthSettings(seconds=3.0, frame_rate=30.0)
    m = gait.synthesize(neutral, s)
    assert m.frame_count == 90 and m.frame_rate == 30.0
    # Loop: the frame after the last equals frame 0, so the last step is like any other step.
    q = m.rotations
    step = np.abs(q[1:] - q[:-1]).max()
    assert np.abs(q[0] - q[-1]).max() <= 1.5 * step
    # Stride scales the distance travelled, in_place removes it.
    root = neutral.basis.root_joint
    def travel(mo):
        p = koma.positions(mo)[:, root]
        return np.linalg.norm(p[-1, [0, 2]] - p[0, [0, 2]])
    base = travel(m)
    assert travel(gait.synthesize(neutral, gait.SynthSettings(seconds=3.0, frame_rate=30.0, stride=1.5))) \
        == pytest.approx(1.5 * base, rel=0.05)
    assert travel(gait.synthesize(neutral, gait.SynthSettings(seconds=3.0, frame_rate=30.0, in_place=True))) \
        < 0.05 * base


def test_adverb_alpha_zero_is_identity_and_one_is_the_style(neutral, swingy):
    adv = gait.make_adverb(neutral, swingy)
    zero = gait.apply_adverbs(neutral, [gait.WeightedAdverb(adv, 0.0)])
    np.testing.assert_array_equal(zero.coefficients, neutral.coefficients)
    assert zero.basis.period == neutral.basis.period
    np.testing.assert_array_equal(zero.basis.mean_rotations, neutral.basis.mean_rotations)
    one = gait.apply_adverbs(neutral, [gait.WeightedAdverb(adv, 1.0)])
    assert gait.coefficient_distance(one, swingy) < 1e-9
    half = gait.apply_adverbs(neutral, [gait.WeightedAdverb(adv, 0.5)])
    d = gait.coefficient_distance(neutral, swingy)
    assert gait.coefficient_distance(neutral, half) == pytest.approx(0.5 * d, rel=0.05)
    # gait_style with alpha 0 is the plain analyse -> synthesise.
    m = sample()
    a = koma.gait_style(m, [(adv, 0.0)])
    b = koma.gait_style(m)
    assert a.frame_count == round(gait.SynthSettings().seconds * gait.SynthSettings().frame_rate)  # the CLI's 10 s at 24 fps
    np.testing.assert_array_equal(a.rotations, b.rotations)
    c = koma.gait_style(m, [(adv, 1.0)], speed=1.2)
    assert np.abs(c.rotations - b.rotations).max() > 0.01


def test_arrays_are_views(neutral):
    g = copy.copy(neutral)
    c = g.coefficients
    assert c.dtype == np.complex128 and c.shape == (g.basis.channel_count(), g.harmonics + 1)
    c[0, 0] += 0.25
    assert g.coefficients[0, 0] == pytest.approx(neutral.coefficients[0, 0] + 0.25)
    mr = g.basis.mean_rotations
    assert mr.shape == (g.basis.skeleton.joint_count, 4)
    np.testing.assert_allclose(np.linalg.norm(mr, axis=1), 1.0, atol=1e-9)


def test_gait_and_adverb_files_round_trip(tmp_path, neutral, swingy):
    adv = gait.make_adverb(neutral, swingy)
    koma.gait.write_adverb(tmp_path / "swing.adverb.json", adv)
    back = koma.gait.read_adverb(tmp_path / "swing.adverb.json")
    np.testing.assert_array_equal(back.delta, adv.delta)
    np.testing.assert_array_equal(back.posture, adv.posture)
    assert back.log_period_ratio == adv.log_period_ratio
    koma.gait.write_gait(tmp_path / "walk.gait.json", neutral)
    g = koma.gait.read_gait(tmp_path / "walk.gait.json")
    np.testing.assert_allclose(g.coefficients, neutral.coefficients, atol=1e-12)
    assert g.basis.skeleton.names == neutral.basis.skeleton.names
    # A file path works as an adverb in gait_style, with its alpha.
    m = sample()
    a = koma.gait_style(m, [(tmp_path / "swing.adverb.json", 0.7)])
    b = koma.gait_style(m, [gait.WeightedAdverb(adv, 0.7)])
    np.testing.assert_array_equal(a.rotations, b.rotations)
    koma.io.write_angles_csv(tmp_path / "angles.csv", a)
    lines = (tmp_path / "angles.csv").read_text().splitlines()
    assert len(lines) == a.frame_count + 1


def test_errors_carry_the_cpp_message(neutral, tmp_path):
    with pytest.raises(koma.InvalidSettingsError) as e:
        gait.analyze_gait(sample(), gait.CycleSettings(samples=4))
    assert isinstance(e.value, ValueError) and e.value.code == "invalid_settings"
    assert str(e.value) == f"{e.value.context}: {e.value.message}" and "samples" in str(e.value)
    with pytest.raises(TypeError, match="unknown setting 'harmonic'"):
        gait.FourierSettings(harmonic=3)
    with pytest.raises(ValueError, match="stride"):
        gait.synthesize(neutral, gait.SynthSettings(stride=0.0))
    # A motion that does not repeat has no period.
    still = koma.rest_motion(koma.sample_skeleton(), 30.0, 90)
    with pytest.raises(koma.BadDataError, match="period"):
        gait.analyze_gait(still)
    # An adverb learned on another topology does not apply.
    adv = gait.make_adverb(neutral, neutral)
    sk = adv.skeleton
    names = list(sk.names)
    names[5] = "Tail"
    adv.skeleton = koma.Skeleton(names, sk.parents, sk.offsets, sk.channels, sk.end_sites)
    with pytest.raises(koma.MismatchError, match="Tail"):
        gait.apply_adverbs(neutral, [gait.WeightedAdverb(adv, 1.0)])
    with pytest.raises(OSError, match="cannot open"):
        koma.gait.read_adverb(tmp_path / "missing.adverb.json")
    (tmp_path / "bad.adverb.json").write_text('{"format": "koma.adverb"}')
    with pytest.raises(koma.BadFileError, match="bad.adverb.json"):
        koma.gait.read_adverb(tmp_path / "bad.adverb.json")


def test_analyze_releases_the_gil():
    m = koma.resample(sample(), 240.0)
    assert runs_without_the_gil(lambda: [gait.analyze_gait(m) for _ in range(3)])


def test_real_walks(shared_data):
    mn, mh = bandai_walks(shared_data, "normal", "happy")
    cycle = gait.extract_cycle(mn)
    gn = gait.fourier_analyze(cycle)
    # docs/gait.md: K = 5 keeps every joint within 3 deg RMS (heel strike and toe-off live above the
    # 5th harmonic); K = 12 brings every joint of these walks to <= 0.5 deg.
    assert max(gait.reconstruction_error(cycle, gn).joint_rms) < 3 * DEG
    g12 = gait.fourier_analyze(cycle, gait.FourierSettings(harmonics=12))
    assert gait.reconstruction_error(cycle, g12).worst_rms <= 0.5 * DEG
    assert 0.6 < gn.basis.period < 1.6
    gh = gait.analyze_gait(mh)
    adv = gait.make_adverb(gn, gh)
    out = koma.gait_style(mn, [(adv, 1.0)], seconds=mn.frame_count / mn.frame_rate, frame_rate=mn.frame_rate)
    assert out.frame_count == mn.frame_count and out.skeleton.names == mn.skeleton.names
    # The styled walk is the happy gait: analysing it again lands near happy, far from normal.
    back = gait.analyze_gait(out)
    assert gait.coefficient_distance(back, gh) < 0.25 * gait.coefficient_distance(back, gn)


def test_gait_style_is_the_library_pipeline(walk, neutral, swingy):
    """koma.gait_style calls gait.style; the result is the chain of the three steps, bit for bit."""
    adverb = gait.WeightedAdverb(gait.make_adverb(neutral, swingy), 1.5, "swing")
    out = koma.gait_style(walk, [adverb], stride=1.2)
    synth = gait.SynthSettings(stride=1.2)  # the library's (and the CLI's) defaults: 10 s at 24 fps
    manual = gait.synthesize(gait.apply_adverbs(neutral, [adverb]), synth)
    np.testing.assert_array_equal(out.rotations, manual.rotations)
    np.testing.assert_array_equal(out.translations, manual.translations)
    res = gait.style(walk, [adverb], gait.StyleSettings(synth=synth))
    assert gait.style_summary(res)["frames"] == manual.frame_count and res.loop
    report = gait.analysis_report(gait.analyse_gait(walk))
    assert report["period_s"] == pytest.approx(neutral.basis.period) and "worst_joint" in report
    joints = report["joints"]
    assert len(joints) == walk.skeleton.joint_count
    assert {"name", "harmonics", "channel_harmonics", "rms_deg", "raw_above_k_deg", "seam_correction_deg"} <= set(joints[0])


def test_gait_apply_on_the_take_itself(walk, neutral, swingy):
    adv = gait.make_adverb(neutral, swingy)
    zero = koma.gait_apply(walk, [(adv, 0.0)])
    assert np.abs(zero.motion.rotations - walk.rotations).max() < 1e-12
    res = koma.gait_apply(walk, [(adv, 1.0)])
    assert res.motion.frame_count == walk.frame_count
    assert res.phase.source == gait.PhaseSource.contacts
    assert len(res.phase.phase) == walk.frame_count
    np.testing.assert_array_equal(res.motion.translations[:, 0, [0, 2]], walk.translations[:, 0, [0, 2]])
    assert np.abs(res.motion.rotations - walk.rotations).max() > 0.01
    assert gait.apply_report(res)["phase"]["source"] == "contacts"
    far = koma.gait_apply(walk, [(adv, 2.5)])
    assert "outside [-1, 2]" in far.warnings[0]
    with pytest.raises(ValueError, match="alpha must be finite"):
        koma.gait_apply(walk, [(adv, float("nan"))])
    still = koma.gait_apply(walk, [(adv, 1.0)], period=1.1)
    assert still.phase.source == gait.PhaseSource.fixed


def test_gait_apply_with_given_roles(walk, neutral, swingy, tmp_path):
    """roles= takes a body.JointRoles or a roles file; they drive the contacts and the mapping."""
    adv = gait.make_adverb(neutral, swingy)
    found = koma.body.find_joint_roles(walk.skeleton)
    default = koma.gait_apply(walk, [(adv, 1.0)])
    given = koma.gait_apply(walk, [(adv, 1.0)], roles=found)
    np.testing.assert_allclose(given.motion.rotations, default.motion.rotations, atol=1e-12)
    ankle = walk.skeleton.names[found[koma.body.Role.left_ankle]]
    path = tmp_path / "walk.roles.json"
    path.write_text('{"left_ankle": "%s"}' % ankle)
    from_file = koma.gait_apply(walk, [(adv, 1.0)], roles=path)
    np.testing.assert_allclose(from_file.motion.rotations, default.motion.rotations, atol=1e-12)
    bad = koma.body.find_joint_roles(walk.skeleton)
    bad.set(koma.body.Role.left_ankle, 999)
    with pytest.raises(koma.InvalidSettingsError, match="left_ankle = 999"):
        koma.gait_apply(walk, [(adv, 1.0)], roles=bad)
    path.write_text('{"left_ankle": "NoSuchJoint"}')
    with pytest.raises(koma.MismatchError, match="walk.roles.json: role left_ankle"):
        koma.gait_apply(walk, [(adv, 1.0)], roles=path)


def test_gait_style_defaults_are_the_clis(walk):
    """Issue 19: koma.gait_style's length and rate default to the CLI's (SynthSettings: 10 s at 24 fps)."""
    out = koma.gait_style(walk)
    d = gait.SynthSettings()
    assert (d.seconds, d.frame_rate) == (10.0, 24.0)
    assert out.frame_rate == 24.0
    assert out.frame_count == 240  # 10 s at 24 fps
