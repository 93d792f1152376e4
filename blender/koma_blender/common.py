"""What the add-on's operators share: the koma package, the markers and custom properties results
carry, koma's settings names in the panel's words, the active armature and its original action,
and the base class of every operator that works on an action (read it, call ONE koma function,
store the result). The operators themselves are one module per capability: io_bvh (import),
keys (key poses), cartoon, gait, timing; operators.py registers them."""
import bpy

from . import _find_koma

koma = _find_koma()
if koma is not None:
    from . import convert
    from .convert import ConversionError
else:  # the operators still register nothing useful; the panel says what is missing
    convert = None  # the operator modules import it by name
    ConversionError = Exception

MISSING = ("koma module not found: build it (make build) and link build/release/python/koma into "
           "Blender's scripts/modules folder, or start Blender with KOMA_PYTHONPATH=<build>/python/ "
           "(docs/blender.md, Install)")

MARKER_PREFIX = "koma "
SOURCE_KEY = "koma_source"      # custom property of a result action: the name of the action it came from
OPERATION_KEY = "koma_operation"  # ... and what made it ("key poses on 2 at 24 fps")

# koma's settings names (the start of its error messages) in the words of the panel. Errors are
# shown with these, never with CLI flags or C++ field names.
PANEL_WORDS = {
    "constraints.locked": "Lock selected markers",
    "constraints.min_hold": "Min hold (drawings)",
    "constraints.max_hold": "Max hold (drawings)",
    "min_hold": "Min hold (drawings)",
    "max_hold": "Max hold (drawings)",
    "locked": "Lock selected markers",
    "keys": "Keys",
    "on": "On",
    "max_error": "Max RMS error",
    "strength": "Strength",
    "sigma_seconds": "Sigma (s)",
    "min_sigma_seconds": "Sigma range",
    "max_sigma_seconds": "Sigma range",
    "squash": "Squash and stretch",
    "squash_joint": "Squash bone",
    "frame_rate": "Drawing rate",
    "features.camera": "Score in the camera view",
    "layers": "Layers",
    "camera": "Score in the camera view",
    "output_rate": "Drawing rate",
}


def panel_words(message):
    """koma's error text with its leading settings name replaced by the panel's label."""
    text = str(message)
    head, sep, rest = text.partition(": ")
    if sep and head in PANEL_WORDS:
        return f"{PANEL_WORDS[head]}: {rest}"
    if sep and head.startswith("part "):
        return f"Part strength ({head[5:]}): {rest}"
    return text


def has(name):
    return koma is not None and hasattr(koma, name)


def _errors():
    return (ConversionError, koma.Error) if koma is not None else (ConversionError,)


def _active_armature(context):
    obj = context.active_object
    if obj is None:
        raise ConversionError("no active object: select an armature")
    if obj.type != "ARMATURE":
        raise ConversionError(f"'{obj.name}' is a {obj.type.lower()}, not an armature")
    action = obj.animation_data.action if obj.animation_data else None
    if action is None:
        raise ConversionError(f"armature '{obj.name}' has no action")
    return obj, action


def source_action(action):
    """The original action a koma result came from (following results of results), or `action`
    itself. Every operator works on this, however many times it runs."""
    seen = set()
    while action is not None and action.get(SOURCE_KEY) and action.name not in seen:
        seen.add(action.name)
        src = bpy.data.actions.get(action[SOURCE_KEY])
        if src is None:
            break
        action = src
    return action


def _ensure_object_mode(context):
    if context.mode != "OBJECT" and context.active_object is not None:
        bpy.ops.object.mode_set(mode="OBJECT")


class _ActionOperator:
    """Shared checks of the operators that transform the active armature's action. The result goes
    into a new action "<source>.<suffix>" made active; the source action is kept (fake user)."""
    bl_options = {"REGISTER", "UNDO"}


    @classmethod
    def poll(cls, context):
        return koma is not None

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self)

    def read_motion(self, context):
        """The armature, its ORIGINAL action (the source of a koma result that is active), that
        action as a koma Motion at the scene's rate, the rig and the first frame."""
        obj, action = _active_armature(context)
        action = source_action(action)
        motion, rig, first = convert.action_to_motion(obj, action, convert.scene_fps(context.scene))
        if rig.skipped:
            self.report({"WARNING"}, f"{rig.skipped} bone(s) outside the main hierarchy are left alone")
        return obj, action, motion, rig, first

    def store(self, context, obj, action, rig, motion, first, suffix, key_frames=None, constant=False,
              operation=""):
        """Writes the result into a new action "<source>.<suffix>" (an older result of the same
        source and settings is replaced; the source is never changed). Everything that can fail
        has run before this."""
        name = f"{action.name}.{suffix}"
        old = bpy.data.actions.get(name)
        if old is not None and old is not action and old.get(SOURCE_KEY) == action.name:
            bpy.data.actions.remove(old)
        result = convert.motion_to_action(obj, rig, motion, name, first, key_frames, constant)
        result[SOURCE_KEY] = action.name
        result[OPERATION_KEY] = operation or suffix
        action.use_fake_user = True
        convert.assign_action(obj, result)
        obj["koma_show_original"] = False  # the result is shown (set without the toggle's update)
        return result
