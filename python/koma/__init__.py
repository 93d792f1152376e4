"""koma: turns smooth 3D character animation into sharp cartoon / anime motion.

The compiled ``koma._koma`` binds the C++ library 1:1 (same names, same settings fields); this
package re-exports it and adds a little Python sugar (``read``, ``write``, ``positions``, readable
reprs). Units: metres, radians, seconds; quaternions are stored x, y, z, w; right-handed, Y up.

    >>> import koma
    >>> motion = koma.read("walk.bvh")
    >>> motion.rotations.shape            # (frames, joints, 4), a numpy view without a copy
    >>> koma.positions(motion).shape      # (frames, joints + end sites, 3), metres

Errors raise ``koma.Error`` subclasses carrying the C++ message (see docs/errors.md):
``koma.InvalidSettingsError`` (a ``ValueError``), ``koma.BadFileError``, ``koma.BadDataError``,
``koma.MismatchError`` and ``koma.FileSystemError`` (an ``OSError``).
"""
import os as _os
import sys as _sys
import types as _types
import warnings as _warnings
import weakref as _weakref

from . import _koma
from ._koma import *  # noqa: F401,F403  (the 1:1 bindings)
from ._koma import io  # noqa: F401

# The C++ namespaces are submodules of _koma (koma.io, koma.keys, koma.gait, ...); register them
# so `import koma.keys` and `from koma.keys import KeySettings` work.
for _name, _value in vars(_koma).items():
    if isinstance(_value, _types.ModuleType):
        _sys.modules[f"{__name__}.{_name}"] = _value

__all__ = [n for n in dir(_koma) if not n.startswith("_")] + [
    "read", "write", "positions", "KomaWarning", "make_skeleton", "DEFAULT_ROOT_CHANNELS",
    "DEFAULT_JOINT_CHANNELS", "gltf_scene", "gait_style", "gait_apply", "timing_source", "read_timing_source",
    "write_timing_source", "retime_like", "make_chart", "spacing_settings", "space", "render_file"]


class KomaWarning(UserWarning):
    """A quirk a reader tolerated (e.g. more BVH rows than declared); the text names file:line."""


def _unit(unit):
    """A LengthUnit (or None) from a LengthUnit or a unit name (the library's one parser)."""
    if unit is None or isinstance(unit, _koma.LengthUnit):
        return unit
    return _koma.length_unit_named(str(unit), "unit")


def _unit_or_scale(unit):
    """(LengthUnit or None, metres per file unit or 0.0) for read(): a number is a scale."""
    if isinstance(unit, (int, float)) and not isinstance(unit, bool):
        parsed = _koma.parse_file_unit(repr(float(unit)), "unit")
        return parsed.unit, parsed.scale
    return _unit(unit), 0.0


def read(path, unit=None, animation="", frame_rate=0.0, asset_root=""):
    """Reads a motion file (chosen by extension) and returns the Motion.

    ``unit`` is a BVH file's length unit (a LengthUnit, "m", "cm", "in", "cmu", ..., or a number of
    metres per file unit such as 0.056; None detects it, preferring a human-sized figure);
    ``animation`` and ``frame_rate`` (0 = from the key times) choose what a glTF file gives.
    ``asset_root`` is the folder a glTF file's buffer and image URIs may be read from ("" = the
    file's own folder; a URI that is absolute, a URL or leads out of it raises koma.BadFileError).
    Tolerated quirks are emitted as KomaWarning. Raises koma.BadFileError / OSError.
    A glTF file's character (mesh, skin, materials) stays attached to the returned motion, so
    ``write("out.glb", read("in.glb"))`` writes it again (see ``gltf_scene``).
    """
    named, scale = _unit_or_scale(unit)
    result = io.read_motion(_os.fspath(path), io.ReadOptions(unit=named, scale=scale, animation=str(animation),
                                                             frame_rate=float(frame_rate),
                                                             asset_root=_os.fspath(asset_root)))
    for w in result.warnings:
        _warnings.warn(w, KomaWarning, stacklevel=2)
    motion = result.motion
    if result.gltf_scene is not None:
        _scenes[motion] = result.gltf_scene
    return motion


# Motion -> the io.GltfScene it was read with (glTF input only); weak, so motions die normally.
_scenes = _weakref.WeakKeyDictionary()


def gltf_scene(motion):
    """The character (an io.GltfScene) a motion was read with by ``read`` from a .gltf/.glb, or None."""
    return _scenes.get(motion)


