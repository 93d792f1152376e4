"""koma.body bindings: joint roles, body parts and their aliases, the contact detector and fade."""
import pytest

import koma
from koma import body


@pytest.fixture(scope="module")
def walk():
    return koma.make_sample_motion()


def test_foot_contacts_of_the_sample_walk(walk):
    report = body.detect_foot_contacts(walk)
    assert len(report.effectors) == 2 and report.contact_count() >= 4
    for e in report.effectors:
        for c in e.contacts:
            assert 0 <= c.begin <= c.key_frame < c.end <= walk.frame_count
    roles = body.find_joint_roles(walk.skeleton)
    assert roles.has(body.Role.left_ankle) and roles.has(body.Role.right_ankle)


def test_contact_scores_and_calibration(walk):
    report = body.detect_foot_contacts(walk)
    cal = body.ContactSettings().calibration
    for e in report.effectors:
        assert len(e.score) == len(e.probability) == walk.frame_count
        assert all(-4.0 <= s <= 1.0 for s in e.score)
        assert e.probability[0] == pytest.approx(cal.probability(e.score[0]))
        for c in e.contacts:
            assert c.confidence == pytest.approx(sum(e.probability[c.begin:c.end]) / c.length())
    # Re-fit on the walk's own detections: the fit rises with the score.
    e = report.effectors[0]
    fit = body.fit_contact_calibration(e.score, e.in_contact)
    assert fit.slope > 0
    p = [fit.probability(s) for s in e.score]
    assert body.expected_calibration_error(p, e.in_contact) < 0.1
    with pytest.raises(koma.BadDataError):
        body.fit_contact_calibration([0.0] * 20, [1] * 20)
    with pytest.raises(koma.BadDataError):
        body.expected_calibration_error([0.5], [1, 0])


def test_part_names_round_trip_and_aliases():
    for name in body.part_names():
        assert body.part_name(body.parse_part(name)) == name
    assert body.parse_part("spine") == body.parse_part("torso") == body.BodyPart.torso
    assert body.find_part("tail") is None
    with pytest.raises(ValueError):
        body.parse_part("tail")
    parts = body.joint_parts(koma.make_sample_motion().skeleton)
    assert parts[0] == body.BodyPart.torso and body.BodyPart.legs in parts


def test_contact_fade():
    flag = [0, 0, 1, 0, 0, 0]
    assert body.frames_to_contact(flag) == [2, 1, 0, 1, 2, 3]
    fade = body.contact_fade(flag, 2.0)
    assert fade[2] == 1.0 and fade[1] == pytest.approx(0.5) and fade[4] == 0.0
    with pytest.raises(ValueError):
        body.contact_fade(flag, 0.0)
