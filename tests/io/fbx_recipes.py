"""FBX documents made from scratch, binary and ASCII, for the hostile-file tests (issue 45).

A document is a tree of nodes: (name, [properties], [children]). A property is a typed tuple:
('I', int32), ('L', int64), ('D', double), ('F', float), ('S', str or bytes), ('C', bool),
('l', [int64]), ('d', [double]), ('f', [float]), ('i', [int32]). `binary()` and `ascii()` write it
as FBX 7.4 / 7.5; `character()` makes a small animated skeleton that assimp and koma read, and the
mutations in tests/io/hostile_files_test.py start from it.
"""

import struct
import zlib

TICKS_PER_SECOND = 46186158000


def node(name, props=(), children=None):
    """children None: no scope; a list (even empty): a scope `{ }` (a null record in binary)."""
    return (name, list(props), None if children is None else list(children))


def p70(name, type_, label, flags, *values):
    props = [('S', name), ('S', type_), ('S', label), ('S', flags)]
    for v in values:
        if isinstance(v, tuple):
            props.append(v)
        elif isinstance(v, float):
            props.append(('D', v))
        elif isinstance(v, int):
            props.append(('I', v) if -2**31 <= v < 2**31 else ('L', v))
        else:
            props.append(('S', v))
    return node('P', props)


# --- binary -------------------------------------------------------------------------------------

def _bin_prop(p, compress=False):
    t, v = p
    if t == 'I':
        return b'I' + struct.pack('<i', v)
    if t == 'L':
        return b'L' + struct.pack('<q', v)
    if t == 'D':
        return b'D' + struct.pack('<d', v)
    if t == 'F':
        return b'F' + struct.pack('<f', v)
    if t == 'C':
        return b'C' + (b'\x01' if v else b'\x00')
    if t in ('S', 'R'):
        data = v.encode('utf-8') if isinstance(v, str) else bytes(v)
        return t.encode() + struct.pack('<I', len(data)) + data
    if t in ('l', 'd', 'f', 'i'):
        fmt = {'l': 'q', 'd': 'd', 'f': 'f', 'i': 'i'}[t]
        raw = struct.pack('<%d%s' % (len(v), fmt), *v)
        if compress:
            data = zlib.compress(raw)
            return t.encode() + struct.pack('<III', len(v), 1, len(data)) + data
        return t.encode() + struct.pack('<III', len(v), 0, len(raw)) + raw
    raise ValueError(t)


def deep(depth):
    """`depth` records nested in each other (written without recursion: see _deep_*)."""
    return ('__deep__', depth, None)


def _deep_bin(depth, offset, wide):
    size = 8 if wide else 4
    word = '<Q' if wide else '<I'
    prop = _bin_prop(('I', 1))
    head_len = 3 * size + 1 + 4
    null = b'\x00' * (3 * size + 1)
    starts = [offset + k * (head_len + len(prop)) for k in range(depth)]
    total_inner = depth * (head_len + len(prop)) + depth * len(null)
    out = []
    for k in range(depth):
        end = offset + total_inner - k * len(null)
        out.append(struct.pack(word, end) + struct.pack(word, 1) + struct.pack(word, len(prop)) + b'\x04Deep' + prop)
    assert starts[-1] + head_len + len(prop) == offset + depth * (head_len + len(prop))
    return b''.join(out) + null * depth


def _bin_node(n, offset, wide, compress):
    name, props, children = n
    if name == '__deep__':
        return _deep_bin(props, offset, wide)
    word = '<Q' if wide else '<I'
    size = 8 if wide else 4
    head_len = 3 * size + 1 + len(name)
    prop_bytes = b''.join(_bin_prop(p, compress) for p in props)
    body = b''
    at = offset + head_len + len(prop_bytes)
    for c in children or ():
        b = _bin_node(c, at, wide, compress)
        body += b
        at += len(b)
    if children is not None or not props:
        body += b'\x00' * (3 * size + 1)
    end = offset + head_len + len(prop_bytes) + len(body)
    head = struct.pack(word, end) + struct.pack(word, len(props)) + struct.pack(word, len(prop_bytes))
    return head + bytes([len(name)]) + name.encode() + prop_bytes + body


def binary(doc, version=7400, compress=False):
    """The document as binary FBX (7500 and later: 64-bit record offsets)."""
    wide = version >= 7500
    out = b'Kaydara FBX Binary  \x00\x1a\x00' + struct.pack('<I', version)
    for n in doc:
        out += _bin_node(n, len(out), wide, compress)
    out += b'\x00' * (25 if wide else 13)
    # Footer: assimp does not check it; written as the SDK does (padding, version, zeros, magic).
    out += b'\xfa\xbc\xab\x09\xd0\xc8\xd4\x66\xb1\x76\xfb\x83\x1c\xf7\x26\x7e' + b'\x00' * 4
    out += b'\x00' * ((16 - len(out) % 16) % 16) + struct.pack('<I', version) + b'\x00' * 120
    out += b'\xf8\x5a\x8c\x6a\xde\xf5\xd9\x7e\xec\xe9\x0c\xe3\x75\x8f\x29\x0b'
    return out


