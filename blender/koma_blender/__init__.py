"""koma for Blender: key poses, cartoon filter, gait style and re-timing on the active armature's
action, and BVH import through koma (Blender 3.4's own importer fails on Python 3.11).

The add-on imports the compiled `koma` package. Put it where Blender's Python finds it (see
docs/blender.md): Blender's scripts/modules folder, or the folder named by KOMA_PYTHONPATH, or the
add-on preference "koma package folder".
"""
bl_info = {
    "name": "koma: cartoon timing for motion capture",
    "author": "koma developers",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "Dope Sheet / Graph Editor > Sidebar > koma; File > Import > Motion capture (koma)",
    "description": "Key poses on 2s/3s, cartoon filter, gait style, re-timing, BVH import via koma",
    "category": "Animation",
}

import os
import sys


def _find_koma(extra=""):
    """Imports koma, adding KOMA_PYTHONPATH or `extra` to sys.path when needed; None if absent."""
    for folder in (extra, os.environ.get("KOMA_PYTHONPATH", "")):
        if folder and os.path.isdir(folder) and folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        import koma  # noqa: F401
        return koma
    except ImportError:
        return None


_find_koma()

from . import operators, ui  # noqa: E402


def register():
    operators.register()
    ui.register()


def unregister():
    ui.unregister()
    operators.unregister()
