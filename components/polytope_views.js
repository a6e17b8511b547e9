// The polytope instrument's views (Section 6.1, Figs. 2-3, Appendix A), for components/polytope.js: the
// PVN the server trained, evaluated in the browser (pvnviz.polytope.tiny_mlp.TinyMLP's forward pass and input gradient:
// the learned field and the learned ascent; tests/test_browser_polytope_js.py checks it against learned_view),
// everything the four figures show for one set of controls (with mdp.js's exact math), and the figures, built
// from the server's templates (pvnviz.figures) with every trace that has a role (`meta`) recomputed.
// Concatenated after mdp.js, before polytope.js (ui/polytope_instrument.py's MODULES).

const STALE = "PVN retraining…";
const MDP_KEYS = ["gamma", "d0", "r00", "r01", "r10", "r11", "p00", "p01", "p10", "p11"];
const PATHS = [
  ["exact ascent", "exact"],
  ["learned ascent", "learned"],
];

// ---- the PVN (TinyMLP: x -> relu(x W1 + b1) W2 + b2, W1 (2, H), W2 (H, 2), row-major) --------------------------

function pvnGradient(net, d0, x1, x2, out) {
  // d(d0 . PVN(x))/dx (TinyMLP.input_gradient with output_weights = d0).
  const { W1, b1, W2, hidden: H } = net;
  let g1 = 0;
  let g2 = 0;
  for (let h = 0; h < H; h++) {
    if (x1 * W1[h] + x2 * W1[H + h] + b1[h] > 0) {
      const w = W2[2 * h] * d0[0] + W2[2 * h + 1] * d0[1];
      g1 += w * W1[h];
      g2 += w * W1[H + h];
    }
  }
  out[0] = g1;
  out[1] = g2;
}

function pvnObjective(net, d0, x1, x2) {
  // Ĵ = d0 . PVN(x).
  const { W1, b1, W2, b2, hidden: H } = net;
  let v1 = b2[0];
  let v2 = b2[1];
  for (let h = 0; h < H; h++) {
    const a = Math.max(x1 * W1[h] + x2 * W1[H + h] + b1[h], 0);
    v1 += a * W2[2 * h];
    v2 += a * W2[2 * h + 1];
  }
  return v1 * d0[0] + v2 * d0[1];
}

/** The learned field on linspace(0, 1, G)^2 (learned_view's field) and the ascent through the PVN: iterates, the
 * PVN's Ĵ along them, and their exact V and J under `mdp`. */
export function learnedView(net, mdp, gridSize, start, learningRate, steps) {
  const grid = linspace(0, 1, gridSize);
  const g = new Float64Array(2);
  const F = new Float64Array(2 * gridSize * gridSize);
  for (let i = 0; i < gridSize; i++) {
    for (let j = 0; j < gridSize; j++) {
      pvnGradient(net, mdp.d0, grid[i], grid[j], g);
      F[(i * gridSize + j) * 2] = g[0];
      F[(i * gridSize + j) * 2 + 1] = g[1];
    }
  }
  const x = new Float64Array(2 * (steps + 1));
  x[0] = start[0];
  x[1] = start[1];
  for (let t = 0; t < steps; t++) {
    pvnGradient(net, mdp.d0, x[2 * t], x[2 * t + 1], g);
    x[2 * t + 2] = Math.min(Math.max(x[2 * t] + learningRate * g[0], 0), 1);
    x[2 * t + 3] = Math.min(Math.max(x[2 * t + 1] + learningRate * g[1], 0), 1);
  }
  const predicted = new Float64Array(steps + 1);
  for (let t = 0; t <= steps; t++) predicted[t] = pvnObjective(net, mdp.d0, x[2 * t], x[2 * t + 1]);
  const { V, J } = cloud(mdp, x);
  return { field: F, x, V, J, predicted };
}

// ---- figure geometry (pvnviz.figures.polytope's _quiver, arrow_scale, _padded_range) ---------------------------

function arrowScale(gridSize, ...fields) {
  const spacing = gridSize > 1 ? 1 / (gridSize - 1) : 1;
  let longest = 0;
  for (const f of fields) for (let k = 0; k < f.length; k += 2) longest = Math.max(longest, Math.hypot(f[k], f[k + 1]));
  return (0.9 * spacing) / Math.max(longest, 1e-12);
}

