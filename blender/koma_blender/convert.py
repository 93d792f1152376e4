"""Format translation between Blender armatures/actions and koma Skeleton/Motion (no algorithms).

Spaces. koma is right-handed Y-up in metres; Blender is Z-up. For an armature object with world
rotation M and uniform world scale s, koma space = k C @ M @ armature space, with C = rotation of
-90 degrees about X ((x, y, z) -> (x, z, -y)) and k = s * the scene's unit scale (metres per
Blender unit): every length koma sees or reports is a world length in metres, whatever the object
scale (Blender imports Mixamo and other centimetre FBX rigs at scale 0.01) or the scene's units.
Armatures imported by koma get M = +90 degrees about X and k = 1, so for them armature space *is*
koma space.

Bones. koma's rest pose has identity local rotations, joint j at its rest head h_j (offset
o_j = h_j - h_parent). A Blender bone has a rest orientation R_j (bone.matrix_local, carried into
koma space). A koma local transform (t_j, q_j) and the pose bone's basis (loc_j, rot_j) are
related by
    rot_j = R_j^-1 q_j R_j        loc_j = R_j^T (t_j - o_j)
which is what makes  P_j = P_parent (B_parent^-1 B_j) L_j  equal  W_j R_j  for every bone, so FK in
koma and the Blender pose agree point for point.

    koma world  W_j = W_p * T(t_j) * R(q_j)           Blender  P_j = P_p * B_p^-1 * B_j * L_j
"""
import math

import bpy
import numpy as np
from mathutils import Matrix, Quaternion

import koma

_C = Matrix.Rotation(-math.pi / 2, 3, "X")  # Blender Z-up -> koma Y-up


class ConversionError(Exception):
    """Input that cannot be converted (reported to the user, scene left unchanged)."""