def write(path, motion, unit=None, step_keys=(), gltf_scene=None, name=""):
    """Writes a motion atomically (format by extension: .bvh, .gltf, .glb, .fbx); ``unit`` None restores
    the source unit (BVH); ``step_keys`` (glTF) writes STEP keys on those frames only; ``name``
    names the written animation ('' = ``motion.name``, the source animation's).

    glTF: ``gltf_scene`` is the character to write the animation onto: an io.GltfScene, or a motion
    read by ``read`` from a glTF file (its character is used); None uses the character ``motion``
    itself was read with, if any, else writes the skeleton only. The character's joints must match
    the motion's skeleton (koma.MismatchError otherwise)."""
    scene = gltf_scene
    if scene is None:
        scene = _scenes.get(motion)
    elif isinstance(scene, Motion):  # noqa: F405
        scene = _scenes.get(scene)
    io.write_motion(_os.fspath(path), motion, io.WriteOptions(unit=_unit(unit), step_keys=list(step_keys),
                                                              gltf_scene=scene, animation_name=name))


def _weighted_adverb(item):
    """WeightedAdverb from a WeightedAdverb, an Adverb, a path, or (adverb-or-path, alpha)."""
    weight = 1.0
    if isinstance(item, tuple):
        item, weight = item
    if isinstance(item, gait.WeightedAdverb):  # noqa: F405
        return gait.WeightedAdverb(item.adverb, float(weight) * item.weight, item.name)  # noqa: F405
    if isinstance(item, gait.Adverb):  # noqa: F405
        return gait.WeightedAdverb(item, float(weight), "")  # noqa: F405
    w = gait.read_weighted_adverb(_os.fspath(item))  # noqa: F405  ("FILE[:ALPHA]", as the CLI's --adverb)
    return gait.WeightedAdverb(w.adverb, float(weight) * w.weight, w.name)  # noqa: F405


def gait_style(motion, adverbs=(), stride=1.0, speed=1.0, seconds=None, frame_rate=None, loop=True,
               in_place=False, cycle=None, fourier=None):
    """``koma gait style``: analyses a walk or run (gait.analyze_gait), adds adverbs
    (gait.apply_adverbs) and plays it back (gait.synthesize) as a new motion on the same skeleton.

    ``adverbs``: Adverb, WeightedAdverb, adverb file path, or (adverb-or-path, alpha) pairs; alpha 0
    has no effect, 1 the full style. ``stride`` scales the swing and the distance per cycle,
    ``speed`` the cadence. ``seconds`` / ``frame_rate`` default to gait.SynthSettings' defaults
    (10 s at 24 fps), as ``koma gait style`` does; pass ``seconds=motion.frame_count / motion.frame_rate,
    frame_rate=motion.frame_rate`` for the input's length and rate. ``cycle`` / ``fourier``:
    gait.CycleSettings / gait.FourierSettings.
    The output starts at the origin, travelling along the input's direction. Raises like the three
    calls (koma.BadDataError when no period is found, koma.MismatchError for an adverb of another
    skeleton, ValueError for bad settings)."""
    synth = gait.SynthSettings(stride=float(stride), speed=float(speed), loop=bool(loop),  # noqa: F405
                               in_place=bool(in_place))
    if seconds is not None:
        synth.seconds = float(seconds)
    if frame_rate is not None:
        synth.frame_rate = float(frame_rate)
    settings = gait.StyleSettings(cycle=cycle or gait.CycleSettings(),  # noqa: F405
                                  fourier=fourier or gait.FourierSettings(), synth=synth)  # noqa: F405
    return gait.style(motion, [_weighted_adverb(a) for a in adverbs], settings).motion  # noqa: F405


def gait_apply(take, adverbs, stride=1.0, period=0.0, blend_seconds=0.3, plant_feet=True, hold_posture=True,
               root_height=True, cycle=None, roles=None):
    """``koma gait apply``: the adverbs applied to the take itself (gait.apply_to_take): its frame
    count, timing, root path, heading and foot contacts are kept. ``adverbs`` as in gait_style;
    ``period`` > 0 applies at that fixed period (s) instead of detecting the gait; ``stride`` scales
    the root travel. ``roles``: a body.JointRoles, or the path of a roles file ({"left_ankle":
    "leg_joint_L_3", ...}) for a rig whose names koma does not know; default: found by name.
    Returns the gait.ApplyResult (``.motion``, ``.phase``, ``.warnings``). Raises
    koma.BadDataError naming the confidence when no gait is detected, ValueError for a non-finite alpha."""
    if isinstance(roles, (str, _os.PathLike)):
        roles = body.read_roles(take.skeleton, _os.fspath(roles))  # noqa: F405
    settings = gait.ApplySettings(cycle=cycle or gait.CycleSettings(), fixed_period=float(period),  # noqa: F405
                                  stride=float(stride), blend_seconds=float(blend_seconds),
                                  plant_feet=bool(plant_feet), hold_posture=bool(hold_posture),
                                  root_height=bool(root_height), roles=roles)
    return gait.apply_to_take(take, [_weighted_adverb(a) for a in adverbs], settings)  # noqa: F405


