// The polytope instrument (Section 6.1, Figs. 2-3, Appendix A): every exact view of the 2-state MDP, computed and
// drawn in the browser on every input event, so the figures follow a drag.
//
// Prelude (ui/components.py's js_module): plotly_lib.js (pvnPlotly), controls_lib.js (icons, typed arrays) and
// mdp.js (the exact math: values, J, the gradient field, projected ascent; tests/test_browser_mdp_js.py checks it
// against pvnviz.mdp). This file adds the PVN's forward pass and input gradient (pvnviz.tiny_mlp.TinyMLP: the
// learned field and the learned ascent through a PVN the server trained), the figures and the controls.
//
// What goes where:
//   - view controls (the MDP for the exact view, the ascent's start, step size and steps, the ascent step shown)
//     change the figures here, at once, with no server rerun;
//   - on release (`change`), the controls go back to Python (setStateValue "view"): into the URL, and, when the
//     MDP changed, to a worker that retrains the PVN. Until its weights arrive, whatever the old PVN predicts is
//     drawn faded and labelled "PVN retraining…".
//
// data = {plotly, config: {figure: plotly config}, figures: {polytope, fields, square, returns} (plotly JSON
//         built by pvnviz.figures for the server's view: the look, legends and trace roles by `meta`), spec:
//         [{key, label, group, min, max, step, integer, help}], controls: {key: value}, frame: step shown or null
//         (the last), revision (a new one: the server set the controls), cloud: policies {dtype, bdata} (2N),
//         gridSize, learned: {controls (the MDP it was trained on), W1, b1, W2, b2, hidden, train, test} or null,
//         texts: {polytope, fields, ascent} (HTML)}

const INSTRUMENT = Symbol.for("pvn.polytope");
const STALE = "PVN retraining…";
const MDP_KEYS = ["gamma", "d0", "r00", "r01", "r10", "r11", "p00", "p01", "p10", "p11"];
const PATHS = [
  ["exact ascent", "exact"],
  ["learned ascent", "learned"],
];
const SPEEDS = [0.25, 0.5, 1, 2, 4];
const FPS = 30;
const instruments = (globalThis.pvnPlayers ??= { active: null }); // shares "who owns the keys" with player.js

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

function steady(before, wanted, keep) {
  // While a control is dragged the axes stay put as long as what they show fits and fills 30% of them, and grow
  // with room to spare when it does not: fewer plotly redraws, and a steadier picture. A release draws the exact
  // ranges again.
  if (!keep) return wanted;
  const fits = before && wanted[0] >= before[0] && wanted[1] <= before[1];
  if (fits && wanted[1] - wanted[0] >= 0.3 * (before[1] - before[0])) return before;
  const room = 0.25 * (wanted[1] - wanted[0]); // grown with room to spare: the next steps of the drag fit
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
  const title = { ...(typeof tpl.layout.title === "object" ? tpl.layout.title : {}),
    text: `<b>Gradient ascent, exact against learned${playing ? "" : `: step ${t}`}</b>` }; // playing: the caption counts
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

// ---- a canvas under plotly's SVG for the thousands of points and arrows --------------------------------------
// Plotly redraws every SVG point (or a software-WebGL scene) on each update: 5,000 cloud points and three
// 400-arrow fields took most of a redraw. Traces whose meta is in LAYERED are painted on a canvas below the plot
// (the plot's background made transparent) in plotly's own axis coordinates; their plotly traces keep only a
// NaN point, for the legend and the colour bar. The modebar's download draws the whole figure with plotly.

const LAYERED_META = /^(cloud|edge\d|corners|optimum|train|test|field:.*|full:.*|upto:.*|ring:.*|start|J:.*|Jhat:.*|highlight.*)$/;
const LAYERED_NOTE = /^(corner\d|optimal|stale)$/; // annotations and shapes painted with what they label
const isLayered = (trace) => LAYERED_META.test(trace.meta ?? "");
const VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b",
  "#fde725"].map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));

function viridis(u) {
  const x = Math.min(Math.max(u, 0), 1) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(x), VIRIDIS.length - 2);
  const f = x - i;
  const [a, b] = [VIRIDIS[i], VIRIDIS[i + 1]];
  return `rgb(${a.map((v, k) => Math.round(v + f * (b[k] - v))).join(",")})`;
}