def qmul(a, b):
    """Hamilton product of quaternion arrays (..., 4) stored w, x, y, z."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def qconj(q):
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def sign_continuous(q):
    """Sign continuity in place over frames of a [frames, joints, 4] quaternion array: frame f is
    negated where its dot product with frame f - 1 (after that one's flip) is negative, as
    koma::make_sign_continuous does in C++ (q and -q are one rotation). Returns q."""
    for f in range(1, len(q)):
        flip = np.sum(q[f] * q[f - 1], axis=1) < 0
        q[f, flip] *= -1
    return q


def wxyz(q_xyzw):
    return np.roll(q_xyzw, 1, axis=-1)


def xyzw(q_wxyz):
    return np.roll(q_wxyz, -1, axis=-1)


def scene_fps(scene):
    return scene.render.fps / scene.render.fps_base


def metres_per_unit(obj, scene=None):
    """Metres per unit of `obj`'s local space: its (mean) world scale times the scene's unit scale."""
    scene = scene if scene is not None else bpy.context.scene
    s = abs(obj.matrix_world.to_3x3().determinant()) ** (1.0 / 3.0)
    return s * scene.unit_settings.scale_length


class Rig:
    """The bones of an armature that koma drives, in parent-before-child order, with their rest
    data in koma space: names, parents, heads (J, 3), offsets (J, 3), rest orientations (J, 3, 3)
    and (J, 4) w, x, y, z, end sites and the koma Skeleton."""

    def __init__(self, obj):
        if obj is None:
            raise ConversionError("no active object: select an armature")
        if obj.type != "ARMATURE":
            raise ConversionError(f"'{obj.name}' is a {obj.type.lower()}, not an armature")
        bones = obj.data.bones
        if len(bones) == 0:
            raise ConversionError(f"armature '{obj.name}' has no bones")
        roots = [b for b in bones if b.parent is None]
        # koma needs one root: drive the largest bone tree (a rig's other roots are usually controls).
        root = max(roots, key=lambda b: len(b.children_recursive))
        self.skipped = len(bones) - 1 - len(root.children_recursive)
        order = []
        stack = [root]
        while stack:
            b = stack.pop(0)
            order.append(b)
            stack[0:0] = list(b.children)  # depth first, children in Blender's order
        self.bones = order
        self.names = [b.name for b in order]
        index = {n: i for i, n in enumerate(self.names)}
        self.parents = [index[b.parent.name] if b.parent is not None else -1 for b in order]
        G = _C @ obj.matrix_world.to_3x3().normalized()
        self.G = G
        self.k = metres_per_unit(obj)  # armature units -> metres (object scale and scene units)
        if not self.k > 0:
            raise ConversionError(f"armature '{obj.name}' has a zero scale")
        self.heads = self.k * np.array([list(G @ b.head_local) for b in order])
        self.offsets = self.heads.copy()
        for j, p in enumerate(self.parents):
            if p >= 0:
                self.offsets[j] = self.heads[j] - self.heads[p]
        self.rest = np.array([[list(r) for r in (G @ b.matrix_local.to_3x3())] for b in order])
        self.rest_q = np.array([list((G @ b.matrix_local.to_3x3()).to_quaternion()) for b in order])
        self.end_sites = []
        for j, b in enumerate(order):
            if not b.children:
                self.end_sites.append(koma.EndSite(j, list(self.k * (G @ b.tail_local - G @ b.head_local))))

    def skeleton(self, animated_location):
        """The koma Skeleton; joints with animated location get position channels."""
        ch = []
        for j, p in enumerate(self.parents):
            ch.append(koma.DEFAULT_ROOT_CHANNELS if (p < 0 or animated_location[j]) else koma.DEFAULT_JOINT_CHANNELS)
        return koma.Skeleton(self.names, self.parents, self.offsets, ch, self.end_sites)


def _path(name, prop):
    return f'pose.bones["{bpy.utils.escape_identifier(name)}"].{prop}'


def action_frame_range(action):
    """First and last whole frame with keys; raises ConversionError for an action without keys."""
    if action is None:
        raise ConversionError("the armature has no action to work on")
    keyed = [fc for fc in action.fcurves if len(fc.keyframe_points) > 0]
    if not keyed:
        raise ConversionError(f"action '{action.name}' has no keys")
    lo = min(fc.keyframe_points[0].co[0] for fc in keyed)
    hi = max(fc.keyframe_points[-1].co[0] for fc in keyed)
    return int(math.floor(lo + 1e-6)), int(math.ceil(hi - 1e-6))


def action_to_motion(obj, action, frame_rate):
    """Samples `action` on `obj`'s rig at every whole frame of its range into a koma Motion.

    Returns (motion, rig, first_frame). Rotation curves in any rotation mode are read; bones
    without curves keep their rest pose."""
    rig = Rig(obj)
    first, last = action_frame_range(action)
    frames = np.arange(first, last + 1, dtype=float)
    if len(frames) < 2:
        raise ConversionError(f"action '{action.name}' has only one frame; koma needs at least two")
    curves = {(fc.data_path, fc.array_index): fc for fc in action.fcurves}

    def sample(path, index, default):
        fc = curves.get((path, index))
        if fc is None or len(fc.keyframe_points) == 0:
            return np.full(len(frames), float(default))
        return np.array([fc.evaluate(f) for f in frames])

    F, J = len(frames), len(rig.names)
    loc = np.zeros((F, J, 3))
    rot = np.zeros((F, J, 4))
    animated = [False] * J
    for j, name in enumerate(rig.names):
        pb = obj.pose.bones[name]
        lp = _path(name, "location")
        animated[j] = any((lp, i) in curves for i in range(3))
        loc[:, j] = np.stack([sample(lp, i, pb.location[i]) for i in range(3)], axis=1)
        mode = pb.rotation_mode
        if mode == "QUATERNION":
            qp = _path(name, "rotation_quaternion")
            rot[:, j] = np.stack([sample(qp, i, pb.rotation_quaternion[i]) for i in range(4)], axis=1)
        elif mode == "AXIS_ANGLE":
            ap = _path(name, "rotation_axis_angle")
            aa = np.stack([sample(ap, i, pb.rotation_axis_angle[i]) for i in range(4)], axis=1)
            rot[:, j] = [list(Quaternion(a[1:], a[0])) for a in aa]
        else:
            ep = _path(name, "rotation_euler")
            eu = np.stack([sample(ep, i, pb.rotation_euler[i]) for i in range(3)], axis=1)
            from mathutils import Euler
            rot[:, j] = [list(Euler(e, mode).to_quaternion()) for e in eu]
    norms = np.linalg.norm(rot, axis=2, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms < 1e-12):
        raise ConversionError(f"action '{action.name}' holds a zero or invalid rotation")
    rot /= norms
    # q = R rot R^-1 ; t = o + k R loc (see the module doc; k: armature units -> metres).
    rq = rig.rest_q[None]
    q = qmul(qmul(rq, rot), qconj(rq))
    t = rig.offsets[None] + rig.k * np.einsum("jab,fjb->fja", rig.rest, loc)
    motion = koma.Motion(rig.skeleton(animated), frame_rate, xyzw(q), t)
    motion.validate()
    return motion, rig, first


def motion_to_action(obj, rig, motion, name, first_frame, key_frames=None, constant=False):
    """Writes `motion` into a new action `name` on `obj`'s rig and returns it.

    Keys every frame, or only `key_frames` (koma frame indices), at Blender frame first_frame + f;
    `key_frames` may also be a dict {bone name: frame indices} (timing layers: each bone its own).
    `constant` sets CONSTANT interpolation (stepped keys). Location curves are written for joints
    whose skeleton has position channels."""
    sk = motion.skeleton
    idx = [sk.find(n) for n in rig.names]
    if min(idx) < 0:
        missing = rig.names[idx.index(-1)]
        raise ConversionError(f"bone '{missing}' is not a joint of the motion")
    q = wxyz(motion.rotations[:, idx])
    t = motion.translations[:, idx]
    rq = rig.rest_q[None]
    rot = qmul(qmul(qconj(rq), q), rq)
    loc = np.einsum("jba,fjb->fja", rig.rest, t - rig.offsets[None]) / rig.k
    # Continuous quaternion signs, so Blender's per-channel interpolation never flips through -q.
    sign_continuous(rot)
    every = np.arange(motion.frame_count)
    action = bpy.data.actions.new(name)
    interp = "CONSTANT" if constant else "LINEAR"

    def put(path, index, group, values):
        keys = key_frames.get(group, every) if isinstance(key_frames, dict) else key_frames
        frames = every if keys is None else np.asarray(keys, dtype=int)
        xs = frames.astype(float) + first_frame
        fc = action.fcurves.new(path, index=index, action_group=group)
        fc.keyframe_points.add(len(xs))
        co = np.empty(2 * len(xs))
        co[0::2] = xs
        co[1::2] = values[frames]
        fc.keyframe_points.foreach_set("co", co)
        for kp in fc.keyframe_points:
            kp.interpolation = interp
        fc.update()

    # Squash and stretch: koma's per-joint scale along its local axes (product 1), as the pose
    # bone's scale. A koma local axis k is bone axis R^T e_k, so the bone-space scale matrix is
    # R^T diag(s) R; its diagonal is keyed (exact when the bone's rest axes are koma's axes up to
    # order and sign, as on armatures koma imports; otherwise the shear part is dropped).
    scales = motion.scales
    bone_scale = None
    if scales is not None and len(scales):
        sc = np.asarray(scales)[:, idx]
        w = rig.rest ** 2
        w /= w.sum(axis=1, keepdims=True)  # matrix_local is float32: columns of R^2 sum to 1 +- 1e-6
        bone_scale = np.einsum("jki,fjk->fji", w, sc)

    for j, bname in enumerate(rig.names):
        if sk.has_position_channels(idx[j]):
            for i in range(3):
                put(_path(bname, "location"), i, bname, loc[:, j, i])
        for i in range(4):
            put(_path(bname, "rotation_quaternion"), i, bname, rot[:, j, i])
        if bone_scale is not None and np.abs(bone_scale[:, j] - 1.0).max() > 1e-9:
            for i in range(3):
                put(_path(bname, "scale"), i, bname, bone_scale[:, j, i])
    return action


def assign_action(obj, action):
    """Makes `action` the armature's active action, with quaternion rotation on the driven bones."""
    if obj.animation_data is None:
        obj.animation_data_create()
    old = obj.animation_data.action
    if old is not None and old is not action:
        old.use_fake_user = True  # the source stays available (Re-time like..., undo of intent)
    obj.animation_data.action = action
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"


def create_armature(context, motion, name):
    """A new armature object for `motion`'s skeleton in koma space (object rotated +90 degrees
    about X so Y-up data stands up in Blender), linked to the active collection. Returns (obj, rig)."""
    sk = motion.skeleton
    rest = koma.positions(koma.rest_motion(sk, motion.frame_rate, 1))[0]
    J = sk.joint_count
    children = [[] for _ in range(J)]
    for j in range(1, J):
        children[sk.parents[j]].append(j)
    ends = {}
    for e in sk.end_sites:
        ends.setdefault(e.parent, []).append(np.asarray(e.offset))
    size = max(sk.rest_extent(), 1e-3)
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    context.collection.objects.link(obj)
    obj.rotation_euler = (math.pi / 2, 0.0, 0.0)
    unit = context.scene.unit_settings.scale_length
    if unit > 0 and abs(unit - 1.0) > 1e-12:
        obj.scale = (1.0 / unit,) * 3  # the character's metres in the scene's units (k = 1)
    data.display_type = "STICK"
    prev_active = context.view_layer.objects.active
    context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    edit = []
    for j in range(J):
        eb = data.edit_bones.new(sk.names[j])
        head = rest[j]
        if children[j]:
            tail = np.mean([rest[c] for c in children[j]], axis=0)
        elif j in ends:
            tail = head + ends[j][0]
        else:
            tail = head
        if np.linalg.norm(tail - head) < 1e-3 * size:
            tail = head + np.array([0.0, 0.05 * size, 0.0])
        eb.head = head.tolist()
        eb.tail = tail.tolist()
        eb.roll = 0.0
        if j > 0:
            eb.parent = edit[sk.parents[j]]
        edit.append(eb)
    bpy.ops.object.mode_set(mode="OBJECT")
    context.view_layer.objects.active = prev_active
    context.view_layer.update()  # matrix_world of the new object
    return obj, Rig(obj)


def place_like(motion, like):
    """Moves `motion` horizontally (koma's X and Z), in place, so that the centroid of its joints on
    the first frame sits over `like`'s: a synthesised gait starts at the origin, the action it
    replaces wherever it was recorded. Only the top root joint's translation changes."""
    d = koma.positions(like)[0].mean(axis=0) - koma.positions(motion)[0].mean(axis=0)
    d[1] = 0.0
    motion.translations[:, 0] += d
    return motion
