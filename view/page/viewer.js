// koma view: two viewports (original, held result) on one clock, timeline, exposure sheet, error curve.
// A classic script (no modules, no fetch) so the page works from file://. It reads window.KOMA_VIEW
// (motion.js, written by `koma view`) and the three.js globals (three/*.js).
(function () {
  'use strict';

  const body = document.body;
  const $ = (id) => document.getElementById(id);

  function fail(message) {
    body.dataset.komaError = message;
    const box = $('error');
    box.textContent = 'The viewer could not start: ' + message;
    box.hidden = false;
    $('loading').textContent = '';
  }

  // ---- data -------------------------------------------------------------------------------
  const D = window.KOMA_VIEW;
  if (typeof THREE === 'undefined' || !THREE.GLTFLoader || !THREE.OrbitControls || !THREE.SkeletonUtils ||
      !THREE.OutlineEffect) {
    fail('three.js did not load (three/three.min.js and its loaders must sit beside index.html)');
    return;
  }
  if (!D || D.format !== 'koma-view 1') {
    fail('motion.js is missing or not written by this version of koma view');
    return;
  }
  const fps = D.fps;
  const N = D.frames;
  // Frame f is shown at time (f + EPS) / fps: just after its key, so float32 key times in the GLB
  // never make a STEP sampler pick the previous drawing.
  const EPS = 1e-3;
  const timeOf = (f) => (f + EPS) / fps;

  function decodeBase64(text) {
    const bin = atob(text);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return bytes.buffer;
  }

  function loadGlb(b64) {
    return new Promise((resolve, reject) => {
      new THREE.GLTFLoader().parse(decodeBase64(b64), '', resolve,
        (e) => reject(new Error('the character could not be read: ' + (e && e.message ? e.message : e))));
    });
  }

  // ---- the look ---------------------------------------------------------------------------
  // toon: cel shading (MeshToonMaterial, a 2-step gradient map: lit where the surface faces the key
  // light, shadow where it turns away) and ink lines (OutlineEffect: an inverted hull of constant
  // on-screen width) on paper, as koma's C++ renderer draws. plain: the material's own smooth
  // shading on the dark stage. flat: unlit colours (base colour x texture), no lines.
  const LOOKS = ['toon', 'plain', 'flat'];
  // Colours in the renderer's working space (linear); the background is a clear colour (as is).
  const PAPER = new THREE.Color(0xf5f2eb), STAGE = new THREE.Color(0x1b1e24);
  const INK = new THREE.Color(0x1a171f).convertSRGBToLinear();
  // Toon lights: lit = ambient + key = white (the material's own colour), shadow = ambient alone,
  // a cool multiply (about 0.70 of the colour once encoded to sRGB).
  const TOON_AMBIENT = new THREE.Color(0.42, 0.40, 0.55), TOON_KEY = new THREE.Color(0.58, 0.60, 0.45);

  function lookFromUrl() {
    const q = new URLSearchParams(window.location.search || '');
    const h = new URLSearchParams((window.location.hash || '').replace(/^#/, ''));
    const v = (q.get('look') || h.get('look') || '').toLowerCase();
    if (v && LOOKS.indexOf(v) < 0) console.warn('koma view: unknown look "' + v + '" in the URL; expected ' + LOOKS.join(', '));
    return LOOKS.indexOf(v) >= 0 ? v : null;
  }

  // The 2-step gradient, read at dot(N, L) * 0.5 + 0.5: shadow (no key light) up to a cosine of
  // 0.15, lit (all of it) above, as koma's C++ renderer splits; 40 texels put the step at 23/40 =
  // (0.15 + 1) / 2, nearest filtering keeps it hard.
  function gradientMap(webgl2) {
    const steps = new Uint8Array(40);
    steps.fill(255, 23);
    const t = new THREE.DataTexture(steps, steps.length, 1, webgl2 ? THREE.RedFormat : THREE.LuminanceFormat);
    t.minFilter = t.magFilter = THREE.NearestFilter;
    t.generateMipmaps = false;
    t.needsUpdate = true;
    return t;
  }

  // Ink lines need a closed hull. A mesh with hard edges (split normals: a low-poly model, UV
  // seams) pushed out along its own normals cracks open at every edge, so the hull is pushed along
  // smoothed normals (the average over vertices at one position), the `normal` attribute that
  // OutlineEffect reads. Surfaces keep their own normals (`komaNormal`, read by the shading
  // materials through shadeWithOwnNormals), so every look shades the model as it was made.
  function hullNormals(geometry) {
    const pos = geometry.getAttribute('position');
    if (!pos) return;
    if (!geometry.getAttribute('normal')) geometry.computeVertexNormals();
    const nrm = geometry.getAttribute('normal');
    geometry.computeBoundingBox();
    const q = Math.max(geometry.boundingBox.getSize(new THREE.Vector3()).length(), 1e-9) * 1e-5;
    const key = (i) => Math.round(pos.getX(i) / q) + ',' + Math.round(pos.getY(i) / q) + ',' + Math.round(pos.getZ(i) / q);
    const sums = new Map();
    for (let i = 0; i < pos.count; i++) {
      const k = key(i);
      const s = sums.get(k) || [0, 0, 0];
      s[0] += nrm.getX(i); s[1] += nrm.getY(i); s[2] += nrm.getZ(i);
      sums.set(k, s);
    }
    const out = new Float32Array(pos.count * 3), m = new THREE.Vector3();
    for (let i = 0; i < pos.count; i++) {
      const s = sums.get(key(i));
      m.set(s[0], s[1], s[2]);
      if (m.lengthSq() < 1e-12) m.fromBufferAttribute(nrm, i);
      m.normalize();
      out[3 * i] = m.x; out[3 * i + 1] = m.y; out[3 * i + 2] = m.z;
    }
    geometry.setAttribute('komaNormal', nrm);
    geometry.setAttribute('normal', new THREE.BufferAttribute(out, 3));
  }

  function shadeWithOwnNormals(material) {
    const before = material.onBeforeCompile, key = material.customProgramCacheKey;  // a loader's own, kept
    material.onBeforeCompile = function (shader, renderer) {
      before.call(this, shader, renderer);
      shader.vertexShader = 'attribute vec3 komaNormal;\n' + shader.vertexShader.replace('#include <beginnormal_vertex>',
        'vec3 objectNormal = vec3( komaNormal );\n#ifdef USE_TANGENT\n\tvec3 objectTangent = vec3( tangent.xyz );\n#endif');
    };
    material.customProgramCacheKey = function () { return key.call(this) + '|komaNormal'; };
    material.needsUpdate = true;
  }

  // The materials of every look for each mesh of a character; the mesh's own is the plain one.
  function lookMaterials(root, gradient) {
    const meshes = [], toon = [];
    const converted = new Map();
    const convert = (plain) => {
      if (converted.has(plain)) return converted.get(plain);
      const common = { color: plain.color ? plain.color.clone() : new THREE.Color(1, 1, 1), map: plain.map || null,
        alphaMap: plain.alphaMap || null, transparent: plain.transparent, opacity: plain.opacity,
        alphaTest: plain.alphaTest, side: plain.side, vertexColors: plain.vertexColors, name: plain.name };
      const t = new THREE.MeshToonMaterial(Object.assign({ gradientMap: gradient }, common));
      // A colour about as dark as the ink draws itself: a hull around small dark parts (a mouth, the
      // pupils) would only thicken them into blots.
      const inkDark = !plain.map && common.color.r * 0.2126 + common.color.g * 0.7152 + common.color.b * 0.0722 < 0.025;
      t.userData.outlineParameters = { thickness: 0.004, color: INK.toArray(), alpha: 1, visible: !inkDark, keepAlive: true };
      toon.push(t);
      shadeWithOwnNormals(t);
      shadeWithOwnNormals(plain);
      const set = { plain: plain, toon: t, flat: new THREE.MeshBasicMaterial(common) };
      converted.set(plain, set);
      return set;
    };
    const done = new Set();
    root.traverse((o) => {
      if (!o.isMesh) return;
      if (!done.has(o.geometry)) { hullNormals(o.geometry); done.add(o.geometry); }
      const list = Array.isArray(o.material) ? o.material : [o.material];
      meshes.push({ mesh: o, sets: list.map(convert), array: Array.isArray(o.material) });
    });
    return {
      apply(look) {
        for (const m of meshes) {
          const mats = m.sets.map((s) => s[look]);
          m.mesh.material = m.array ? mats : mats[0];
        }
      },
      setThickness(t) { for (const mat of toon) mat.userData.outlineParameters.thickness = t; },
    };
  }

  // ---- scenes ---------------------------------------------------------------------------
  function hasSkinnedMesh(root) {
    let found = false;
    root.traverse((o) => { if (o.isSkinnedMesh) found = true; });
    return found;
  }

  // The procedural figure (a skeleton without a mesh: BVH): a body, not sticks. Every bone gets a
  // tapered capsule from its joint to each child joint (or end site), as thick as its role says
  // (thighs, shins, feet, upper arms, forearms, hands, a trunk along the spine and across the hips
  // and shoulders, a neck) and an ellipsoid head. Roles, parts and sides come from koma's body
  // vocabulary (motion.js: figure); bones without a role get a fifth of their length. Colours as
  // koma's C++ mannequin: trunk and head ivory, left limbs vermilion, right limbs cobalt.
  // Radii are fractions of the figure's size: [at the joint, at the child].
  const LIMB = {
    left_hip: [0.060, 0.042], right_hip: [0.060, 0.042], left_knee: [0.042, 0.030], right_knee: [0.042, 0.030],
    left_ankle: [0.030, 0.022], right_ankle: [0.030, 0.022], left_toe: [0.022, 0.018], right_toe: [0.022, 0.018],
    left_shoulder: [0.032, 0.026], right_shoulder: [0.032, 0.026], left_elbow: [0.026, 0.021],
    right_elbow: [0.026, 0.021], left_hand: [0.023, 0.018], right_hand: [0.023, 0.018], neck: [0.030, 0.030],
  };
  const FIGURE_COLOURS = { body: [0.88, 0.85, 0.80], left: [0.93, 0.50, 0.38], right: [0.42, 0.60, 0.88] };

  // A capsule along +y from 0 to len, radius r0 at 0 and r1 at len (a lathe of two half circles).
  function taperedCapsule(r0, r1, len) {
    const pts = [], n = 6;
    for (let i = 0; i <= n; i++) { const a = -Math.PI / 2 + (Math.PI / 2) * i / n; pts.push(new THREE.Vector2(r0 * Math.cos(a), r0 * Math.sin(a))); }
    for (let i = 0; i <= n; i++) { const a = (Math.PI / 2) * i / n; pts.push(new THREE.Vector2(r1 * Math.cos(a), len + r1 * Math.sin(a))); }
    pts[0].x = 0; pts[pts.length - 1].x = 0;
    return new THREE.LatheGeometry(pts, 16);
  }

  function buildFigure(root, clip, figure) {
    root.updateMatrixWorld(true);
    const box = clusterBox(jointPositions(root));
    const height = Math.max(box.max.y - box.min.y, box.max.x - box.min.x, box.max.z - box.min.z, 0.1);
    // Links whose length the motion changes (e.g. a ground root that stays behind while the hips
    // walk away) get no capsule: a capsule is rigid in its parent's frame.
    const stretched = new Set();
    for (const t of (clip ? clip.tracks : [])) {
      if (!t.name.endsWith('.position')) continue;
      let lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
      for (let i = 0; i < t.values.length; i++) { lo[i % 3] = Math.min(lo[i % 3], t.values[i]); hi[i % 3] = Math.max(hi[i % 3], t.values[i]); }
      if (Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) > 0.05 * height) stretched.add(t.name.slice(0, -9));
    }
    const info = new Map();
    for (const j of (figure || [])) info.set(THREE.PropertyBinding.sanitizeNodeName(j.name), j);
    const about = (o) => info.get(o.name) || { part: 'torso', side: 0, role: '' };
    const materials = {};
    const material = (side) => {
      const key = side < 0 ? 'left' : side > 0 ? 'right' : 'body';
      if (!materials[key]) {
        const c = new THREE.Color().setRGB(...FIGURE_COLOURS[key]).convertSRGBToLinear();
        materials[key] = new THREE.MeshStandardMaterial({ color: c, roughness: 0.6, metalness: 0.0 });
      }
      return materials[key];
    };
    const up = new THREE.Vector3(0, 1, 0);
    // Where the figure faces (world, first frame): glTF characters face +z with their left at +x,
    // so forward = (left hip - right hip) x up.
    const byRole = {};
    root.traverse((o) => { const r = info.get(o.name); if (r && r.role) byRole[r.role] = o; });
    const forward = new THREE.Vector3(0, 0, 1);
    if (byRole.left_hip && byRole.right_hip) {
      const lr = byRole.left_hip.getWorldPosition(new THREE.Vector3()).sub(byRole.right_hip.getWorldPosition(new THREE.Vector3()));
      const f = lr.cross(up);
      if (f.lengthSq() > 1e-12) forward.copy(f.normalize());
    }
    // The head: an ellipsoid from the head joint up `dir` (the joint's frame) to the top of the
    // head, `len` long (the head's end site; about 0.16 of the figure when the file has none), and
    // a nose, so the face shows where the head turns.
    let heads = 0;
    function addHead(joint, dir, len) {
      const r = height * 0.075, tall = Math.min(Math.max(len, 1.6 * r), 2.6 * r) / 2;
      const mat = material(0);
      const head = new THREE.Mesh(new THREE.SphereGeometry(1, 24, 16), mat);
      head.scale.set(r * 0.9, tall, r);
      head.position.copy(dir).multiplyScalar(tall * 0.9);
      head.quaternion.setFromUnitVectors(up, dir);
      joint.add(head);
      const inv = new THREE.Quaternion();
      joint.getWorldQuaternion(inv).invert();
      const nose = new THREE.Mesh(new THREE.SphereGeometry(r * 0.22, 12, 8), mat);
      nose.position.copy(head.position).addScaledVector(forward.clone().applyQuaternion(inv), r * 0.95);
      joint.add(nose);
      heads++;
    }
    const links = [];
    root.traverse((o) => { if (o.parent && o.parent.isBone && !o.isMesh) links.push(o); });
    for (const o of links) {
      const p = about(o.parent), c = o.isBone ? about(o) : null;
      const len = o.position.length();
      if (len < 1e-6 && p.role === 'head' && o.parent.parent && o.parent.parent.isBone) {
        // An end site on the head joint itself: the head goes on up from the neck.
        const dir = o.parent.position.clone().applyQuaternion(o.parent.quaternion.clone().invert());
        if (dir.lengthSq() > 1e-12) addHead(o.parent, dir.normalize(), 0);
        continue;
      }
      if (len < 1e-6 || stretched.has(THREE.PropertyBinding.sanitizeNodeName(o.name))) continue;
      const limb = p.part === 'arms' || p.part === 'legs';
      const mat = material(limb ? p.side : 0);
      if (p.role === 'head') {
        addHead(o.parent, o.position.clone().normalize(), len);
        continue;
      }
      let radii = LIMB[p.role];
      if (!radii && p.part === 'torso') {
        const to = c ? c.part : 'torso';
        radii = to === 'arms' ? [0.062, 0.040] : to === 'legs' ? [0.066, 0.056] : to === 'head' ? [0.045, 0.032] : [0.070, 0.070];
      }
      if (!radii && p.part === 'arms') radii = [0.034, 0.032];  // a collar bone
      const r = radii ? radii.map((k) => k * height) : [Math.min(Math.max(len / 5, 0.01 * height), 0.06 * height), 0];
      // Ending a little thinner than the next bone starts keeps two round ends from fighting.
      r[1] = radii ? r[1] * 0.95 : r[0] * 0.8;
      const capsule = new THREE.Mesh(taperedCapsule(r[0], r[1], len), mat);
      capsule.quaternion.setFromUnitVectors(up, o.position.clone().normalize());
      o.parent.add(capsule);
    }
    const head = byRole.head;
    if (heads === 0 && head && head.parent && head.parent.isBone) {  // a head joint with no end site
      const dir = head.position.clone().applyQuaternion(head.quaternion.clone().invert());
      if (dir.lengthSq() > 1e-12) addHead(head, dir.normalize(), 0);
    }
    return height;
  }

  // Each scene holds the lights and the floor grid of every look; setLook shows one set.
  function makeScene() {
    const scene = new THREE.Scene();
    scene.background = STAGE.clone();
    const plain = new THREE.Group(), toon = new THREE.Group();
    plain.add(new THREE.HemisphereLight(0xdfe8ff, 0x3a3126, 0.85));
    const sun = new THREE.DirectionalLight(0xffffff, 0.9);
    sun.position.set(3, 6, 4);
    plain.add(sun);
    toon.add(new THREE.AmbientLight(TOON_AMBIENT, 1));
    const key = new THREE.DirectionalLight(TOON_KEY, 1);  // placed by keyLight() for each view
    toon.add(key);
    scene.add(plain, toon);
    scene.userData.lights = { plain: plain, toon: toon, key: key };
    return scene;
  }

  // A grid on the floor: the lowest joint height of the clip (files do not all stand on y = 0);
  // dark lines on the stage, faint rules on paper.
  function ground(scene, extent, step, center, floor) {
    const divisions = Math.max(2, Math.min(200, Math.round(extent / step)));
    const grids = {};
    for (const [name, major, minor] of [['stage', 0x3b414c, 0x2a2e36], ['paper', 0xb9b4a8, 0xd6d1c5]]) {
      const grid = new THREE.GridHelper(divisions * step, divisions, major, minor);
      grid.position.set(center.x, floor, center.z);
      scene.add(grid);
      grids[name] = grid;
    }
    scene.userData.grids = grids;
  }

  // The toon key light comes from the upper left, in front of the viewer, wherever the camera
  // orbits (as a drawing's light does, and as koma's C++ renderer lights).
  const KEY_IN_VIEW = new THREE.Vector3(-0.45, 0.65, 0.62).normalize();
  function keyLight(scene, cam) {
    const key = scene.userData.lights.key;
    key.position.copy(KEY_IN_VIEW).applyQuaternion(cam.quaternion);
    key.target.position.set(0, 0, 0);
    key.updateMatrixWorld();
    key.target.updateMatrixWorld();
  }

  // Shows `look` in a scene: background, lights and grid.
  function styleScene(scene, look) {
    const paper = look !== 'plain';
    scene.background.copy(paper ? PAPER : STAGE);
    scene.userData.lights.plain.visible = look === 'plain';
    scene.userData.lights.toon.visible = look !== 'plain';
    scene.userData.grids.stage.visible = !paper;
    scene.userData.grids.paper.visible = paper;
  }

  function prepareSide(gltf, info, gradient) {
    const root = gltf.scene;
    const procedural = !hasSkinnedMesh(root);
    if (procedural) buildFigure(root, gltf.animations[0], info.figure);
    root.traverse((o) => { if (o.isMesh) o.frustumCulled = false; });  // skinned bounds lag the pose
    const clip = gltf.animations[0];
    if (!clip) throw new Error('the ' + info.label + ' character has no animation');
    // One frame past the last key, so the last frame is never wrapped to the first by the loop.
    clip.duration = N / fps;
    const mixer = new THREE.AnimationMixer(root);
    mixer.clipAction(clip).play();
    const looks = lookMaterials(root, gradient);
    return { root, clip, mixer, procedural, looks };
  }

  function ghostOf(side, color) {
    const root = THREE.SkeletonUtils.clone(side.root);
    // Pushed back in depth: where a ghost's pose matches the character's, the character wins
    // (no speckles from two surfaces at one depth).
    const material = new THREE.MeshBasicMaterial({ color: color, transparent: true, opacity: 0.22, depthWrite: false,
      polygonOffset: true, polygonOffsetFactor: 4, polygonOffsetUnits: 4 });
    material.userData.outlineParameters = { visible: false };  // no ink lines on ghosts
    root.traverse((o) => { if (o.isMesh) { o.material = material; o.renderOrder = -1; o.frustumCulled = false; } });
    const mixer = new THREE.AnimationMixer(root);
    mixer.clipAction(side.clip).play();
    root.visible = false;
    return { root, mixer };
  }

  // ---- smears -----------------------------------------------------------------------------
  // The result's fast drawings as koma render --smear draws them (docs/keys.md): each drawing is
  // compared with the drawing before it (as drawn). Where a vertex moved more than SMEAR_PX pixels
  // (at 720 p; fully from 1.5 x) on screen, its trailing side (the smoothed normal facing away from
  // the motion) is pulled back SMEAR_LENGTH of the way toward where it was ("smear"), or copies are
  // drawn back along the motion, fading ("multiples"). The pose is baked on the CPU into plain
  // meshes that take the character's place (same materials, so the look and its ink lines apply).
  const SMEARS = ['off', 'smear', 'multiples'];
  const SMEAR_PX = 12, SMEAR_LENGTH = 0.8, SMEAR_COPIES = [0.75, 0.5, 0.25];

  function smearFromUrl() {
    const q = new URLSearchParams(window.location.search || '');
    const h = new URLSearchParams((window.location.hash || '').replace(/^#/, ''));
    const v = (q.get('smear') || h.get('smear') || '').toLowerCase();
    if (v && SMEARS.indexOf(v) < 0) console.warn('koma view: unknown smear "' + v + '" in the URL; expected ' + SMEARS.join(', '));
    return SMEARS.indexOf(v) >= 0 ? v : null;
  }

  // World positions of a mesh's vertices in the current pose (skinned on the CPU).
  function worldPositions(mesh, out) {
    const pos = mesh.geometry.getAttribute('position'), v = new THREE.Vector3();
    for (let i = 0; i < pos.count; i++) {
      v.fromBufferAttribute(pos, i);
      if (mesh.isSkinnedMesh) mesh.boneTransform(i, v);
      v.applyMatrix4(mesh.matrixWorld);
      out[3 * i] = v.x; out[3 * i + 1] = v.y; out[3 * i + 2] = v.z;
    }
  }

  // The baked stand-ins of a side's meshes: one for the smear and one per copy of the multiples.
  function makeSmear(side) {
    const parts = [];
    side.root.traverse((o) => { if (o.isMesh) parts.push({ src: o }); });
    const group = new THREE.Group();
    group.visible = false;
    const copyMaterials = new Map();
    for (const p of parts) {
      const n = p.src.geometry.getAttribute('position').count;
      p.now = new Float32Array(3 * n);
      p.before = new Float32Array(3 * n);
      const geo = new THREE.BufferGeometry();
      geo.setIndex(p.src.geometry.getIndex());
      geo.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * n), 3));
      for (const a of ['uv', 'color']) if (p.src.geometry.getAttribute(a)) geo.setAttribute(a, p.src.geometry.getAttribute(a));
      p.mesh = new THREE.Mesh(geo, p.src.material);
      p.mesh.frustumCulled = false;
      group.add(p.mesh);
      p.copies = SMEAR_COPIES.map((back, k) => {
        const g = new THREE.BufferGeometry();
        g.setIndex(geo.getIndex());
        g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * n), 3));
        const base = Array.isArray(p.src.material) ? p.src.material[0] : p.src.material;
        const key = (base.color ? base.color.getHexString() : 'fff') + k;
        if (!copyMaterials.has(key)) {
          const m = new THREE.MeshBasicMaterial({ color: base.color ? base.color.clone() : 0xffffff, transparent: true,
            opacity: 0.95 - 0.85 * back, depthWrite: false, polygonOffset: true, polygonOffsetFactor: 4, polygonOffsetUnits: 4 });
          m.userData.outlineParameters = { visible: false };
          copyMaterials.set(key, m);
        }
        const mesh = new THREE.Mesh(g, copyMaterials.get(key));
        mesh.frustumCulled = false;
        mesh.renderOrder = -1;
        group.add(mesh);
        return { back, mesh };
      });
    }
    return { parts, group, key: '' };
  }

  // Bakes drawing `now` (frame) against drawing `before` (frame) seen by `cam` in a viewport
  // `height` pixels high. Returns whether any vertex is fast (else the character is shown as is).
  function bakeSmear(side, sm, mode, now, before, cam, width, height) {
    side.mixer.setTime(timeOf(before));
    side.root.updateMatrixWorld(true);
    for (const p of sm.parts) worldPositions(p.src, p.before);
    side.mixer.setTime(timeOf(now));
    side.root.updateMatrixWorld(true);
    const threshold = SMEAR_PX * height / 720;
    const a = new THREE.Vector3(), b = new THREE.Vector3(), m = new THREE.Vector3(), nrm = new THREE.Vector3();
    let any = false;
    for (const p of sm.parts) {
      worldPositions(p.src, p.now);
      const geo = p.mesh.geometry, out = geo.getAttribute('position').array;
      out.set(p.now);
      geo.deleteAttribute('normal');
      geo.computeVertexNormals();
      hullNormals(geo);  // 'normal' smoothed (the trailing side, the ink hull), 'komaNormal' its own
      const smooth = geo.getAttribute('normal');
      const fast = new Float32Array(p.now.length / 3);
      for (let i = 0; i < fast.length; i++) {
        a.fromArray(p.now, 3 * i).project(cam);
        b.fromArray(p.before, 3 * i).project(cam);
        const px = Math.hypot((a.x - b.x) * width / 2, (a.y - b.y) * height / 2);
        fast[i] = THREE.MathUtils.smoothstep(px, threshold, 1.5 * threshold);
        if (fast[i] > 0) any = true;
      }
      for (let i = 0; i < fast.length; i++) {
        if (!(fast[i] > 0)) continue;
        m.fromArray(p.now, 3 * i).sub(b.fromArray(p.before, 3 * i));  // the motion
        if (mode === 'smear' && m.lengthSq() > 0) {
          nrm.fromBufferAttribute(smooth, i);
          const trailing = Math.min(Math.max(-2 * nrm.dot(a.copy(m).normalize()), 0), 1);
          for (let c = 0; c < 3; c++) out[3 * i + c] -= m.getComponent(c) * SMEAR_LENGTH * fast[i] * trailing;
        }
      }
      geo.getAttribute('position').needsUpdate = true;
      for (const c of p.copies) {
        const arr = c.mesh.geometry.getAttribute('position').array;
        for (let i = 0; i < fast.length; i++) {
          for (let k = 0; k < 3; k++) {
            const j = 3 * i + k;
            arr[j] = p.now[j] - (p.now[j] - p.before[j]) * c.back * fast[i];
          }
        }
        c.mesh.geometry.getAttribute('position').needsUpdate = true;
        c.mesh.visible = mode === 'multiples';
      }
    }
    return any;
  }

  // A signature of the pose at frame f: every animated local transform.
  function poseSampler(side) {
    const objects = [];
    side.root.traverse((o) => { if (o.isBone || o === side.root || (o.parent && o.parent.isBone)) objects.push(o); });
    return function (f) {
      side.mixer.setTime(timeOf(f));
      const v = [];
      for (const o of objects) {
        v.push(o.quaternion.x, o.quaternion.y, o.quaternion.z, o.quaternion.w,
          o.position.x, o.position.y, o.position.z, o.scale.x, o.scale.y, o.scale.z);
      }
      return v;
    };
  }

  // Drawings as the page really shows them: frames whose result pose differs from the frame before.
  function detectDrawings(side) {
    const sample = poseSampler(side);
    const starts = [0];
    let prev = sample(0);
    for (let f = 1; f < N; f++) {
      const cur = sample(f);
      let same = true;
      for (let i = 0; i < cur.length && same; i++) same = Math.abs(cur[i] - prev[i]) <= 1e-6;
      if (!same) starts.push(f);
      prev = cur;
    }
    return starts;
  }

  // World positions of the joints (bones and the end sites below them).
  function jointPositions(root) {
    const out = [];
    root.traverse((o) => { if (o.isBone || (o.parent && o.parent.isBone && !o.isMesh)) out.push(o.getWorldPosition(new THREE.Vector3())); });
    return out;
  }

  // The body: the joints without outliers (a ground root left at the origin, a prop joint), i.e.
  // those within twice the 75th-percentile distance of the per-axis median.
  function cluster(points) {
    if (points.length < 4) return points;
    const med = (k) => { const v = points.map((p) => p.getComponent(k)).sort((x, y) => x - y); return v[v.length >> 1]; };
    const m = new THREE.Vector3(med(0), med(1), med(2));
    const d = points.map((p) => p.distanceTo(m)).sort((x, y) => x - y);
    const limit = 2 * d[Math.floor(d.length * 0.75)] + 1e-9;
    return points.filter((p) => p.distanceTo(m) <= limit);
  }
  function clusterBox(points) { return new THREE.Box3().setFromPoints(cluster(points)); }

  function bodyAt(side, f) {
    side.mixer.setTime(timeOf(f));
    side.root.updateMatrixWorld(true);
    return cluster(jointPositions(side.root));
  }
  function centroid(points) {
    const c = new THREE.Vector3();
    for (const p of points) c.add(p);
    return c.multiplyScalar(1 / Math.max(points.length, 1));
  }

  // Where the body goes over the whole clip (up to 120 frames sampled), and its box at one frame.
  function motionBounds(side) {
    const box = new THREE.Box3();
    const step = Math.max(1, Math.floor(N / 120));
    for (let f = 0; f < N; f += step) for (const p of bodyAt(side, f)) box.expandByPoint(p);
    return box;
  }
  function poseBounds(side, f) { return new THREE.Box3().setFromPoints(bodyAt(side, f)); }



  // ---- the viewer ---------------------------------------------------------------------------
  async function start() {
    $('title').textContent = D.title;
    $('label-original').textContent = D.original.label;
    $('label-result').textContent = D.result.label;
    const canvas = $('viewports');
    // A software rasteriser (SwiftShader, llvmpipe: no GPU, e.g. a VM or a headless test) gets no
    // antialiasing and one pixel per CSS pixel, which keeps playback at a usable rate.
    const software = (() => {
      const gl = document.createElement('canvas').getContext('webgl2') || document.createElement('canvas').getContext('webgl');
      if (!gl) return false;
      const ext = gl.getExtension('WEBGL_debug_renderer_info');
      const name = String(ext ? gl.getParameter(ext.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER));
      const lose = gl.getExtension('WEBGL_lose_context');
      if (lose) lose.loseContext();
      return /swiftshader|llvmpipe|software/i.test(name);
    })();
    let renderer;
    try {
      renderer = new THREE.WebGLRenderer({ canvas: canvas, antialias: !software });
    } catch (e) {
      throw new Error('WebGL is not available in this browser (' + e.message + ')');
    }
    renderer.setPixelRatio(software ? 1 : Math.min(window.devicePixelRatio || 1, 2));
    renderer.outputEncoding = THREE.sRGBEncoding;
    renderer.setScissorTest(true);
    const gl = renderer.getContext();
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const rendererName = info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);

    const [ga, gb] = await Promise.all([loadGlb(D.original.glb), loadGlb(D.result.glb)]);
    const gradient = gradientMap(renderer.capabilities.isWebGL2);
    const A = prepareSide(ga, D.original, gradient);
    const B = prepareSide(gb, D.result, gradient);
    const outline = new THREE.OutlineEffect(renderer, { defaultColor: INK.toArray(), defaultKeepAlive: true });
    const drawings = detectDrawings(B);
    const drawingOf = new Int32Array(N);  // frame -> drawing index
    for (let d = 0, f = 0; f < N; f++) {
      while (d + 1 < drawings.length && drawings[d + 1] <= f) d++;
      drawingOf[f] = d;
    }
    const holdOf = (d) => (d + 1 < drawings.length ? drawings[d + 1] : N) - drawings[d];

    const sceneA = makeScene();
    const sceneB = makeScene();
    sceneA.add(A.root);
    sceneB.add(B.root);
    const ghostPrev = ghostOf(B, 0x5aa0f2);
    const ghostNext = ghostOf(B, 0x7be08a);
    sceneB.add(ghostPrev.root, ghostNext.root);
    const smear = makeSmear(B);
    sceneB.add(smear.group);

    // Framing. A clip that travels (its path is longer than the character is tall) starts with
    // "follow": each viewport's camera keeps its own character's root in view, with orbit and zoom
    // linked; the result's camera moves only when a new drawing starts, so holds stay still.
    // Otherwise the whole path is framed with one fixed camera.
    const bounds = motionBounds(A).union(motionBounds(B));
    const size = bounds.getSize(new THREE.Vector3());
    const center = bounds.getCenter(new THREE.Vector3());
    const pose = poseBounds(A, 0);
    if (!A.procedural) {
      // A skinned character reaches past its joints (the top of the head, the tail): add its mesh.
      A.mixer.setTime(timeOf(0));
      A.root.updateMatrixWorld(true);
      const mesh = new THREE.Box3().setFromObject(A.root);
      if (!mesh.isEmpty() && mesh.getSize(new THREE.Vector3()).length() < 4 * pose.getSize(new THREE.Vector3()).length()) {
        pose.union(mesh);
        bounds.union(mesh);
      }
    }
    const poseSize = pose.getSize(new THREE.Vector3());
    const height = Math.max(poseSize.x, poseSize.y, poseSize.z, 1e-3);
    const travels = Math.max(size.x - poseSize.x, size.z - poseSize.z) > 1.5 * height;
    const extent = Math.max(size.x, size.z) + 4 * height;
    const step = Math.pow(10, Math.floor(Math.log10(height))) / 2;
    ground(sceneA, extent, step, center, bounds.min.y);
    ground(sceneB, extent, step, center, bounds.min.y);
    const camera = new THREE.PerspectiveCamera(35, 1, height / 100, extent * 20);
    const frameBox = travels ? pose : bounds;
    const frameCenter = frameBox.getCenter(new THREE.Vector3());
    const radius = Math.max(frameBox.getSize(new THREE.Vector3()).length(), height) * 0.5;
    // Following, the pose changes under a fixed framing: leave room for it.
    const distance = radius / Math.sin(THREE.MathUtils.degToRad(35 / 2)) * (travels ? 1.7 : 1.05);
    const dir = new THREE.Vector3(0.55, 0.32, 1).normalize();
    camera.position.copy(frameCenter).addScaledVector(dir, distance);
    const controls = new THREE.OrbitControls(camera, canvas);
    controls.target.copy(frameCenter);
    controls.enableDamping = false;
    controls.update();
    const camA = camera.clone(), camB = camera.clone();
    const rootA0 = centroid(bodyAt(A, 0)), rootB0 = centroid(bodyAt(B, 0));
    $('follow').checked = travels;

    // ---- state and drawing ----
    const state = { frame: 0, playing: false, clock: 0, speed: 1, loop: true, onion: false, follow: travels,
      dirty: true, rendered: 0, renderMs: 0, look: 'toon', linePx: 0, smear: 'off', smeared: false };

    // The look: the URL's ?look= (or #look=), else koma view --look, else toon.
    function setLook(look) {
      if (LOOKS.indexOf(look) < 0) throw new Error('unknown look "' + look + '": expected ' + LOOKS.join(', '));
      state.look = look;
      A.looks.apply(look);
      B.looks.apply(look);
      styleScene(sceneA, look);
      styleScene(sceneB, look);
      $('look').value = look;
      document.documentElement.dataset.komaLook = look;
      state.dirty = true;
    }
    setLook(lookFromUrl() || (LOOKS.indexOf(D.look) >= 0 ? D.look : 'toon'));

    // Smears: the URL's ?smear= (or #smear=), else koma view --smear / --multiples, else off.
    function setSmear(mode) {
      if (SMEARS.indexOf(mode) < 0) throw new Error('unknown smear "' + mode + '": expected ' + SMEARS.join(', '));
      state.smear = mode;
      smear.key = '';
      $('smear').value = mode;
      document.documentElement.dataset.komaSmear = mode;
      state.dirty = true;
    }
    setSmear(smearFromUrl() || (SMEARS.indexOf(D.smear) >= 0 ? D.smear : 'off'));

    // Ink lines scale with the character on screen: 1/150 of its height, 1.5 .. 3.5 px. OutlineEffect's
    // thickness is in clip space (x w), so it is pixels / (half the viewport height).
    function updateLineWidth(h) {
      const d = Math.max(camera.position.distanceTo(controls.target), 1e-9);
      const onScreen = height / (2 * d * Math.tan(THREE.MathUtils.degToRad(camera.fov / 2))) * h;
      state.linePx = Math.min(Math.max(onScreen / 150, 1.5), 3.5);
      const t = state.linePx / Math.max(h / 2, 1);
      A.looks.setThickness(t);
      B.looks.setThickness(t);
    }

    function resize() {
      const w = canvas.clientWidth, h = canvas.clientHeight;
      const pr = renderer.getPixelRatio();
      if (canvas.width !== Math.floor(w * pr) || canvas.height !== Math.floor(h * pr)) {
        renderer.setSize(w, h, false);
        state.dirty = true;
      }
      camera.aspect = (w / 2) / Math.max(h, 1);
      camera.updateProjectionMatrix();
    }

    // A viewport's camera: the shared one, moved with its character's root when following.
    function place(cam, side, root0) {
      cam.copy(camera);
      if (!state.follow) return;
      side.root.updateMatrixWorld(true);
      const delta = centroid(cluster(jointPositions(side.root))).sub(root0);
      delta.y = 0;
      cam.position.add(delta);
      cam.updateMatrixWorld(true);
    }

    function applyFrame() {
      const f = state.frame;
      A.mixer.setTime(timeOf(f));
      B.mixer.setTime(timeOf(f));
      const d = drawingOf[f];
      ghostPrev.root.visible = state.onion && d > 0;
      ghostNext.root.visible = state.onion && d + 1 < drawings.length;
      if (ghostPrev.root.visible) ghostPrev.mixer.setTime(timeOf(drawings[d - 1]));
      if (ghostNext.root.visible) ghostNext.mixer.setTime(timeOf(drawings[d + 1]));
    }

    // The result's drawing, smeared when it is fast as drawn (baked again when the drawing, the
    // camera or the viewport changes).
    function applySmear(width, height) {
      const f = state.frame, d = drawingOf[f];
      let on = false;
      if (state.smear !== 'off' && d > 0 && B.root.visible) {
        camB.updateMatrixWorld(true);
        const key = [state.smear, d, width, height, state.look].concat(camB.matrixWorld.elements, camB.projectionMatrix.elements).join(',');
        if (key !== smear.key) {
          smear.any = bakeSmear(B, smear, state.smear, drawings[d], drawings[d - 1], camB, width, height);
          smear.key = key;
          for (const p of smear.parts) p.mesh.material = p.src.material;
        }
        B.mixer.setTime(timeOf(f));
        on = smear.any;
      }
      smear.group.visible = on;
      for (const p of smear.parts) p.src.visible = !on;
      state.smeared = on;
    }

    function render() {
      const t0 = performance.now();
      resize();
      applyFrame();
      const w = canvas.clientWidth, h = canvas.clientHeight, half = Math.floor(w / 2);
      renderer.setViewport(0, 0, half, h);
      renderer.setScissor(0, 0, half, h);
      place(camA, A, rootA0);
      place(camB, B, rootB0);
      applySmear(w - half, h);
      updateLineWidth(h);
      keyLight(sceneA, camA);
      keyLight(sceneB, camB);
      const draw = state.look === 'toon' ? outline : renderer;
      draw.render(sceneA, camA);
      renderer.setViewport(half, 0, w - half, h);
      renderer.setScissor(half, 0, w - half, h);
      draw.render(sceneB, camB);
      state.rendered++;
      updateReadout();
      state.dirty = false;
      state.renderMs += performance.now() - t0;
    }

    // ---- readout, timeline, exposure sheet ----
    $('ro-frames').textContent = ' / ' + (N - 1);
    $('ro-drawings').textContent = ' / ' + drawings.length;
    $('summary').textContent = N + ' frames at ' + (+fps.toFixed(3)) + ' fps · ' + drawings.length + ' drawings' +
      (D.source ? ' · from ' + D.source : '') + (A.procedural ? ' · procedural figure' : '');

    const tbody = $('xsheet').tBodies[0];
    const rows = [];
    {
      const frag = document.createDocumentFragment();
      for (let f = 0; f < N; f++) {
        const d = drawingOf[f];
        const tr = document.createElement('tr');
        const start = drawings[d] === f;
        if (start) tr.className = 'key';
        tr.innerHTML = '<td>' + f + '</td><td class="d' + (start ? '' : ' cont') + '">' + (start ? d + 1 : '|') +
          '</td><td>' + (start ? holdOf(d) : '') + '</td>';
        tr.addEventListener('click', () => seek(f));
        frag.appendChild(tr);
        rows.push(tr);
      }
      tbody.appendChild(frag);
    }
    let nowRow = null;
    const xscroll = $('xsheet-scroll');

    function updateReadout() {
      const f = state.frame, d = drawingOf[f];
      $('ro-frame').textContent = f;
      $('ro-drawing').textContent = d + 1;
      $('ro-hold').textContent = holdOf(d);
      $('ro-hold-pos').textContent = ' (' + (f - drawings[d] + 1) + ' of ' + holdOf(d) + ')';
      $('ro-time').textContent = (f / fps).toFixed(3);
      $('btn-play').innerHTML = state.playing ? '&#x275A;&#x275A;' : '&#x25B6;';
      if (nowRow !== rows[f]) {
        if (nowRow) nowRow.classList.remove('now');
        nowRow = rows[f];
        nowRow.classList.add('now');
        const top = nowRow.offsetTop, bottom = top + nowRow.offsetHeight;
        if (top < xscroll.scrollTop + 24 || bottom > xscroll.scrollTop + xscroll.clientHeight) {
          xscroll.scrollTop = Math.max(0, top - xscroll.clientHeight / 3);
        }
      }
      drawTimeline();
    }

    const tl = $('timeline');
    function drawTimeline() {
      const w = tl.clientWidth, h = tl.clientHeight, pr = Math.min(window.devicePixelRatio || 1, 2);
      if (tl.width !== Math.floor(w * pr) || tl.height !== Math.floor(h * pr)) {
        tl.width = Math.floor(w * pr);
        tl.height = Math.floor(h * pr);
      }
      const g = tl.getContext('2d');
      g.setTransform(pr, 0, 0, pr, 0, 0);
      g.clearRect(0, 0, w, h);
      const x0 = 10, x1 = w - 10, xf = (f) => x0 + (x1 - x0) * (N > 1 ? f / (N - 1) : 0);
      // Holds as alternating bands, each drawing's first frame as a tick.
      for (let d = 0; d < drawings.length; d++) {
        const a = xf(drawings[d]), b = d + 1 < drawings.length ? xf(drawings[d + 1]) : x1;
        g.fillStyle = d % 2 ? '#2b2f37' : '#323742';
        g.fillRect(a, 14, Math.max(b - a, 1), 22);
        g.fillStyle = '#f2a65a';
        g.fillRect(Math.round(a) - 0.5, 10, 1.5, 30);
      }
      // Frame numbers.
      g.fillStyle = '#8a919e';
      g.font = '10px system-ui, sans-serif';
      g.textAlign = 'center';
      const every = niceStep(N / Math.max(1, (x1 - x0) / 60));
      for (let f = 0; f < N; f += every) g.fillText(String(f), xf(f), 54);
      // The playhead.
      const x = xf(state.frame);
      g.fillStyle = '#ffffff';
      g.fillRect(Math.round(x) - 1, 4, 2, 40);
      g.beginPath();
      g.moveTo(x - 5, 2); g.lineTo(x + 5, 2); g.lineTo(x, 8); g.closePath(); g.fill();
    }
    function niceStep(raw) {
      const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
      for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
      return 10 * p;
    }
    function frameAt(ev) {
      const r = tl.getBoundingClientRect();
      const t = (ev.clientX - r.left - 10) / Math.max(r.width - 20, 1);
      return Math.round(Math.min(Math.max(t, 0), 1) * (N - 1));
    }
    let scrubbing = false;
    tl.addEventListener('pointerdown', (ev) => { scrubbing = true; tl.setPointerCapture(ev.pointerId); pause(); seek(frameAt(ev)); });
    tl.addEventListener('pointermove', (ev) => { if (scrubbing) seek(frameAt(ev)); });
    tl.addEventListener('pointerup', () => { scrubbing = false; });

    drawCurve(drawings.length);

    // ---- transport ----
    function seek(f) {
      state.frame = Math.min(Math.max(Math.round(f), 0), N - 1);
      state.clock = state.frame / fps;
      state.dirty = true;
    }
    function play() {
      if (state.frame >= N - 1 && !state.loop) seek(0);
      state.playing = true;
      rebase();
      state.dirty = true;
    }
    function pause() { state.playing = false; state.dirty = true; }
    // The clock is computed, never accumulated: clock = base + (now - start) * speed.
    function rebase() { state.base = state.clock; state.start = performance.now(); }
    function toggle() { if (state.playing) pause(); else play(); }
    function stepDrawing(delta) {
      pause();
      const d = drawingOf[state.frame];
      if (delta < 0) seek(state.frame > drawings[d] ? drawings[d] : drawings[Math.max(d - 1, 0)]);
      else seek(drawings[Math.min(d + 1, drawings.length - 1)]);
    }
    const speeds = [0.25, 0.5, 1, 2];
    function setSpeed(s) { clockNow(performance.now()); rebase(); state.speed = s; $('speed').value = String(s); }
    function clockNow(now) {
      if (state.playing) state.clock = state.base + Math.max(now - state.start, 0) / 1000 * state.speed;
      return state.clock;
    }
    function copyFrame() {
      const text = String(state.frame);
      const done = () => { $('toast').textContent = 'copied frame ' + text; setTimeout(() => { $('toast').textContent = ''; }, 1500); };
      const fallback = () => {
        const ta = document.createElement('textarea');
        ta.value = text;
        document.body.appendChild(ta);
        ta.select();
        try { document.execCommand('copy'); } catch (e) { /* the toast still shows the number */ }
        ta.remove();
        done();
      };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fallback);
      else fallback();
    }

    $('btn-play').addEventListener('click', toggle);
    $('btn-prev').addEventListener('click', () => { pause(); seek(state.frame - 1); });
    $('btn-next').addEventListener('click', () => { pause(); seek(state.frame + 1); });
    $('btn-prev-drawing').addEventListener('click', () => stepDrawing(-1));
    $('btn-next-drawing').addEventListener('click', () => stepDrawing(1));
    $('btn-first').addEventListener('click', () => { pause(); seek(0); });
    $('btn-last').addEventListener('click', () => { pause(); seek(N - 1); });
    $('btn-copy').addEventListener('click', copyFrame);
    $('speed').addEventListener('change', (e) => setSpeed(parseFloat(e.target.value)));
    $('loop').addEventListener('change', (e) => { state.loop = e.target.checked; });
    $('onion').addEventListener('change', (e) => { state.onion = e.target.checked; state.dirty = true; });
    $('follow').addEventListener('change', (e) => { state.follow = e.target.checked; state.dirty = true; });
    $('look').addEventListener('change', (e) => setLook(e.target.value));
    $('smear').addEventListener('change', (e) => setSmear(e.target.value));
    controls.addEventListener('change', () => { state.dirty = true; });
    window.addEventListener('resize', () => { state.dirty = true; });
    document.addEventListener('keydown', (e) => {
      if (e.target && (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') && e.key !== ' ') return;
      let handled = true;
      switch (e.key) {
        case ' ': toggle(); break;
        case 'ArrowLeft': pause(); seek(state.frame - 1); break;
        case 'ArrowRight': pause(); seek(state.frame + 1); break;
        case 'ArrowUp': stepDrawing(-1); break;
        case 'ArrowDown': stepDrawing(1); break;
        case 'Home': pause(); seek(0); break;
        case 'End': pause(); seek(N - 1); break;
        case '[': setSpeed(speeds[Math.max(speeds.indexOf(state.speed) - 1, 0)]); break;
        case ']': setSpeed(speeds[Math.min(speeds.indexOf(state.speed) + 1, speeds.length - 1)]); break;
        case 'l': case 'L': $('loop').click(); break;
        case 'o': case 'O': $('onion').click(); break;
        case 'f': case 'F': $('follow').click(); break;
        case 't': case 'T': setLook(LOOKS[(LOOKS.indexOf(state.look) + 1) % LOOKS.length]); break;
        case 's': case 'S': setSmear(SMEARS[(SMEARS.indexOf(state.smear) + 1) % SMEARS.length]); break;
        case 'c': case 'C': copyFrame(); break;
        default: handled = false;
      }
      if (handled) e.preventDefault();
    });

    // One clock for both viewports: real time times speed, shown at the clip's own frame rate.
    function tick(now) {
      if (state.playing) {
        clockNow(performance.now());
        let f = Math.floor(state.clock * fps + 1e-9);
        if (f >= N) {
          if (state.loop) {
            state.clock %= N / fps;
            rebase();
            f = Math.min(Math.floor(state.clock * fps + 1e-9), N - 1);
          } else { f = N - 1; state.playing = false; }
        }
        if (f !== state.frame) { state.frame = f; state.dirty = true; }
        stats.frames++;
      }
      if (state.dirty) render();
      requestAnimationFrame(tick);
    }
    const stats = { frames: 0 };

    // ---- test hooks ----
    window.koma = {
      frames: N, fps: fps, drawings: drawings.slice(),
      framing: { path: size.toArray(), pose: poseSize.toArray(), follow: travels },
      frame: () => state.frame,
      seek: (f) => { pause(); seek(f); render(); },
      play: play, pause: pause,
      setOnion: (on) => { $('onion').checked = on; state.onion = on; render(); },
      setFollow: (on) => { $('follow').checked = on; state.follow = on; render(); },
      setCharactersVisible: (on) => { A.root.visible = on; B.root.visible = on; render(); },
      setLook: (look) => { setLook(look); render(); },
      setSmear: (mode) => { setSmear(mode); render(); },
      smear: () => state.smear,
      smeared: () => state.smeared,
      look: () => state.look,
      lineWidth: () => state.linePx,
      // Plays for `ms` of real time and reports the animation-frame rate and how far the clock went.
      measure: (ms) => new Promise((resolve) => {
        seek(0); const f0 = state.rendered; const ms0 = state.renderMs; const t0 = performance.now();
        stats.frames = 0; play();
        setTimeout(() => {
          const t1 = performance.now();
          const frame = Math.floor(clockNow(t1) * fps + 1e-9) % N;
          const shown = state.frame;
          pause();
          resolve({ seconds: (t1 - t0) / 1000, renders: state.rendered - f0, ticks: stats.frames,
            fps: (state.rendered - f0) / ((t1 - t0) / 1000), clipFrame: frame, shownFrame: shown, clipFps: fps,
            msPerRender: (state.renderMs - ms0) / Math.max(state.rendered - f0, 1),
            renderer: rendererName });
        }, ms);
      }),
    };

    body.dataset.komaDrawings = String(drawings.length);
    render();
    $('loading').remove();
    requestAnimationFrame(() => {
      requestAnimationFrame(() => { body.dataset.komaReady = 'true'; });
    });
    requestAnimationFrame(tick);
  }

  // ---- error curve (SVG) ----
  function drawCurve(shown) {
    const svg = $('curve');
    const pts = (D.curve || []).filter((p) => p[0] > 0 && p[1] >= 0);
    const note = $('curve-note');
    if (pts.length < 2) {
      svg.style.display = 'none';
      note.textContent = 'No key selection report was given: no error curve. ' + shown + ' drawings found in the result.';
      return;
    }
    const NS = 'http://www.w3.org/2000/svg';
    const el = (name, attrs, text) => {
      const e = document.createElementNS(NS, name);
      for (const k in attrs) e.setAttribute(k, attrs[k]);
      if (text != null) e.textContent = text;
      svg.appendChild(e);
      return e;
    };
    const W = 460, H = 260, L = 56, R = 12, T = 14, B = 36;
    const cm2 = pts.map((p) => [p[0], p[1] * 1e4]);
    const positive = cm2.filter((p) => p[1] > 0).map((p) => p[1]);
    const kmin = cm2[0][0], kmax = cm2[cm2.length - 1][0];
    const emax = Math.max(...cm2.map((p) => p[1]));
    const emin = positive.length ? Math.min(...positive) : emax;
    const log = emax > 0 && emin > 0 && emax / emin > 50;
    const floor = log ? emin : 0;
    const yv = (e) => (log ? Math.log10(Math.max(e, floor)) : e);
    const y0 = yv(floor), y1 = yv(emax) === y0 ? y0 + 1 : yv(emax);
    const X = (k) => L + (W - L - R) * (kmax > kmin ? (k - kmin) / (kmax - kmin) : 0.5);
    const Y = (e) => T + (H - T - B) * (1 - (yv(e) - y0) / (y1 - y0));
    // Grid and axes.
    if (log) {
      for (let p = Math.ceil(y0); p <= Math.floor(y1); p++) {
        el('line', { class: 'grid', x1: L, x2: W - R, y1: Y(Math.pow(10, p)), y2: Y(Math.pow(10, p)) });
        el('text', { class: 'tick', x: L - 6, y: Y(Math.pow(10, p)) + 3, 'text-anchor': 'end' }, '1e' + p);
      }
    } else {
      for (let i = 0; i <= 4; i++) {
        const e = emax * i / 4;
        el('line', { class: 'grid', x1: L, x2: W - R, y1: Y(e), y2: Y(e) });
        el('text', { class: 'tick', x: L - 6, y: Y(e) + 3, 'text-anchor': 'end' }, e.toPrecision(2));
      }
    }
    el('line', { class: 'axis', x1: L, x2: L, y1: T, y2: H - B });
    el('line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B });
    for (let i = 0; i <= 5; i++) {
      const k = Math.round(kmin + (kmax - kmin) * i / 5);
      el('text', { class: 'tick', x: X(k), y: H - B + 14, 'text-anchor': 'middle' }, String(k));
    }
    el('text', { class: 'title', x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle' }, 'number of drawings (key poses)');
    el('text', { class: 'title', x: 12, y: (T + H - B) / 2, 'text-anchor': 'middle',
      transform: 'rotate(-90 12 ' + (T + H - B) / 2 + ')' }, 'mean squared error (cm²)' + (log ? ', log' : ''));
    el('path', { class: 'line', d: cm2.map((p, i) => (i ? 'L' : 'M') + X(p[0]).toFixed(1) + ' ' + Y(p[1]).toFixed(1)).join(' ') });
    const n = D.chosen_keys || shown;
    const chosen = cm2.find((p) => p[0] === n);
    if (chosen) {
      el('line', { class: 'chosen', x1: X(n), x2: X(n), y1: T, y2: H - B });
      el('circle', { class: 'dot', cx: X(n), cy: Y(chosen[1]), r: 4 });
      const right = X(n) > W * 0.6;
      el('text', { class: 'label', x: X(n) + (right ? -8 : 8), y: T + 12, 'text-anchor': right ? 'end' : 'start' },
        'n = ' + n + ': ' + chosen[1].toPrecision(3) + ' cm²');
    }
    note.textContent = 'The optimal error for every number of drawings (from ' + (D.source || 'the report') +
      '); the dashed line is the chosen n.';
  }

  start().catch((e) => fail(e && e.message ? e.message : String(e)));
})();