function quiver(gridSize, field, scale) {
  // Shafts, then the +25° heads, then the -25° heads, each point followed by a NaN break (as _quiver).
  const n = gridSize * gridSize;
  const xs = new Float32Array(9 * n);
  const ys = new Float32Array(9 * n);
  const grid = linspace(0, 1, gridSize);
  const c = Math.cos((25 * Math.PI) / 180);
  const sn = Math.sin((25 * Math.PI) / 180);
  for (let k = 0; k < n; k++) {
    const x0 = grid[Math.floor(k / gridSize)];
    const y0 = grid[k % gridSize];
    const u = field[2 * k] * scale;
    const v = field[2 * k + 1] * scale;
    const x1 = x0 + u;
    const y1 = y0 + v;
    const len = Math.hypot(u, v);
    const head = 0.3 * len;
    const ux = len > 0 ? u / len : 1; // cos and sin of the arrow's angle
    const uy = len > 0 ? v / len : 0;
    const heads = [
      [ux * c - uy * sn, uy * c + ux * sn],
      [ux * c + uy * sn, uy * c - ux * sn],
    ];
    xs.set([x0, x1, NaN], 3 * k);
    ys.set([y0, y1, NaN], 3 * k);
    heads.forEach(([hx, hy], side) => {
      const at = 3 * n * (side + 1) + 3 * k;
      xs.set([x1, x1 - head * hx, NaN], at);
      ys.set([y1, y1 - head * hy, NaN], at);
    });
  }
  return [xs, ys];
}

function paddedRange(values, stride, offset, extra, pad) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const arr of [values, extra]) {
    for (let k = offset; k < arr.length; k += stride) {
      lo = Math.min(lo, arr[k]);
      hi = Math.max(hi, arr[k]);
    }
  }
  const margin = pad * Math.max(hi - lo, 1e-6);
  return [lo - margin, hi + margin];
}

const column = (pairs, s, upto = pairs.length / 2) => {
  const out = new Float64Array(upto);
  for (let k = 0; k < upto; k++) out[k] = pairs[2 * k + s];
  return out;
};

const cornerLabel = (x1, x2) => `π=(${x1 > 0.5 ? "a1" : "a2"},${x2 > 0.5 ? "a1" : "a2"})`;

// ---- everything the figures show, for one set of controls ----------------------------------------------------

function mdpOf(c) {
  const rewards = [c.r00, c.r01, c.r10, c.r11];
  const transitions = [c.p00, c.p01, c.p10, c.p11].map((p) => [p, 1 - p]);
  return mdpFromFlat(rewards, transitions, c.gamma, [c.d0, 1 - c.d0]);
}

function computeView(c, s) {
  const mdp = mdpOf(c);
  const view = { mdp, corners: corners(mdp), optimum: optimum(mdp), edges: edges(mdp) };
  view.cloud = cloud(mdp, s.cloudX, s.cloudOut);
  view.field = field(mdp, s.gridSize).field;
  view.exact = ascent(mdp, [c.start1, c.start2], c.ascent_lr, c.ascent_steps);
  view.exact.predicted = null;
  const L = s.learned;
  if (L) {
    const lv = learnedView(L, mdp, s.gridSize, [c.start1, c.start2], c.ascent_lr, c.ascent_steps);
    view.learnedField = lv.field;
    view.learned = lv;
    view.train = cloud(mdp, L.train).V;
    view.test = cloud(mdp, L.test).V;
    view.stale = MDP_KEYS.some((k) => L.controls[k] !== c[k]);
  }
  return view;
}

// ---- the four figures, from the server's templates with every exact trace recomputed ---------------------------

function byMeta(data) {
  const out = {};
  data.forEach((t, i) => t.meta !== undefined && (out[t.meta] = i));
  return out;
}

function faded(trace, stale, factor = 0.3) {
  // What the old PVN predicts, faded (its figure says "PVN retraining…"): painted, so plotly redraws nothing.
  return stale ? { ...trace, fade: factor } : trace;
}

function staleNote(xref, yref) {
  return { name: "stale", text: `<i>${STALE}</i>`, x: 0.5, y: 0.5, xref: `${xref} domain`, yref: `${yref} domain`,
    showarrow: false, font: { size: 16, color: "#ff7f0e" }, bgcolor: "rgba(255,255,255,0.8)" };
}

function annotations(layout, view, stale, staleAt) {
  // The template's annotations with the corner names moved onto this MDP's corners, and the stale label.
  const out = (layout.annotations || []).filter((a) => a.name !== "stale").map((a) => {
    const m = /^corner(\d)$/.exec(a.name || "");
    if (!m) return a;
    const k = Number(m[1]);
    return { ...a, x: view.corners.V[2 * k], y: view.corners.V[2 * k + 1],
      text: cornerLabel(view.corners.x[2 * k], view.corners.x[2 * k + 1]) };
  });
  if (stale && staleAt) out.push(staleNote(...staleAt));
  return out;
}

