"""The Kung-Fu Zoo arena's browser side: the animation of a flick and the gestures, as ``CustomJS`` code.

:mod:`apps.zoo.arena` attaches them to its figure; they are kept here, apart from the Python that builds the
figure and follows the session. A finished drag is written as a click is (:data:`apps.gestures.GESTURE_JS`).
"""

from apps.gestures import GESTURE_JS

ANIMATE_JS = """
const get = (s, k) => (s.data instanceof Map ? s.data.get(k) : s.data[k]);
const t = get(frames, 't');
if (!t || t.length == 0) { return; }
const n = get(text, 'x').length;
if (n == 0) { return; }
const F = Math.round(t.length / n);
const fx = get(frames, 'x'), fy = get(frames, 'y'), fz = get(frames, 'z');
const fq = ['qw', 'qx', 'qy', 'qz'].map((k) => get(frames, k));
const fc = get(frames, 'fill'), fs = get(frames, 'shown'), fh = get(frames, 'hatch');
const seq = get(frames, 'seq')[0], rate = get(frames, 'rate')[0];
const XS = get(anim, 'xs'), YS = get(anim, 'ys'), FILL = get(anim, 'fill'), AL = get(anim, 'alpha');
const HA = get(anim, 'halpha');
const TX = get(text, 'x'), TY = get(text, 'y'), TF = get(text, 'face'), TA = get(text, 'alpha');
const h = edge / 2;
function shade(c, up) {  // as adapter.shade: 100% facing up to 55% on its side
  const k = 0.55 + 0.45 * Math.max(0, Math.min(1, up));
  const hex = (i) => Math.round(parseInt(c.substr(i, 2), 16) * k).toString(16).padStart(2, '0');
  return '#' + hex(1) + hex(3) + hex(5);
}
function cube(x, y, w, a, b, c) {  // as adapter.cube_faces: the faces seen from above, most nearly up first
  const R = [[1 - 2 * (b * b + c * c), 2 * (a * b - c * w), 2 * (a * c + b * w)],
             [2 * (a * b + c * w), 1 - 2 * (a * a + c * c), 2 * (b * c - a * w)],
             [2 * (a * c - b * w), 2 * (b * c + a * w), 1 - 2 * (a * a + b * b)]];
  const seen = [];
  for (const [axis, sign, letter] of faces) {
    const up = sign * R[2][axis];
    if (up <= minUp) { continue; }
    const u = (axis + 1) % 3, v = (axis + 2) % 3;
    const cx = x + sign * R[0][axis] * h, cy = y + sign * R[1][axis] * h;
    const ux = R[0][u] * h, uy = R[1][u] * h, vx = R[0][v] * h, vy = R[1][v] * h;
    seen.push({up: up, letter: letter, cx: cx, cy: cy, xs: [cx + ux + vx, cx - ux + vx, cx - ux - vx, cx + ux - vx],
               ys: [cy + uy + vy, cy - uy + vy, cy - uy - vy, cy + uy - vy]});
  }
  seen.sort((p, q) => q.up - p.up);
  return seen;
}
window.dojoZooCube = cube;  // the browser tests compare it with adapter.cube_faces
function project(i, x, y, w, a, b, c, shown, hatch, fill) {
  const seen = cube(x, y, w, a, b, c);
  for (let j = 0; j < 3; j++) {
    const r = i * 3 + j, f = seen[j];
    if (f) { XS[r] = f.xs; YS[r] = f.ys; FILL[r] = shade(fill, f.up); AL[r] = shown; HA[r] = 0.8 * shown * hatch; }
    else { AL[r] = 0; HA[r] = 0; }
  }
  if (seen.length) { TX[i] = seen[0].cx; TY[i] = seen[0].cy; TF[i] = seen[0].letter; }
  TA[i] = shown;
}
const dur = t[(F - 1) * n];
// A browser that draws fewer than 20 frames a second plays the flick slower instead of skipping it: the clock
// moves on at most 50 ms a frame, so even a loaded tab shows the dice on their way (0.4 s: 8 frames or more).
const maxStep = 50;
const run = {seq: seq, drawn: 0, start: null, last: null, el: 0};
window.dojoZooRun = run;  // a newer flick's run stops this one
function step(now) {
  if (window.dojoZooRun !== run) { return; }
  if (run.start === null) {  // the first frame shows the start; the clock runs from the next one
    run.start = now;
    run.last = now;
    requestAnimationFrame(step);
    return;
  }
  run.el += rate * Math.min(now - run.last, maxStep) / 1000;
  const el = run.el;
  let f = 0;
  while (f < F - 1 && t[(f + 1) * n] <= el) { f++; }
  const g = Math.min(f + 1, F - 1);
  const t0 = t[f * n], t1 = t[g * n];
  const u = t1 > t0 ? Math.min(1, Math.max(0, (el - t0) / (t1 - t0))) : 0;
  for (let i = 0; i < n; i++) {
    const a = f * n + i, b = g * n + i, k = u < 0.5 ? a : b;
    const dot = fq.reduce((s, q) => s + q[a] * q[b], 0), sb = dot < 0 ? -1 : 1;  // the short way round
    const q = fq.map((c) => c[a] + (sb * c[b] - c[a]) * u);
    const norm = Math.hypot(q[0], q[1], q[2], q[3]) || 1;
    project(i, fx[a] + (fx[b] - fx[a]) * u, fy[a] + (fy[b] - fy[a]) * u, q[0] / norm, q[1] / norm, q[2] / norm,
            q[3] / norm, fs[k] > 0 ? 1.0 : 0.0, fh[k] > 0 ? 1.0 : 0.0, fc[k]);  // the hatch moves with its die
  }
  anim.change.emit();
  text.change.emit();
  run.drawn += 1;
  run.last = now;
  if (el < dur) {
    requestAnimationFrame(step);
  } else {
    const span = (run.last - run.start) / 1000;
    done.data = {seq: [run.seq], fps: [(run.drawn - 1) / Math.max(span, 1e-3)], drawn: [run.drawn], seconds: [el],
                 wall: [span]};
  }
}
requestAnimationFrame(step);
"""

DRAG_START_JS = "window.dojoZooDrag = [cb_obj.x, cb_obj.y];"
DRAG_MOVE_JS = """
const get = (s, k) => (s.data instanceof Map ? s.data.get(k) : s.data[k]);
const st = window.dojoZooDrag, lx = get(launch, 'x');
if (!st || !lx || lx.length == 0 || get(launch, 'preview')[0] == 0) { return; }
const x0 = lx[0], y0 = get(launch, 'y')[0];
get(drag, 'x0')[0] = x0; get(drag, 'y0')[0] = y0;
get(drag, 'x1')[0] = x0 + cb_obj.x - st[0]; get(drag, 'y1')[0] = y0 + cb_obj.y - st[1];
drag.change.emit();
"""
DRAG_END_JS = """
const get = (s, k) => (s.data instanceof Map ? s.data.get(k) : s.data[k]);
for (const k of ['x0', 'y0', 'x1', 'y1']) { get(drag, k)[0] = NaN; }
drag.change.emit();
""" + GESTURE_JS + "window.dojoZooDrag = null;\n"