def read_timing_source(path):
    """A timing source saved by ``write_timing_source`` or ``koma timing source -o``."""
    path = _os.fspath(path)
    return timing.timing_source_from_json(read_file(path), path)  # noqa: F405


def write_timing_source(path, source):
    """Saves a timing source as JSON, atomically."""
    write_file_atomic(_os.fspath(path), timing.timing_source_to_json(source))  # noqa: F405


def timing_source(examples, names=None, settings=None, roles=None):
    """``koma timing source``: a timing.TimingSource from one example or several of one skeleton
    topology. A single path follows the library's rules (timing.load_timing_source, as the CLI's
    ``--like``): a ``.json`` path reads a saved source, a folder takes every motion file in it,
    anything else is one example motion file. Otherwise ``examples`` is a Motion or a list of
    Motions and motion file paths. ``roles``: a body.JointRoles, or the path of a roles file
    ({"left_ankle": "LFoot", ...}); defaults to the roles found by name on the first example."""
    settings = settings or timing.SourceSettings()  # noqa: F405
    roles_path = roles if isinstance(roles, (str, _os.PathLike)) else None
    if isinstance(examples, (str, _os.PathLike)) and names is None and not isinstance(roles, body.JointRoles):  # noqa: F405
        return timing.load_timing_source(_os.fspath(examples), _os.fspath(roles_path or ""), settings)  # noqa: F405
    if isinstance(examples, (Motion, str, _os.PathLike)):  # noqa: F405
        examples = [examples]
    motions, labels = [], []
    for i, e in enumerate(examples):
        if isinstance(e, Motion):  # noqa: F405
            motions.append(e)
            labels.append(f"example {i + 1}")
        else:
            motions.append(read(e))
            labels.append(_os.path.basename(_os.fspath(e)))
    if not motions:
        raise InvalidSettingsError("timing source: no examples given")  # noqa: F405
    if not isinstance(roles, body.JointRoles):  # noqa: F405
        roles = body.read_roles(motions[0].skeleton, _os.fspath(roles_path or ""))  # noqa: F405
    return timing.make_timing_source(motions, roles, list(names) if names is not None else labels,  # noqa: F405
                                     settings)


def retime_like(motion, like, settings=None, roles=None):
    """``koma retime --like``: re-times ``motion`` to the timing of ``like`` (a timing.TimingSource,
    or anything ``timing_source`` accepts) and returns the timing.RetimeResult (``.motion``,
    ``.report``). The root path stays the same curve; first and last frames are kept. ``roles``:
    a body.JointRoles or a roles file path (as the CLI's ``--roles``: used for the input and the
    examples); default: found by name."""
    source = like if isinstance(like, timing.TimingSource) else timing_source(  # noqa: F405
        like, roles=roles if isinstance(roles, (str, _os.PathLike)) else None)
    if not isinstance(roles, body.JointRoles):  # noqa: F405
        roles = body.read_roles(motion.skeleton, _os.fspath(roles or ""))  # noqa: F405
    return timing.retime(motion, roles, source, settings or timing.RetimeSettings())  # noqa: F405


def make_chart(value):
    """A keys.Chart from a name ("slow-in-out"), a list of fractions ([0.1, 0.4, 0.8]) or a Chart."""
    if isinstance(value, keys.Chart):  # noqa: F405
        value.validate()
        return value
    if isinstance(value, str):
        return keys.parse_chart(value)  # noqa: F405
    c = keys.Chart(kind=keys.ChartKind.custom, fractions=[float(f) for f in value])  # noqa: F405
    c.validate()
    return c


def spacing_settings(on=2, chart="source", gaps=None):
    """keys.SpacingSettings: an inbetween every ``on`` frames after each key, spaced by ``chart``
    (a name, fractions or a Chart); ``gaps`` sets single gaps' charts, as {key frame: chart}
    (the key that opens the gap) or a list of keys.GapChart."""
    s = keys.SpacingSettings(on=int(on), chart=make_chart(chart))  # noqa: F405
    if isinstance(gaps, dict):
        gaps = [keys.GapChart(start=int(k), chart=make_chart(v)) for k, v in sorted(gaps.items())]  # noqa: F405
    s.gaps = list(gaps or [])
    s.validate()
    return s