function split(fig) {
  // The figure plotly draws (layered traces reduced to a NaN point) and the traces to paint.
  const painted = [];
  const data = fig.data.map((trace) => {
    if (!isLayered(trace)) return trace;
    painted.push(trace);
    const kept = { ...trace, x: [NaN], y: [NaN], customdata: undefined, text: undefined, hovertemplate: undefined,
      fade: undefined };
    if (trace.showlegend === false) kept.name = undefined; // a name only the hover label showed
    if (ArrayBuffer.isView(trace.marker?.color) || typeof trace.marker?.color?.[0] === "number") { // a colour scale
      const [lo, hi] = fig.colorRange ?? extent(trace.marker.color);
      kept.marker = { ...trace.marker, color: [lo], cmin: lo, cmax: hi, showscale: true };
      trace.cmin = lo;
      trace.cmax = hi;
    }
    return kept;
  });
  const layout = { ...fig.layout, paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)" };
  const notes = (fig.layout.annotations || []).filter((a) => LAYERED_NOTE.test(a.name ?? ""));
  const lines = (fig.layout.shapes || []).filter((a) => LAYERED_NOTE.test(a.name ?? ""));
  layout.annotations = (fig.layout.annotations || []).filter((a) => !LAYERED_NOTE.test(a.name ?? ""));
  layout.shapes = (fig.layout.shapes || []).filter((a) => !LAYERED_NOTE.test(a.name ?? ""));
  painted.push(...lines.map((shape) => ({ shape })), ...notes.map((note) => ({ note })));
  return { plotted: { data, layout }, painted };
}

function extent(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) if (Number.isFinite(v)) ((lo = Math.min(lo, v)), (hi = Math.max(hi, v)));
  return lo <= hi ? [lo, hi] : [0, 1];
}