# --- ASCII --------------------------------------------------------------------------------------

def _ascii_value(p):
    t, v = p
    if t in ('S', 'R'):
        s = v if isinstance(v, str) else v.decode('latin-1')
        return '"' + s.replace('"', '&quot;') + '"'
    if t == 'C':
        return 'T' if v else 'F'
    if t in ('l', 'd', 'f', 'i'):
        return '*%d {\n\ta: %s\n}' % (len(v), ','.join(repr(x) if isinstance(x, float) else str(x) for x in v))
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _ascii_node(n, depth, out):
    name, props, children = n
    if name == '__deep__':
        out.append('Deep: 1 {\n' * props + '}\n' * props)
        return
    pad = '\t' * depth
    arrays = [p for p in props if p[0] in ('l', 'd', 'f', 'i')]
    if arrays:  # an array is the node's only property, written as a block
        out.append('%s%s: %s\n' % (pad, name, _ascii_value(arrays[0]).replace('\n', '\n' + pad)))
        return
    line = '%s%s: %s' % (pad, name, ', '.join(_ascii_value(p) for p in props))
    if children is not None or not props:
        out.append(line + ' {\n')
        for c in children or ():
            _ascii_node(c, depth + 1, out)
        out.append(pad + '}\n')
    else:
        out.append(line + '\n')


