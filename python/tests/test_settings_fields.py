"""Settings structs are bound with the same fields as in C++: every data member declared in the
public header is an attribute of the Python class (a field added in C++ but not bound fails here)."""
import pathlib
import re

import pytest

import koma

INCLUDE = pathlib.Path(__file__).resolve().parents[2] / "include" / "koma"
if not INCLUDE.is_dir():
    pytest.skip("koma headers not found beside the tests", allow_module_level=True)

CASES = [
    ("gait/cycle.hpp", "CycleSettings", "gait"),
    ("gait/fourier.hpp", "FourierSettings", "gait"),
    ("gait/synth.hpp", "SynthSettings", "gait"),
    ("gait/apply.hpp", "ApplySettings", "gait"),
    ("timing/keytimes.hpp", "KeyTimeSettings", "timing"),
    ("timing/beat.hpp", "BeatSettings", "timing"),
    ("timing/source.hpp", "SourceSettings", "timing"),
    ("timing/retime.hpp", "RetimeSettings", "timing"),
    ("body/contacts.hpp", "ContactSettings", "body"),
    ("body/contacts.hpp", "ContactCalibration", "body"),
    ("io/motion_file.hpp", "ReadOptions", "io"),
    ("io/motion_file.hpp", "WriteOptions", "io"),
    ("keys/keys.hpp", "KeySettings", "keys"),
    ("keys/features.hpp", "FeatureSettings", "keys"),
    ("keys/features.hpp", "Camera", "keys"),
    ("keys/select.hpp", "HoldConstraints", "keys"),
    ("keys/select.hpp", "CumsumSettings", "keys"),
    ("keys/select.hpp", "AnnealSettings", "keys"),
    ("keys/select.hpp", "ExactSettings", "keys"),
    ("body/extremes.hpp", "ReversalSettings", "body"),
    ("cartoon/filter.hpp", "FilterSettings", "cartoon"),
    ("cartoon/filter.hpp", "CartoonSettings", "cartoon"),
    ("core/sample.hpp", "SampleSettings", None),
    ("render/figure.hpp", "CameraSettings", "render"),
    ("render/compare.hpp", "CompareSettings", "render"),
    ("toon/renderer.hpp", "ToonStyle", "toon"),
]

# A data member: "<type> name = default;" or "<type> name;" at the struct's top level.
FIELD = re.compile(r"^\s+(?!return|using|static|friend)[\w:<>,\s\*&]+?\b(\w+)\s*(=[^;]*|\{[^;]*\})?;")


def cpp_fields(header, struct):
    text = (INCLUDE / header).read_text()
    start = re.search(rf"\bstruct {struct}\s*\{{", text)
    assert start, f"struct {struct} not found in {header}"
    depth, fields = 1, []
    for line in text[start.end():].splitlines():
        code = line.split("//")[0]
        if depth == 1 and "(" not in code:
            m = FIELD.match(code)
            if m:
                fields.append(m.group(1))
        depth += code.count("{") - code.count("}")
        if depth <= 0:
            break
    return fields


@pytest.mark.parametrize("header,struct,module", CASES)
def test_settings_fields_match_the_header(header, struct, module):
    space = koma if module is None else getattr(koma, module)
    fields = cpp_fields(header, struct)
    assert fields, f"no fields parsed from {struct}"
    obj = getattr(space, struct)()
    missing = [f for f in fields if not hasattr(obj, f)]
    assert not missing, f"{module}.{struct} lacks C++ fields {missing}"