def space(source, key_frames, rate=24.0, on=2, chart="source", gaps=None):
    """``koma keys --keys N --on 2 --chart CHART`` on keys you already have: (keys.Spacing, the
    spaced motion at ``rate``). ``source`` is the motion at its own rate; ``key_frames`` are output
    frames at ``rate`` (e.g. ``keys.select_keys(koma.resample(source, rate), ...).keys()``);
    ``on``, ``chart`` and ``gaps`` as spacing_settings(). Key poses never move."""
    spacing = keys.space_drawings(source, list(key_frames), float(rate), spacing_settings(on, chart, gaps))  # noqa: F405
    return spacing, keys.spaced_motion(source, spacing)  # noqa: F405


def _enum(enum_type, value, field):
    """A bound enum value from itself or its member name (InvalidSettingsError naming `field` otherwise)."""
    if isinstance(value, enum_type):
        return value
    members = enum_type.__members__
    if value not in members:
        raise InvalidSettingsError(f"{field}: '{value}': expected {', '.join(members)}")  # noqa: F405
    return members[value]


def _toon_style(style, fields):
    """toon.ToonStyle from a ToonStyle and fields by name: colours as "#RRGGBB" or render.Rgba,
    enums as their names ("smooth", "multiples")."""
    for name, value in fields.items():
        if name.startswith("_") or not hasattr(style, name):
            raise TypeError(f"render_file: unknown setting '{name}'")
        current = getattr(style, name)
        if isinstance(current, render.Rgba) and isinstance(value, str):  # noqa: F405
            value = render.parse_colour(value, f"toon.{name}")  # noqa: F405
        elif hasattr(type(current), "__members__"):
            value = _enum(type(current), value, f"toon.{name}")
        setattr(style, name, value)
    return style


def _render_job(keys="", compare="", compare_animation="", output_rate=0.0, look="toon", camera="side", size=None,
                layout="side_by_side", onion_skin=0, unit=None, animation="", asset_root="", style=None,
                **style_fields):
    """The render pipeline's job (_batch.RenderJob) from render_file's settings (koma.batch's "render" too)."""
    job = _koma._batch.RenderJob()  # noqa: F405
    named, scale = _unit_or_scale(unit)
    job.read = io.ReadOptions(unit=named, scale=scale, animation=str(animation), asset_root=_os.fspath(asset_root))
    job.keys = _os.fspath(keys)
    job.compare = _os.fspath(compare)
    job.compare_animation = str(compare_animation)
    job.output_rate = float(output_rate)
    job.look = _enum(_koma._batch.Look, look, "look")  # noqa: F405
    cam = camera if isinstance(camera, render.CameraSettings) else render.parse_camera_spec(str(camera), job.camera)  # noqa: F405
    if size is not None:
        cam.width, cam.height = render.parse_frame_size(size) if isinstance(size, str) else size  # noqa: F405
    job.camera = cam
    job.style = _toon_style(style if style is not None else job.style, style_fields)  # RenderJob's default: ink #1a171f
    if isinstance(layout, render.CompareSettings):  # noqa: F405
        settings = layout
    else:
        settings = render.CompareSettings(layout=_enum(render.CompareLayout, layout, "layout"))  # noqa: F405
    if onion_skin:
        settings.onion_skin = int(onion_skin)
    job.compare_settings = settings
    return job


