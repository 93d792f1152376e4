"""Hostile FBX and glTF files in the Python module (issue 45): the corpus of tests/io/hostile_files.py,
read in this interpreter. Each file gives a motion or a koma.Error (docs/errors.md), never another
exception (MemoryError, IndexError, UnicodeDecodeError) and never a crash: a crash would end this
whole run, so reaching the end of the loop is the check."""
import os
import signal
import subprocess
import sys

import pytest

import koma

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "io"))
import hostile_files  # noqa: E402


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    cli = os.environ.get("KOMA_CLI")
    if not cli:
        pytest.skip("KOMA_CLI (the koma program, to write the glTF base file) is not set")
    return hostile_files.make_corpus(str(tmp_path_factory.mktemp("hostile")), cli)


def read_case(case):
    root = case.extra[1] if case.extra[:1] == ["--asset-root"] else ""
    try:
        motion = koma.read(case.path, asset_root=root)
    except koma.Error as e:
        assert isinstance(str(e), str) and e.code in ("bad_file", "bad_data", "mismatch", "io"), e
        # the class docs/errors.md gives the code
        want = {"bad_file": koma.BadFileError, "bad_data": koma.BadDataError, "mismatch": koma.MismatchError,
                "io": OSError}[e.code]
        assert isinstance(e, want), (type(e), e.code, str(e))
        assert os.path.basename(case.path) in str(e), str(e)
        return e
    assert motion.frame_count >= 1
    assert all(isinstance(n, str) for n in motion.skeleton.names)
    return None


def test_every_hostile_file_reads_or_raises_a_koma_error(corpus):
    seen = {"ok": 0, "error": 0}
    for case in corpus:
        error = read_case(case)
        if case.expect == "ok":
            assert error is None, f"{case.name}: {error}"
        if case.expect == "error":
            assert error is not None, f"{case.name}: read without an error"
            if case.why:
                assert case.why in str(error), f"{case.name}: {error}"
        seen["ok" if error is None else "error"] += 1
    assert seen["ok"] >= 10 and seen["error"] >= 40, seen


def test_listing_animations_of_hostile_files(corpus):
    for case in corpus:
        lister = koma.io.list_fbx_animations if case.path.endswith(".fbx") else koma.io.list_gltf_animations
        try:
            infos = lister(case.path)
        except koma.Error:
            continue
        assert all(isinstance(a.name, str) for a in infos)


def test_the_interpreter_survives_a_parser_crash_and_reads_on(corpus, tmp_path):
    # deep nesting used to crash assimp (SIGSEGV) and with it this interpreter; a pre-check names it.
    deep = next(c for c in corpus if c.name == "deep_binary.fbx")
    with pytest.raises(koma.BadFileError, match="nest more than 64"):
        koma.read(deep.path)
    ok = next(c for c in corpus if c.name == "ok_binary.fbx")
    assert koma.read(ok.path).frame_count == 20


@pytest.mark.parametrize("name", ["skin_index_past_mesh.fbx", "skin_index_past_mesh_ascii.fbx"])
def test_the_interpreter_survives_a_crash_that_no_precheck_foresees(corpus, name):
    # A skin cluster naming vertex 999 of a 3-vertex mesh passes koma's pre-checks and makes
    # assimp abort. Read in this interpreter's own process, it kills it (another interpreter shows
    # it: if a pre-check comes to refuse the file, this fails and the test needs another crash).
    crash = next(c for c in corpus if c.name == name)
    env = dict(os.environ, KOMA_READ_IN_PROCESS="1")
    died = subprocess.run([sys.executable, "-c", "import sys, koma; koma.read(sys.argv[1])", crash.path],
                          env=env, capture_output=True, timeout=120)
    assert died.returncode == -signal.SIGABRT, (died.returncode, died.stderr[-500:])
    # Through the child process it is koma.BadFileError (docs/errors.md), naming the file and the
    # parser, for every entry point that parses the file; this interpreter goes on.
    for read in (koma.read, koma.io.list_fbx_animations):
        with pytest.raises(koma.BadFileError, match=name.replace(".", r"\.") + ".*assimp.*crashed on it with SIGABRT"):
            read(crash.path)
    ok = next(c for c in corpus if c.name == "ok_binary.fbx")
    assert koma.read(ok.path).frame_count == 20
    skinned = next(c for c in corpus if c.name == "skin_ok.fbx")
    assert koma.read(skinned.path).frame_count == 10


def test_names_are_valid_text_and_write_back(corpus, tmp_path):
    for name in ("name_ff_fe.fbx", "name_nul.fbx", "name_newline.fbx", "name_braces.fbx", "name_newline.glb"):
        case = next(c for c in corpus if c.name == name)
        m = koma.read(case.path)
        for ext in (".bvh", ".glb"):
            out = str(tmp_path / (name + ext))
            koma.write(out, m)
            back = koma.read(out)
            assert back.joint_count == m.joint_count
