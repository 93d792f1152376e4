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
    "DEFAULT_JOINT_CHANNELS"]


class KomaWarning(UserWarning):
    """A quirk a reader tolerated (e.g. more BVH rows than declared); the text names file:line."""


def _unit(unit):
    if unit is None or isinstance(unit, _koma.LengthUnit):
        return unit
    parsed = _koma.parse_length_unit(str(unit))
    if parsed is None:
        raise InvalidSettingsError(f"unit: unknown unit '{unit}' (m, cm, mm, in, ft)")  # noqa: F405
    return parsed


def read(path, unit=None, animation="", frame_rate=0.0):
    """Reads a motion file (chosen by extension) and returns the Motion.

    ``unit`` is a BVH file's length unit (a LengthUnit or "m", "cm", "in", ...; None detects it);
    ``animation`` and ``frame_rate`` (0 = from the key times) choose what a glTF file gives.
    Tolerated quirks are emitted as KomaWarning. Raises koma.BadFileError / OSError.
    """
    result = io.read_motion(_os.fspath(path), io.ReadOptions(unit=_unit(unit), animation=str(animation),
                                                             frame_rate=float(frame_rate)))
    for w in result.warnings:
        _warnings.warn(w, KomaWarning, stacklevel=2)
    return result.motion


def write(path, motion, unit=None, step_keys=()):
    """Writes a motion atomically (format by extension: .bvh, .gltf, .glb); ``unit`` None restores
    the source unit (BVH); ``step_keys`` (glTF) writes STEP keys on those frames only."""
    io.write_motion(_os.fspath(path), motion, io.WriteOptions(unit=_unit(unit), step_keys=list(step_keys)))


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
    for name in dir(_koma):
        cls = getattr(_koma, name)
        if isinstance(cls, type) and (name.endswith("Settings") or name.endswith("Options")
                                      or name in ("HoldConstraints", "SelectionTarget")):
            cls.__repr__ = _settings_repr
    for cls in (io.ReadOptions, io.WriteOptions):
        cls.__repr__ = _settings_repr
    Motion.__repr__ = lambda m: (  # noqa: F405
        f"<koma.Motion {m.frame_count} frames x {m.joint_count} joints at {m.frame_rate:g} fps>")
    Skeleton.__repr__ = lambda s: (  # noqa: F405
        f"<koma.Skeleton {s.joint_count} joints, {s.end_site_count} end sites, root '{s.names[0]}'>"
        if s.joint_count else "<koma.Skeleton (empty)>")


_install_reprs()