def render_file(input, output, keys="", compare="", compare_animation="", output_rate=0.0, look="toon",
                camera="side", size=None, layout="side_by_side", onion_skin=0, unit=None, animation="",
                asset_root="", style=None, **style_fields):
    """``koma render``: draws the motion file ``input`` to ``output`` (.mp4, .gif, or a folder ending
    in "/" of PNG frames) with the library's render pipeline, the one ``koma render`` runs, so the
    same settings give the same bytes. Atomic.

    ``keys``: a ``koma keys`` JSON report: the input is shown held on its drawings (each body part on
    its layer's keys) beside the smooth input, or beside ``compare`` (a second motion file;
    ``compare_animation`` chooses its animation). ``output_rate``: fps, 0 = the report's, else 24.
    ``look``: "toon" (the character as cel animation) or "sticks"; without OpenGL the toon look
    draws sticks and warns. ``camera``: "side,follow" as ``--camera`` (a view and/or a framing) or a
    render.CameraSettings; ``size``: (width, height) or "1280x720" (None = the camera's, 1280x720).
    ``layout``: "side_by_side" or "overlay", or a render.CompareSettings; ``onion_skin``: previous
    drawings as ghosts, 0 .. 8. ``unit``, ``animation``, ``asset_root`` as ``read``. The toon look:
    ``style`` (a toon.ToonStyle) and/or any of its fields by name, e.g. ``tones=3``,
    ``shading="smooth"``, ``ink="#1a171f"``, ``line_width=2``, ``smear="multiples"``,
    ``smear_threshold=6``, ``transparent=True`` (RGBA cels of the result alone, into a folder).
    The defaults are ``koma render``'s (RenderJob's: side camera, 1280x720, ink #1a171f).

    Warnings (the readers', the fall-back to sticks, a character that cannot be drawn) are emitted
    as KomaWarning. Returns the figures ``koma render --json`` prints (without "seconds": format,
    frames, fps, duration_s, width, height, camera, framing, look, smear, drawings when held, output)
    plus "warnings" and "notes". Raises koma.InvalidSettingsError for bad settings (naming the
    field), koma.BadFileError / OSError for inputs, koma.MismatchError for a report of another clip.
    """
    job = _render_job(keys=keys, compare=compare, compare_animation=compare_animation, output_rate=output_rate,
                      look=look, camera=camera, size=size, layout=layout, onion_skin=onion_skin, unit=unit,
                      animation=animation, asset_root=asset_root, style=style, **style_fields)
    result = _koma._batch.run_render_file(_os.fspath(input), _os.fspath(output), job)  # noqa: F405
    for w in result.warnings:
        _warnings.warn(w, KomaWarning, stacklevel=2)
    figures = _koma._batch.render_figures(result)  # noqa: F405
    figures.update(output=_os.fspath(output), warnings=list(result.warnings), notes=list(result.notes))
    return figures


def positions(motion):
    """World positions (frames, joints + end sites, 3) in metres: forward kinematics' view."""
    return forward_kinematics(motion).positions  # noqa: F405


DEFAULT_ROOT_CHANNELS = [Channel.Xposition, Channel.Yposition, Channel.Zposition,  # noqa: F405
                         Channel.Zrotation, Channel.Xrotation, Channel.Yrotation]  # noqa: F405
DEFAULT_JOINT_CHANNELS = [Channel.Zrotation, Channel.Xrotation, Channel.Yrotation]  # noqa: F405


def make_skeleton(names, parents, offsets, channels=None, end_sites=()):
    """A Skeleton; ``channels`` None gives the root 6 channels and every other joint 3 (ZXY), the
    layout of most mocap BVH files. ``end_sites`` is a sequence of EndSite or (parent, offset)."""
    if channels is None:
        channels = [DEFAULT_ROOT_CHANNELS if p < 0 else DEFAULT_JOINT_CHANNELS for p in parents]
    sites = [e if isinstance(e, EndSite) else EndSite(int(e[0]), e[1]) for e in end_sites]  # noqa: F405
    return Skeleton(list(names), [int(p) for p in parents], offsets, channels, sites)  # noqa: F405


def _settings_repr(self):
    fields = [n for n in dir(self) if not n.startswith("_") and not callable(getattr(self, n))]
    return f"{type(self).__name__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in fields) + ")"


def _install_reprs():
    spaces = [_koma] + [v for v in vars(_koma).values() if isinstance(v, _types.ModuleType)]
    for space in spaces:
        for name in dir(space):
            cls = getattr(space, name)
            if isinstance(cls, type) and (name.endswith("Settings") or name.endswith("Options")
                                          or name in ("HoldConstraints", "SelectionTarget", "ToonStyle", "RenderJob", "Rgba")):
                cls.__repr__ = _settings_repr
    for cls in (io.ReadOptions, io.WriteOptions):
        cls.__repr__ = _settings_repr
    Motion.__repr__ = lambda m: (  # noqa: F405
        f"<koma.Motion {m.frame_count} frames x {m.joint_count} joints at {m.frame_rate:g} fps>")
    Skeleton.__repr__ = lambda s: (  # noqa: F405
        f"<koma.Skeleton {s.joint_count} joints, {s.end_site_count} end sites, root '{s.names[0]}'>"
        if s.joint_count else "<koma.Skeleton (empty)>")


_install_reprs()

if hasattr(_koma, "_batch"):
    from . import batch  # noqa: E402,F401  (koma.batch.run: whole libraries, locally or on Dask)