function outlineTraces(data, idx, view) {
  // The image of the square's sides, the corners and the optimum (polytope_outline), in place in `data`.
  for (let e = 0; e < 4; e++) {
    if (idx[`edge${e}`] === undefined) continue;
    data[idx[`edge${e}`]] = { ...data[idx[`edge${e}`]], x: column(view.edges[e], 0), y: column(view.edges[e], 1) };
  }
  const { x, V, J } = view.corners;
  if (idx.corners !== undefined) {
    const text = [0, 1, 2, 3].map((k) => cornerLabel(x[2 * k], x[2 * k + 1]));
    data[idx.corners] = { ...data[idx.corners], x: column(V, 0), y: column(V, 1), text, customdata: Array.from(J) };
  }
  if (idx.optimum !== undefined) {
    const k = view.optimum.index;
    data[idx.optimum] = { ...data[idx.optimum], x: [V[2 * k]], y: [V[2 * k + 1]],
      name: view.optimumName ?? `optimum (J=${view.optimum.J.toFixed(3)})` };
  }
}

function polytopeAxes(view) {
  return {
    x: paddedRange(view.cloud.V, 2, 0, view.corners.V, 0.1),
    y: paddedRange(view.cloud.V, 2, 1, view.corners.V, 0.14),
  };
}

function objectiveRange(view) {
  // The J curves' extent (the optimum's line included), padded as plotly pads markers.
  const [lo, hi] = extent([...view.exact.J, view.optimum.J, ...(view.learned ? [...view.learned.J, ...view.learned.predicted] : [])]);
  const margin = 0.08 * Math.max(hi - lo, 1e-6);
  return [lo - margin, hi + margin];
}

const STEADY_FILL = 0.7; // while dragged, the axes stay put while what they show fills this share of them

function steady(before, wanted, keep) {
  // While a control is dragged the axes stay put as long as what they show fits and fills STEADY_FILL of them, and
  // follow it when it does not (grown or shrunk), with a little room so that the next steps of the drag fit: fewer
  // plotly redraws and a steadier picture, and never the points squeezed into a corner. A release draws the exact
  // ranges again.
  if (!keep) return wanted;
  const fits = before && wanted[0] >= before[0] && wanted[1] <= before[1];
  if (fits && wanted[1] - wanted[0] >= STEADY_FILL * (before[1] - before[0])) return before;
  const room = 0.1 * (wanted[1] - wanted[0]); // what is shown then fills 1 / 1.2 of the axis, above STEADY_FILL
  return [wanted[0] - room, wanted[1] + room];
}

function polytopeFigure(tpl, view) {
  const data = tpl.data.slice();
  const idx = byMeta(data);
  outlineTraces(data, idx, view);
  const V = view.cloud.V;
  data[idx.cloud] = { ...data[idx.cloud], x: column(V, 0), y: column(V, 1),
    marker: { ...data[idx.cloud].marker, color: view.cloud.J } };
  for (const name of ["train", "test"]) {
    if (idx[name] !== undefined && view[name]) data[idx[name]] = { ...data[idx[name]], x: column(view[name], 0), y: column(view[name], 1) };
  }
  const axes = view.axes;
  const layout = { ...tpl.layout, annotations: annotations(tpl.layout, view, false),
    xaxis: { ...tpl.layout.xaxis, range: axes.x }, yaxis: { ...tpl.layout.yaxis, range: axes.y } };
  return { data, layout };
}

function fieldsFigure(tpl, view, gridSize) {
  const data = tpl.data.slice();
  const idx = byMeta(data);
  const fields = view.learnedField && !view.stale ? [view.field, view.learnedField] : [view.field];
  const scale = arrowScale(gridSize, ...fields);
  const [ex, ey] = quiver(gridSize, view.field, scale);
  data[idx["field:exact"]] = { ...data[idx["field:exact"]], x: ex, y: ey };
  if (idx["field:learned"] !== undefined && view.learnedField) {
    const own = view.stale ? arrowScale(gridSize, view.learnedField) : scale;
    const [lx, ly] = quiver(gridSize, view.learnedField, own);
    data[idx["field:learned"]] = faded({ ...data[idx["field:learned"]], x: lx, y: ly }, view.stale);
  }
  const layout = { ...tpl.layout, annotations: annotations(tpl.layout, view, view.stale, ["x2", "y2"]) };
  return { data, layout };
}