function paint(gd, traces) {
  const container = gd.querySelector(".svg-container");
  const full = gd._fullLayout;
  if (!container || !full) return;
  let canvas = container.querySelector("canvas.pvn-layer");
  if (!canvas) {
    canvas = document.createElement("canvas");
    canvas.className = "pvn-layer";
    canvas.style.cssText = "position:absolute;left:0;top:0;pointer-events:none";
    container.insertBefore(canvas, container.firstChild);
  }
  const dpr = window.devicePixelRatio || 1;
  const [w, h] = [full.width, full.height];
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  for (const item of traces) {
    if (item.shape || item.note) {
      paintNote(ctx, full, item);
      continue;
    }
    const trace = item;
    const xa = full[(trace.xaxis || "x").replace("x", "xaxis")];
    const ya = full[(trace.yaxis || "y").replace("y", "yaxis")];
    if (!xa || !ya) continue;
    ctx.save();
    ctx.beginPath();
    ctx.rect(xa._offset, ya._offset, xa._length, ya._length);
    ctx.clip();
    const X = (v) => xa._offset + xa.l2p(v);
    const Y = (v) => ya._offset + ya.l2p(v);
    const { x, y } = trace;
    const mode = trace.mode ?? (x.length < 20 ? "lines+markers" : "lines"); // plotly's default mode
    if (mode.includes("lines")) {
      const line = trace.line || {};
      ctx.globalAlpha = (trace.opacity ?? 1) * (trace.fade ?? 1);
      ctx.strokeStyle = line.color || "#444";
      ctx.lineWidth = line.width ?? 2;
      ctx.setLineDash(line.dash === "dot" ? [2, 3] : line.dash === "dash" ? [6, 4] : []);
      ctx.beginPath();
      let pen = false;
      for (let k = 0; k < x.length; k++) {
        if (!Number.isFinite(x[k]) || !Number.isFinite(y[k])) {
          pen = false;
          continue;
        }
        if (pen) ctx.lineTo(X(x[k]), Y(y[k]));
        else ctx.moveTo(X(x[k]), Y(y[k]));
        pen = true;
      }
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (mode.includes("markers")) {
      if (trace.cliponaxis === false) ctx.restore(), ctx.save(); // drawn over the axes' edges too
      const m = trace.marker || {};
      ctx.globalAlpha = (m.opacity ?? 1) * (trace.opacity ?? 1) * (trace.fade ?? 1);
      const r = (m.size ?? 6) / 2;
      const colors = m.color;
      const numeric = colors && typeof colors !== "string" && typeof colors[0] === "number";
      const span = (trace.cmax - trace.cmin) || 1;
      const outline = m.line?.width ? m.line : null;
      if (numeric && !outline && !m.symbol) {
        // The cloud: one path per colour (64 levels of the scale), filled once: 5,000 points in a few ms.
        const bins = Array.from({ length: 64 }, () => []);
        for (let k = 0; k < x.length; k++) {
          if (!Number.isFinite(x[k]) || !Number.isFinite(y[k])) continue;
          const u = Math.min(Math.max((colors[k] - trace.cmin) / span, 0), 1);
          bins[Math.round(u * 63)].push(k);
        }
        bins.forEach((ks, b) => {
          if (!ks.length) return;
          ctx.beginPath();
          for (const k of ks) {
            const [cx, cy] = [X(x[k]), Y(y[k])];
            ctx.moveTo(cx + r, cy);
            ctx.arc(cx, cy, r, 0, 2 * Math.PI);
          }
          ctx.fillStyle = viridis(b / 63);
          ctx.fill();
        });
        ctx.restore();
        continue;
      }
      for (let k = 0; k < x.length; k++) {
        if (!Number.isFinite(x[k]) || !Number.isFinite(y[k])) continue;
        const color = numeric ? viridis((colors[k] - trace.cmin) / span)
          : typeof colors === "string" ? colors : colors?.[k] || trace.line?.color || "#1f77b4";
        const [cx, cy] = [X(x[k]), Y(y[k])];
        ctx.beginPath();
        if (m.symbol === "x") {
          ctx.strokeStyle = outline?.color || color;
          ctx.lineWidth = r * 0.7 + (outline?.width || 0);
          ctx.moveTo(cx - r, cy - r);
          ctx.lineTo(cx + r, cy + r);
          ctx.moveTo(cx + r, cy - r);
          ctx.lineTo(cx - r, cy + r);
          ctx.stroke();
          ctx.strokeStyle = color;
          ctx.lineWidth = r * 0.7;
          ctx.stroke();
          continue;
        }
        if (m.symbol === "square") ctx.rect(cx - r, cy - r, 2 * r, 2 * r);
        else if (m.symbol === "star") {
          for (let p = 0; p < 10; p++) {
            const a = -Math.PI / 2 + (p * Math.PI) / 5;
            const rr = p % 2 ? r * 0.45 : r * 1.1;
            ctx.lineTo(cx + rr * Math.cos(a), cy + rr * Math.sin(a));
          }
          ctx.closePath();
        } else ctx.arc(cx, cy, r, 0, 2 * Math.PI);
        ctx.fillStyle = color;
        ctx.fill();
        if (outline) {
          ctx.strokeStyle = outline.color || "#444";
          ctx.lineWidth = outline.width;
          ctx.stroke();
        }
      }
    }
    ctx.restore();
  }
}

function paintNote(ctx, full, { shape, note }) {
  // A horizontal line across its plot (add_hline's shape) or a text label (an annotation at data coordinates).
  const item = shape || note;
  const xa = full[(item.xref || "x").split(" ")[0].replace("x", "xaxis")];
  const ya = full[(item.yref || "y").split(" ")[0].replace("y", "yaxis")];
  if (!xa || !ya) return;
  const yDomain = (item.yref || "").endsWith("domain");
  const Y = yDomain ? ya._offset + (1 - note.y) * ya._length : ya._offset + ya.l2p(shape ? shape.y0 : note.y);
  ctx.save();
  if (shape) {
    const line = shape.line || {};
    ctx.strokeStyle = line.color || "#444";
    ctx.lineWidth = line.width ?? 2;
    ctx.setLineDash(line.dash === "dash" ? [9, 9] : line.dash === "dot" ? [3, 3] : []);
    ctx.beginPath();
    ctx.moveTo(xa._offset, Y);
    ctx.lineTo(xa._offset + xa._length, Y);
    ctx.stroke();
  } else {
    const font = note.font || {};
    ctx.font = `${note.text.startsWith("<i>") ? "italic " : ""}${font.size || 12}px ${full.font?.family || "sans-serif"}`;
    const domain = (note.xref || "").endsWith("domain");
    const X = domain ? xa._offset + note.x * xa._length : xa._offset + xa.l2p(note.x);
    const text = String(note.text).replace(/<[^>]+>/g, "");
    const w = ctx.measureText(text).width;
    const h = (font.size || 12) * 1.2;
    const left = note.xanchor === "left" ? X : X - w / 2;
    const top = note.yanchor === "top" ? Y + 2 : Y - (note.yshift || 0) - h / 2;
    if (note.bgcolor) {
      ctx.fillStyle = note.bgcolor;
      ctx.fillRect(left - 2, top, w + 4, h);
    }
    ctx.fillStyle = font.color || full.font?.color || "#444";
    ctx.textBaseline = "middle";
    ctx.fillText(text, left, top + h / 2);
  }
  ctx.restore();
}

function firstDiff(a, b) {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return a.slice(Math.max(0, i - 80), i + 40);
}

function axisRanges(layout) {
  // {"xaxis.range": [lo, hi], ...} of every axis whose range the figure sets.
  const out = {};
  for (const [k, v] of Object.entries(layout)) if (/^[xy]axis\d*$/.test(k) && v?.range) out[`${k}.range`] = v.range;
  return out;
}

function downloadButton(getFigure, config) {
  // The modebar's camera, drawing the whole figure (painted traces included) with plotly.
  const options = config.toImageButtonOptions || {};
  return {
    name: "download",
    title: `Download plot as ${(options.format || "png").toUpperCase()}`,
    icon: pvnPlotly.Plotly.Icons.camera,
    click: () => {
      const fig = getFigure();
      if (fig) pvnPlotly.Plotly.downloadImage({ data: fig.data, layout: fig.layout }, { format: "png", ...options });
    },
  };
}

// ---- the instrument -----------------------------------------------------------------------------------------

function el(tag, className, parent, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function createInstrument(parent) {
  const root = el("div", "pvn-poly pvn-player", parent); // a player too: tests and the benchmark find it so
  root.tabIndex = -1;
  const badge = el("div", "pvn-poly-badge", root, STALE);
  badge.hidden = true;
  const top = el("div", "pvn-poly-top", root);
  const mdpPanel = el("div", "pvn-poly-controls", top);
  const polyBox = el("div", "pvn-poly-figbox", top);
  const figs = { polytope: el("div", "pvn-poly-fig", polyBox) };
  const optimumLine = el("div", "pvn-poly-optimum", polyBox);
  const texts = { polytope: el("div", "pvn-poly-text", polyBox) };
  figs.fields = el("div", "pvn-poly-fig pvn-poly-fields", root);
  texts.fields = el("div", "pvn-poly-text", root);
  const ascentPanel = el("div", "pvn-poly-ascent-controls", root);
  const row = el("div", "pvn-poly-row", root);
  figs.square = el("div", "pvn-poly-fig pvn-poly-square", row);
  figs.returns = el("div", "pvn-poly-fig pvn-poly-returns", row);
  const bar = el("div", "pvn-player-bar", root);
  const ui = {
    first: iconButton("first", "First ascent step"),
    back: iconButton("back", "One step back (←)"),
    play: iconButton("play", "Play or pause (Space)"),
    forward: iconButton("forward", "One step forward (→)"),
    last: iconButton("last", "Last ascent step"),
    speed: el("select", "pvn-player-speed"),
    slider: el("input", "pvn-player-slider"),
  };
  ui.speed.setAttribute("aria-label", "Playing speed");
  ui.speed.innerHTML = SPEEDS.map((v) => `<option value="${v}"${v === 1 ? " selected" : ""}>${v}×</option>`).join("");
  ui.slider.type = "range";
  ui.slider.min = "0";
  ui.slider.setAttribute("aria-label", "Ascent step shown");
  bar.append(ui.first, ui.back, ui.play, ui.forward, ui.last, ui.speed, ui.slider);
  const caption = el("span", "pvn-player-caption", root);
  texts.ascent = el("div", "pvn-poly-text", root);

  const s = {
    data: null, setState: null, revision: null, controls: {}, inputs: {}, frame: 0, playing: false, raf: 0,
    view: null, dirty: new Set(), scheduled: 0, eventAt: null, drawn: 0, busy: false, sendTimer: 0,
    cloudX: null, cloudOut: null, gridSize: 20, full: {}, looks: {}, configs: {}, signatures: {}, learned: null, learnedKey: null, figuresKey: null,
  };

  // -- controls --
  function buildControls(spec) {
    mdpPanel.replaceChildren();
    ascentPanel.replaceChildren();
    s.inputs = {};
    const groups = {};
    for (const c of spec) {
      const panel = c.group === "ascent" ? ascentPanel : mdpPanel;
      if (c.group !== "ascent" && !groups[c.group]) groups[c.group] = el("div", "pvn-poly-group", panel, c.group);
      const box = el("label", `pvn-poly-control pvn-poly-${c.kind}`, panel);
      box.title = c.help || "";
      const head = el("span", "pvn-poly-label", box, c.label);
      const input = el("input", "pvn-poly-input", box);
      input.name = c.key;
      input.type = c.kind === "range" ? "range" : "number";
      input.min = String(c.min);
      input.max = String(c.max);
      input.step = String(c.step);
      input.setAttribute("aria-label", c.label);
      const shown = c.kind === "range" ? el("span", "pvn-poly-value", head) : null;
      const problem = el("span", "pvn-poly-problem", box);
      s.inputs[c.key] = { input, shown, problem, spec: c };
      input.addEventListener("input", (event) => changed(c.key, event, false));
      input.addEventListener("change", (event) => changed(c.key, event, true));
    }
  }

  function showControls() {
    for (const [key, { input, shown, problem, spec }] of Object.entries(s.inputs)) {
      input.value = String(s.controls[key]);
      if (shown) shown.textContent = format(s.controls[key], spec);
      problem.textContent = "";
      input.removeAttribute("aria-invalid");
    }
  }

  function format(v, spec) {
    return spec.integer ? String(v) : Number(v).toFixed(Math.max(2, -Math.floor(Math.log10(spec.step)) || 2));
  }

  function changed(key, event, released) {
    const { input, shown, problem, spec } = s.inputs[key];
    const v = Number(input.value);
    const ok = input.value !== "" && Number.isFinite(v) && v >= spec.min && v <= spec.max &&
      (!spec.integer || Number.isInteger(v));
    if (!ok) {
      input.setAttribute("aria-invalid", "true");
      problem.textContent = `Enter ${spec.integer ? "a whole number" : "a number"} from ${spec.min} to ${spec.max}.`;
      return;
    }
    input.removeAttribute("aria-invalid");
    problem.textContent = "";
    if (shown) shown.textContent = format(v, spec);
    const figures = MDP_KEYS.includes(key) ? ["polytope", "fields", "square", "returns"] : ["square", "returns"];
    const moved = s.controls[key] !== v;
    s.dragging = !released || s.keyed; // keys: as a drag until they rest (send), then the exact axes
    s.settle = figures;
    if (moved || released) { // a release draws the exact axis ranges again
      s.controls[key] = v;
      pause(false);
      s.frame = s.controls.ascent_steps;
      if (moved || s.keyed) redraw(figures, moved ? event : null);
      else setTimeout(() => redraw(figures), 60); // after the view has left for the server: it starts sooner
    }
    if (released) send();
  }

  function send() {
    // The view after a release: at once after a mouse or touch, 400 ms after the last key (holding an arrow key
    // sends once it is let go).
    clearTimeout(s.sendTimer);
    const now = () => {
      if (s.dragging && s.settle) {
        s.dragging = false;
        redraw(s.settle); // the exact axis ranges and legend, once the keys rest
      }
      if (s.setState) s.setState("view", { controls: { ...s.controls }, frame: s.frame });
    };
    if (s.keyed) s.sendTimer = setTimeout(now, 400);
    else now(); // a mouse or touch release: the server hears of it before this page redraws
  }
  root.addEventListener("keydown", () => (s.keyed = true), true);
  root.addEventListener("pointerdown", () => (s.keyed = false), true);

  // -- drawing --
  function redraw(which, event) {
    for (const w of which) s.dirty.add(w);
    if (event && s.eventAt === null) s.eventAt = event.timeStamp || performance.now();
    if (!s.scheduled) s.scheduled = requestAnimationFrame(draw);
  }

  async function draw() {
    s.scheduled = 0;
    if (!s.data || !pvnPlotly.Plotly) return;
    if (s.busy) return void (s.scheduled = requestAnimationFrame(draw)); // one redraw at a time
    s.busy = true;
    try {
      await drawNow();
    } finally {
      s.busy = false;
    }
  }

  async function drawNow() {
    const Plotly = pvnPlotly.Plotly;
    const dirty = [...s.dirty];
    s.dirty.clear();
    const eventAt = s.eventAt;
    s.eventAt = null;
    const t0 = performance.now();
    if (dirty.some((d) => d !== "frame")) s.view = computeView(s.controls, s);
    const v = s.view;
    if (dirty.some((d) => d !== "frame")) {
      const want = polytopeAxes(v);
      const before = s.axes;
      v.axes = { x: steady(before?.x, want.x, s.dragging), y: steady(before?.y, want.y, s.dragging) };
      v.jRange = steady(s.jRange, objectiveRange(v), s.dragging);
      v.colorRange = steady(s.colorRange, extent(v.cloud.J), s.dragging); // the colour bar's J range
      s.axes = v.axes;
      s.jRange = v.jRange;
      s.colorRange = v.colorRange;
      const name = `optimum (J=${v.optimum.J.toFixed(3)})`; // the legend is redrawn after a drag, not during it
      v.optimumName = s.dragging && s.optimumName ? s.optimumName : name;
      s.optimumName = v.optimumName;
    }
    const t = Math.min(s.frame, s.controls.ascent_steps);
    // Plotly writes into the layout and trace objects it is given (autorange, uid...): each draw starts from a
    // copy of the templates, so what plotly is asked to draw can be compared with the last time.
    const tpl = Object.fromEntries(Object.entries(s.data.figures).map(([k, f]) => [k, structuredClone(f)]));
    const cfg = s.data.config || {};
    const builders = {
      polytope: () => ({ ...polytopeFigure(tpl.polytope, v), colorRange: v.colorRange }),
      fields: () => fieldsFigure(tpl.fields, v, s.gridSize),
      square: () => squareFigure(tpl.square, v, t, s.gridSize, s.playing),
      returns: () => returnsFigure(tpl.returns, v, t),
    };
    const names = dirty.includes("frame") ? [...new Set([...dirty.filter((d) => d !== "frame"), "square", "returns"])] : dirty;
    await Promise.all(
      names.map(async (name) => {
        const fig = builders[name]();
        // The same template and config objects on every redraw: a new one makes Plotly.react redraw everything.
        s.looks[name] ??= pvnPlotly.look(tpl[name].layout, root);
        const look = s.looks[name];
        fig.layout = { ...fig.layout, template: look.template, title: fig.layout.title?.text?.startsWith("<b>") ? fig.layout.title : look.title };
        s.full[name] = fig;
        const { plotted, painted } = split(fig);
        const config = (s.configs[name] ??= withDownload(cfg[name] || {}, name, painted.length > 0));
        const f0 = performance.now();
        // What plotly draws (the painted traces are NaN placeholders), its axis ranges apart: plotly redraws only
        // what changed, the cheapest way. Nothing: only the canvas changes. Only the ranges: a relayout of them.
        const ranges = axisRanges(plotted.layout);
        const signature = JSON.stringify(plotted, (k, v) => (k === "range" ? undefined : v));
        const gd = figs[name];
        if (signature !== s.signatures[name] || !gd._fullLayout) {
          if (s.signatures[name]) root.dataset[`diff_${name}`] = firstDiff(s.signatures[name], signature);
          await Plotly.react(gd, plotted.data, plotted.layout, config);
          s.signatures[name] = signature;
          root.dataset[`reacts_${name}`] = String(Number(root.dataset[`reacts_${name}`] || 0) + 1);
        } else {
          const moved = Object.fromEntries(Object.entries(ranges).filter(([k, r]) => String(gd.layout[k.split(".")[0]]?.range) !== String(r)));
          if (Object.keys(moved).length) await Plotly.relayout(gd, moved);
          root.dataset[`relayouts_${name}`] = String(Number(root.dataset[`relayouts_${name}`] || 0) + 1);
        }
        paint(figs[name], painted);
        figs[name].pvnPainted = painted; // what the canvas shows, for tests and the benchmark
        root.dataset[`ms_${name}`] = (performance.now() - f0).toFixed(1);
      }),
    );
    root.dataset.drawMs = (performance.now() - t0).toFixed(1); // computing, plotly's drawing and painting
    badge.hidden = !v.stale;
    root.dataset.stale = String(Boolean(v.stale));
    optimumLine.innerHTML = `Optimal policy [P(a1|s1), P(a1|s2)] = [${v.optimum.x.join(", ")}] → <b>J = ${v.optimum.J.toFixed(4)}</b>`;
    const ends = v.learned ? `Learned ascent ends at J = ${v.learned.J[v.learned.J.length - 1].toFixed(3)}, exact ` : "Exact ";
    texts.ascent.innerHTML = `${s.data.texts.ascent} ${ends}ascent at ${v.exact.J[v.exact.J.length - 1].toFixed(3)}, optimum ${v.optimum.J.toFixed(3)}.`;
    ui.slider.max = String(s.controls.ascent_steps);
    ui.slider.value = String(t);
    caption.textContent = `ascent step ${t} (${t + 1} of ${s.controls.ascent_steps + 1})${s.playing ? " — playing" : ""}`;
    root.dataset.frame = String(t);
    // The time from the input event to the end of this redraw: the next animation frame, once the browser has
    // painted what plotly and the canvas drew.
    requestAnimationFrame(() => {
      s.drawn += 1;
      root.dataset.drawn = String(s.drawn);
      if (eventAt !== null) root.dataset.inputToDrawMs = (performance.now() - eventAt).toFixed(1);
    });
  }

  function withDownload(config, name, painting) {
    if (!painting) return config;
    return { ...config, modeBarButtonsToRemove: [...(config.modeBarButtonsToRemove || []), "toImage"],
      modeBarButtonsToAdd: [downloadButton(() => s.full[name], config)] };
  }

  // -- the ascent player --
  function showFrame(t, event) {
    s.frame = Math.min(Math.max(t, 0), s.controls.ascent_steps);
    redraw(["frame"], event);
  }

  function pause(report = true) {
    if (!s.playing) return;
    s.playing = false;
    cancelAnimationFrame(s.raf);
    ui.play.innerHTML = icon("play");
    root.dataset.playing = "false";
    showFrame(s.frame);
    if (report) send();
  }

  function play() {
    const last = s.controls.ascent_steps;
    if (s.frame >= last) s.frame = 0;
    s.playing = true;
    root.dataset.playing = "true";
    ui.play.innerHTML = icon("pause");
    let since = performance.now();
    const tick = (now) => {
      if (!s.playing) return;
      const step = 1000 / (FPS * Number(ui.speed.value));
      // Due within 15% of a step: at 30 frames a second on a 60 Hz display every second animation frame, not
      // sometimes every third when the display's frames come a fraction of a millisecond early.
      if (now - since >= 0.85 * step) {
        since = now;
        if (s.frame >= last) return pause();
        showFrame(s.frame + 1);
      }
      s.raf = requestAnimationFrame(tick);
    };
    showFrame(s.frame);
    s.raf = requestAnimationFrame(tick);
  }

  function step(delta, event) {
    pause(false);
    showFrame(s.frame + delta, event);
    send();
  }

  function key(event) {
    if (instruments.active !== root || event.target.closest?.(INTERACTIVE_TARGETS)) return;
    if (event.key === "ArrowLeft" || event.key === "ArrowRight") step(event.key === "ArrowLeft" ? -1 : 1, event);
    else if (event.key === " ") (s.playing ? pause : play)();
    else return;
    event.preventDefault();
  }

  const use = () => (instruments.active = root);
  root.addEventListener("pointerdown", use);
  root.addEventListener("focusin", use);
  document.addEventListener("keydown", key);
  instruments.active ??= root;
  ui.first.onclick = (e) => step(-Infinity, e);
  ui.last.onclick = (e) => step(Infinity, e);
  ui.back.onclick = (e) => step(-1, e);
  ui.forward.onclick = (e) => step(1, e);
  ui.play.onclick = () => (s.playing ? pause() : play());
  ui.slider.addEventListener("input", (e) => {
    pause(false);
    showFrame(Number(ui.slider.value), e);
  });
  ui.slider.addEventListener("change", send);

  function pickStart(event) {
    // Clicking the exact field (the left subplot) sets the ascent's start, to 3 decimals.
    const gd = figs.fields;
    const xa = gd._fullLayout?.xaxis;
    const ya = gd._fullLayout?.yaxis;
    const area = gd.querySelector(".nsewdrag[data-subplot=xy]");
    if (!xa || !ya || !area) return;
    const box = area.getBoundingClientRect();
    const x = xa.p2l(event.clientX - box.left);
    const y = ya.p2l(event.clientY - box.top);
    if (!(x >= -0.03 && x <= 1.03 && y >= -0.03 && y <= 1.03)) return;
    s.controls.start1 = Math.round(Math.min(Math.max(x, 0), 1) * 1000) / 1000;
    s.controls.start2 = Math.round(Math.min(Math.max(y, 0), 1) * 1000) / 1000;
    pause(false);
    s.frame = s.controls.ascent_steps;
    showControls();
    redraw(["square", "returns"], event);
    send();
  }
  figs.fields.addEventListener("click", pickStart);

  return {
    async update(data, setStateValue) {
      s.setState = setStateValue;
      s.data = data;
      await pvnPlotly.load(data.plotly);
      decodeArrays(data.figures);
      const spec = JSON.stringify(data.spec);
      if (s.spec !== spec) {
        s.spec = spec;
        buildControls(data.spec);
        showControls();
      }
      if (data.cloud && data.cloud !== s.cloudSource) {
        s.cloudSource = data.cloud;
        s.cloudX = decodeArray(data.cloud);
        s.cloudOut = { V: new Float64Array(s.cloudX.length), J: new Float64Array(s.cloudX.length / 2) };
      }
      s.gridSize = data.gridSize;
      const L = data.learned;
      s.learned = L ? { ...L, W1: decodeArray(L.W1), b1: decodeArray(L.b1), W2: decodeArray(L.W2),
        b2: decodeArray(L.b2), train: decodeArray(L.train), test: decodeArray(L.test) } : null;
      for (const name of Object.keys(texts)) if (name !== "ascent") texts[name].innerHTML = data.texts[name] || "";
      const fresh = data.version !== s.version;
      const look = JSON.stringify([data.figures, data.config]);
      if (look !== s.look) {
        // Another look (the projector mode, the download format): styles and configs anew. A new PVN alone keeps
        // them, so plotly redraws nothing and only the canvas is painted again.
        s.look = look;
        s.looks = {};
        s.configs = {};
        s.signatures = {};
      }
      s.version = data.version;
      if (data.revision !== s.revision) {
        // The server set the controls (first draw, a link, Paper settings, Random MDP): take them.
        s.revision = data.revision;
        s.controls = { ...data.controls };
        s.frame = data.frame ?? s.controls.ascent_steps;
        pause(false);
        showControls();
      } else if (!fresh) return; // only the controls this page sent, coming back: nothing to redraw
      redraw(["polytope", "fields", "square", "returns"]);
      if (fresh && s.view) {
        cancelAnimationFrame(s.scheduled); // a new PVN: at once, before Streamlit redraws the page's other charts
        draw();
      }
    },
    destroy() {
      s.playing = false;
      cancelAnimationFrame(s.raf);
      cancelAnimationFrame(s.scheduled);
      clearTimeout(s.sendTimer);
      document.removeEventListener("keydown", key);
      if (instruments.active === root) instruments.active = null;
      Object.values(figs).forEach((div) => pvnPlotly.Plotly?.purge(div));
      root.remove();
      delete parent[INSTRUMENT];
    },
  };
}

const INTERACTIVE_TARGETS = "input, select, textarea, button, [contenteditable], [role=slider]";

export default function polytopeInstrument({ data, parentElement, setStateValue }) {
  const p = (parentElement[INSTRUMENT] ??= createInstrument(parentElement));
  const generation = (p.generation = (p.generation || 0) + 1);
  p.update(data, setStateValue).catch((error) => console.error("polytope instrument:", error));
  return () => {
    if (generation === p.generation) p.destroy();
  };
}
