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
  if (typeof THREE === 'undefined' || !THREE.GLTFLoader || !THREE.OrbitControls || !THREE.SkeletonUtils) {
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

  // ---- scenes ---------------------------------------------------------------------------
  function hasSkinnedMesh(root) {
    let found = false;
    root.traverse((o) => { if (o.isSkinnedMesh) found = true; });
    return found;
  }

  // The procedural figure: a capsule from every joint to each child joint (or end site), a ball on
  // every joint, a larger one on the head. Sized from the figure's height.
  function buildFigure(root, clip, color) {
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
    const radius = height * 0.016;
    const material = new THREE.MeshStandardMaterial({ color: color, roughness: 0.55, metalness: 0.05 });
    const ballGeometry = new THREE.SphereGeometry(radius * 1.25, 16, 12);
    const bones = [];
    root.traverse((o) => { if (o.isBone || (o.parent && o.parent.isBone)) bones.push(o); });
    const up = new THREE.Vector3(0, 1, 0);
    for (const o of bones) {
      if (!o.parent || !(o.parent.isBone)) continue;
      const len = o.position.length();
      if (len < 1e-6 || stretched.has(THREE.PropertyBinding.sanitizeNodeName(o.name))) {
        if (o.isBone) o.add(new THREE.Mesh(ballGeometry, material));
        continue;
      }
      if (/head/i.test(o.parent.name) && !o.isBone) {
        // The head's end site: one sphere between the head joint and the top of the head.
        const head = new THREE.Mesh(new THREE.SphereGeometry(Math.max(len * 0.55, radius * 2.5), 24, 18), material);
        head.position.copy(o.position).multiplyScalar(0.5);
        o.parent.add(head);
        continue;
      }
      const geometry = new THREE.CapsuleGeometry(radius, Math.max(len - 2 * radius, 1e-4), 4, 12);
      const capsule = new THREE.Mesh(geometry, material);
      capsule.position.copy(o.position).multiplyScalar(0.5);
      capsule.quaternion.setFromUnitVectors(up, o.position.clone().normalize());
      o.parent.add(capsule);
      o.add(new THREE.Mesh(ballGeometry, material));
    }
    return height;
  }

  function makeScene() {
    const scene = new THREE.Scene();
    scene.background = new THREE.Color(0x1b1e24);
    scene.add(new THREE.HemisphereLight(0xdfe8ff, 0x3a3126, 0.85));
    const sun = new THREE.DirectionalLight(0xffffff, 0.9);
    sun.position.set(3, 6, 4);
    scene.add(sun);
    return scene;
  }

  // A grid on the floor: the lowest joint height of the clip (files do not all stand on y = 0).
  function ground(extent, step, center, floor) {
    const divisions = Math.max(2, Math.min(200, Math.round(extent / step)));
    const grid = new THREE.GridHelper(divisions * step, divisions, 0x3b414c, 0x2a2e36);
    grid.position.set(center.x, floor, center.z);
    return grid;
  }

  function prepareSide(gltf, info, color) {
    const root = gltf.scene;
    const procedural = !hasSkinnedMesh(root);
    if (procedural) buildFigure(root, gltf.animations[0], color);
    root.traverse((o) => { if (o.isMesh) o.frustumCulled = false; });  // skinned bounds lag the pose
    const clip = gltf.animations[0];
    if (!clip) throw new Error('the ' + info.label + ' character has no animation');
    // One frame past the last key, so the last frame is never wrapped to the first by the loop.
    clip.duration = N / fps;
    const mixer = new THREE.AnimationMixer(root);
    mixer.clipAction(clip).play();
    return { root, clip, mixer, procedural };
  }

  function ghostOf(side, color) {
    const root = THREE.SkeletonUtils.clone(side.root);
    const material = new THREE.MeshBasicMaterial({ color: color, transparent: true, opacity: 0.22, depthWrite: false });
    root.traverse((o) => { if (o.isMesh) { o.material = material; o.renderOrder = -1; o.frustumCulled = false; } });
    const mixer = new THREE.AnimationMixer(root);
    mixer.clipAction(side.clip).play();
    root.visible = false;
    return { root, mixer };
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
    const A = prepareSide(ga, D.original, 0x8fb3e0);
    const B = prepareSide(gb, D.result, 0xf2a65a);
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
    sceneA.add(ground(extent, step, center, bounds.min.y));
    sceneB.add(ground(extent, step, center, bounds.min.y));
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
      dirty: true, rendered: 0, renderMs: 0 };

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

    function render() {
      const t0 = performance.now();
      resize();
      applyFrame();
      const w = canvas.clientWidth, h = canvas.clientHeight, half = Math.floor(w / 2);
      renderer.setViewport(0, 0, half, h);
      renderer.setScissor(0, 0, half, h);
      place(camA, A, rootA0);
      place(camB, B, rootB0);
      renderer.render(sceneA, camA);
      renderer.setViewport(half, 0, w - half, h);
      renderer.setScissor(half, 0, w - half, h);
      renderer.render(sceneB, camB);
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