function squareFigure(tpl, view, t, gridSize, playing) {
  const data = tpl.data.slice();
  const idx = byMeta(data);
  outlineTraces(data, idx, view);
  const [qx, qy] = quiver(gridSize, view.field, arrowScale(gridSize, view.field));
  data[idx["field:exact"]] = { ...data[idx["field:exact"]], x: qx, y: qy };
  for (const [name, which] of PATHS) {
    const path = view[which];
    if (!path || idx[`full:${name}:1`] === undefined) continue;
    const stale = which === "learned" && view.stale;
    for (const [col, points] of [[1, path.x], [2, path.V]]) {
      const full = idx[`full:${name}:${col}`];
      const upto = idx[`upto:${name}:${col}`];
      const ring = idx[`ring:${name}:${col}`];
      data[full] = faded({ ...data[full], x: column(points, 0), y: column(points, 1) }, stale);
      data[upto] = faded({ ...data[upto], x: column(points, 0, t + 1), y: column(points, 1, t + 1) }, stale);
      data[ring] = faded({ ...data[ring], x: [points[2 * t]], y: [points[2 * t + 1]], name: `${name}: step ${t}`,
        hovertemplate: `${name}, step ${t}: J = ${path.J[t].toFixed(3)}<extra></extra>` }, stale);
    }
  }
  data[idx.start] = { ...data[idx.start], x: [view.exact.x[0]], y: [view.exact.x[1]] };
  const axes = view.axes;
  const base = typeof tpl.layout.title === "object" ? tpl.layout.title : {};
  const step = String(base.text ?? "").includes("<br>") ? ":<br>step" : ": step"; // projector: the title wraps
  const title = { ...base,
    text: `<b>Gradient ascent, exact against learned${playing ? "" : `${step} ${t}`}</b>` }; // playing: the caption counts
  const layout = { ...tpl.layout, title, annotations: annotations(tpl.layout, view, view.stale, ["x", "y"]),
    xaxis2: { ...tpl.layout.xaxis2, range: axes.x }, yaxis2: { ...tpl.layout.yaxis2, range: axes.y } };
  return { data, layout };
}

function returnsFigure(tpl, view, t) {
  const data = tpl.data.slice();
  const idx = byMeta(data);
  const n = view.exact.J.length;
  const steps = Array.from({ length: n }, (_, k) => k);
  const stale = view.stale;
  data[idx["J:exact"]] = { ...data[idx["J:exact"]], x: steps, y: view.exact.J };
  const curves = [view.exact.J, [view.optimum.J]];
  const ys = [[view.exact.J[t], "#1f77b4"]];
  if (view.learned && idx["J:learned"] !== undefined) {
    data[idx["J:learned"]] = faded({ ...data[idx["J:learned"]], x: steps, y: view.learned.J }, stale);
    data[idx["Jhat:learned"]] = faded({ ...data[idx["Jhat:learned"]], x: steps, y: view.learned.predicted }, stale);
    curves.push(view.learned.J, view.learned.predicted);
    ys.push([view.learned.J[t], "#ff7f0e"], [view.learned.predicted[t], "#ff7f0e"]);
  }
  let low = Infinity;
  let high = -Infinity;
  for (const c of curves) for (const v of c) ((low = Math.min(low, v)), (high = Math.max(high, v)));
  if (idx["highlight-line"] !== undefined) data[idx["highlight-line"]] = { ...data[idx["highlight-line"]], x: [t, t], y: [low, high] };
  if (idx.highlight !== undefined) {
    const h = data[idx.highlight];
    data[idx.highlight] = { ...h, x: ys.map(() => t), y: ys.map(([y]) => y), name: `step ${t}`,
      marker: { ...h.marker, color: ys.map(([, c]) => c) } };
  }
  const opt = view.optimum.J;
  const shapes = (tpl.layout.shapes || []).map((s) => (s.name === "optimal" ? { ...s, y0: opt, y1: opt } : s));
  const notes = (tpl.layout.annotations || []).map((a) => (a.name === "optimal" ? { ...a, y: opt } : a));
  if (stale) notes.push(staleNote("x", "y"));
  const pad = 0.02 * Math.max(n - 1, 1); // the curves are painted on a canvas: the axes are set, not autoranged
  const layout = { ...tpl.layout, shapes, annotations: notes, xaxis: { ...tpl.layout.xaxis, range: [-pad, n - 1 + pad] },
    yaxis: { ...tpl.layout.yaxis, range: view.jRange } };
  return { data, layout };
}