def ascii(doc, version=7400):
    out = ['; FBX %d.%d.0 project file\n' % (version // 1000, version % 1000 // 100)]
    for n in doc:
        _ascii_node(n, 0, out)
    return ''.join(out).encode('utf-8', 'surrogateescape')


# --- a small animated skeleton ------------------------------------------------------------------

def curve(uid, times, values):
    return node('AnimationCurve', [('L', uid), ('S', 'AnimCurve::'), ('S', '')], [
        node('Default', [('D', 0.0)]),
        node('KeyVer', [('I', 4009)]),
        node('KeyTime', [('l', list(times))]),
        node('KeyValueFloat', [('f', list(values))]),
        node('KeyAttrFlags', [('i', [24836])]),
        node('KeyAttrDataFloat', [('f', [0.0, 0.0, 0.0, 0.0])]),
        node('KeyAttrRefCount', [('i', [len(times)])]),
    ])


def character(bones=3, frames=10, rate_mode=6, names=None, key_times=None, extra_objects=(),
              extra_connections=(), version=7400, stop=None, custom_rate=None, animated=None, values=None):
    """A chain of `bones` LimbNode models, each rotating about X over `frames` frames at 30 fps
    (TimeMode 6), in one animation stack. Returns the document (a list of top-level nodes)."""
    names = names or ['Bone%d' % i for i in range(bones)]
    tick = TICKS_PER_SECOND // 30
    times = key_times if key_times is not None else [f * tick for f in range(frames)]
    values = values if values is not None else [float(10 * k) for k in range(len(times))]
    objects, connections = [], []
    settings = [p70('UpAxis', 'int', 'Integer', '', 1), p70('UpAxisSign', 'int', 'Integer', '', 1),
                p70('FrontAxis', 'int', 'Integer', '', 2), p70('FrontAxisSign', 'int', 'Integer', '', 1),
                p70('CoordAxis', 'int', 'Integer', '', 0), p70('CoordAxisSign', 'int', 'Integer', '', 1),
                p70('UnitScaleFactor', 'double', 'Number', '', 1.0),
                p70('TimeMode', 'enum', '', '', rate_mode)]
    if custom_rate is not None:
        settings.append(p70('CustomFrameRate', 'double', 'Number', '', float(custom_rate)))
    for i, name in enumerate(names):
        uid = 100000 + i
        raw = name if isinstance(name, bytes) else name.encode('utf-8')
        objects.append(node('Model', [('L', uid), ('S', b'Model::' + raw), ('S', 'LimbNode')], [
            node('Version', [('I', 232)]),
            node('Properties70', [], [p70('Lcl Translation', 'Lcl Translation', '', 'A', 0.0, 10.0, 0.0)]),
        ]))
        objects.append(node('NodeAttribute', [('L', 5000000 + i), ('S', 'NodeAttribute::'), ('S', 'LimbNode')],
                            [node('TypeFlags', [('S', 'Skeleton')])]))
        connections.append(node('C', [('S', 'OO'), ('L', uid), ('L', 0 if i == 0 else uid - 1)]))
        connections.append(node('C', [('S', 'OO'), ('L', 5000000 + i), ('L', uid)]))
    last = stop if stop is not None else (max(times) if times else 0)
    objects.append(node('AnimationStack', [('L', 9000), ('S', 'AnimStack::Take 001'), ('S', '')], [
        node('Properties70', [], [p70('LocalStart', 'KTime', 'Time', '', ('L', 0)),
                                  p70('LocalStop', 'KTime', 'Time', '', ('L', last))])]))
    objects.append(node('AnimationLayer', [('L', 9001), ('S', 'AnimLayer::BaseLayer'), ('S', '')], []))
    connections.append(node('C', [('S', 'OO'), ('L', 9001), ('L', 9000)]))
    for i in range(len(names) if animated is None else min(animated, len(names))):
        cn = 10000000 + 10 * i
        objects.append(node('AnimationCurveNode', [('L', cn), ('S', 'AnimCurveNode::R'), ('S', '')], [
            node('Properties70', [], [p70('d|X', 'Number', '', 'A', 0.0), p70('d|Y', 'Number', '', 'A', 0.0),
                                      p70('d|Z', 'Number', '', 'A', 0.0)])]))
        objects.append(curve(cn + 1, times, values))
        connections.append(node('C', [('S', 'OO'), ('L', cn), ('L', 9001)]))
        connections.append(node('C', [('S', 'OP'), ('L', cn), ("L", 100000 + i), ("S", "Lcl Rotation")]))
        connections.append(node('C', [('S', 'OP'), ('L', cn + 1), ('L', cn), ('S', 'd|X')]))
    objects.extend(extra_objects)
    connections.extend(extra_connections)
    return [
        node('FBXHeaderExtension', [], [node('FBXHeaderVersion', [('I', 1003)]), node('FBXVersion', [('I', version)])]),
        node('GlobalSettings', [], [node('Version', [('I', 1000)]), node('Properties70', [], settings)]),
        node('Documents', [], [node('Count', [('I', 1)])]),
        node('Definitions', [], [node('Version', [('I', 100)])]),
        node('Objects', [], objects),
        node('Connections', [], connections),
    ]


def skinned_mesh(bone_uid, indexes, uid=7000000):
    """A one-triangle mesh (a Mesh model, its Geometry) skinned to the model `bone_uid` by one Skin
    with one Cluster whose vertex `indexes` each get weight 1. Returns (objects, connections) for
    character(extra_objects=..., extra_connections=...). An index past the mesh's 3 vertices makes
    assimp 5.2.5 abort (ai_assert `out_idx != nullptr` in FBXConverter::ConvertWeights): a fault
    koma's pre-checks do not look for, so only the child process stands between it and koma."""
    model, geometry, skin, cluster = uid, uid + 1, uid + 2, uid + 3
    identity = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    objects = [
        node('Geometry', [('L', geometry), ('S', 'Geometry::Body'), ('S', 'Mesh')], [
            node('Vertices', [('d', [0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 10.0, 0.0])]),
            node('PolygonVertexIndex', [('i', [0, 1, -3])]),
            node('GeometryVersion', [('I', 124)]),
        ]),
        node('Model', [('L', model), ('S', 'Model::Body'), ('S', 'Mesh')], [node('Version', [('I', 232)])]),
        node('Deformer', [('L', skin), ('S', 'Deformer::Skin'), ('S', 'Skin')], [node('Version', [('I', 101)])]),
        node('Deformer', [('L', cluster), ('S', 'SubDeformer::Cluster'), ('S', 'Cluster')], [
            node('Version', [('I', 100)]),
            node('Indexes', [('i', list(indexes))]),
            node('Weights', [('d', [1.0] * len(indexes))]),
            node('Transform', [('d', identity)]),
            node('TransformLink', [('d', identity)]),
        ]),
    ]
    connections = [
        node('C', [('S', 'OO'), ('L', model), ('L', 0)]),
        node('C', [('S', 'OO'), ('L', geometry), ('L', model)]),
        node('C', [('S', 'OO'), ('L', skin), ('L', geometry)]),
        node('C', [('S', 'OO'), ('L', cluster), ('L', skin)]),
        node('C', [('S', 'OO'), ('L', bone_uid), ('L', cluster)]),
    ]
    return objects, connections


def seeds(folder):
    """Small valid FBX files to start a fuzzing corpus from (scripts/fuzz.sh)."""
    import os
    os.makedirs(folder, exist_ok=True)
    tick = TICKS_PER_SECOND // 30
    docs = {
        'seed_binary.fbx': binary(character()),
        'seed_binary7500_zlib.fbx': binary(character(version=7500), version=7500, compress=True),
        'seed_ascii.fbx': ascii(character()),
        'seed_custom_rate.fbx': binary(character(rate_mode=14, custom_rate=14.985)),
        'seed_sparse_keys.fbx': binary(character(key_times=[0, 7 * tick, 30 * tick])),
        'seed_names.fbx': binary(character(names=['mixamorig:Hips', 'Spine.001', 'Head_End'])),
    }
    for name, data in docs.items():
        with open(os.path.join(folder, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == '--seeds':
        seeds(sys.argv[2])
    else:
        sys.exit('usage: fbx_recipes.py --seeds FOLDER')
