// The polytope instrument's drawing loop (components/polytope.js): at most one redraw an animation frame, and one
// at a time; each recomputes the view (polytope_views.js's computeView, with mdp.js's exact math) when the controls
// changed, builds the four figures from the server's templates, has plotly draw what it shows (legends, axes,
// colour bars: the cheapest plotly call that does it) and paints the rest on the canvas (canvas_layer.js).
// Concatenated before polytope.js (ui/polytope_instrument.py's MODULES).
//
// Each redraw stamps the instrument's root: data-drawn counts redraws, data-input-to-draw-ms is the time from the
// input event that asked for it to the animation frame after it (once the browser has painted what plotly and the
// canvas drew: browserbench/instrument.py reads it), data-draw-ms the redraw's own time.

/** Asks for a redraw of the figures `which` ("frame": the ascent step shown) on the next animation frame; an
 * `event` is what the redraw's input-to-draw time counts from. */
function redraw(inst, which, event) {
  const s = inst.s;
  for (const w of which) s.dirty.add(w);
  if (event && s.eventAt === null) s.eventAt = event.timeStamp || performance.now();
  if (!s.scheduled) s.scheduled = requestAnimationFrame(() => drawFigures(inst));
}

/** Draws what is dirty now (one redraw at a time: a busy one puts this one on the next frame). */
async function drawFigures(inst) {
  const s = inst.s;
  s.scheduled = 0;
  if (!s.data || !pvnPlotly.Plotly) return;
  if (s.busy) return void (s.scheduled = requestAnimationFrame(() => drawFigures(inst)));
  s.busy = true;
  try {
    await drawDirty(inst);
  } finally {
    s.busy = false;
  }
}

async function drawDirty(inst) {
  const s = inst.s;
  const dirty = [...s.dirty];
  s.dirty.clear();
  const eventAt = s.eventAt;
  s.eventAt = null;
  const t0 = performance.now();
  const controlsChanged = dirty.some((d) => d !== "frame");
  if (controlsChanged) s.view = viewWithRanges(s);
  const v = s.view;
  const t = Math.min(s.frame, s.controls.ascent_steps);
  const names = dirty.includes("frame") ? [...new Set([...dirty.filter((d) => d !== "frame"), "square", "returns"])] : dirty;
  const figures = buildFigures(s, names, v, t);
  await Promise.all(names.map((name) => drawFigure(inst, name, figures[name])));
  inst.root.dataset.drawMs = (performance.now() - t0).toFixed(1); // computing, plotly's drawing and painting
  showTexts(inst, v, t);
  stampRedraw(inst, eventAt);
}

function viewWithRanges(s) {
  // The view of the controls, with its axis, objective and colour ranges held still while dragged (steady).
  const v = computeView(s.controls, s);
  const want = polytopeAxes(v);
  v.axes = { x: steady(s.axes?.x, want.x, s.dragging), y: steady(s.axes?.y, want.y, s.dragging) };
  v.jRange = steady(s.jRange, objectiveRange(v), s.dragging);
  v.colorRange = steady(s.colorRange, extent(v.cloud.J), s.dragging); // the colour bar's J range
  s.axes = v.axes;
  s.jRange = v.jRange;
  s.colorRange = v.colorRange;
  v.optimumName = `optimum (J=${v.optimum.J.toFixed(3)})`; // the legend follows a drag too
  return v;
}

function buildFigures(s, names, v, t) {
  // Plotly writes into the layout and trace objects it is given (autorange, uid...): each draw starts from a copy
  // of the templates, so what plotly is asked to draw can be compared with the last time.
  const tpl = (name) => structuredClone(s.data.figures[name]);
  const builders = {
    polytope: () => ({ ...polytopeFigure(tpl("polytope"), v), colorRange: v.colorRange }),
    fields: () => fieldsFigure(tpl("fields"), v, s.gridSize),
    square: () => squareFigure(tpl("square"), v, t, s.gridSize, s.playing),
    returns: () => returnsFigure(tpl("returns"), v, t),
  };
  return Object.fromEntries(names.map((name) => [name, builders[name]()]));
}

async function drawFigure(inst, name, fig) {
  // One figure in the Streamlit look: plotly draws its plotted part, the canvas the rest.
  const s = inst.s;
  // The same template and config objects on every redraw: a new one makes Plotly.react redraw everything.
  const look = (s.looks[name] ??= pvnPlotly.look(structuredClone(s.data.figures[name].layout), inst.root));
  const title = fig.layout.title?.text?.startsWith("<b>") ? fig.layout.title : look.title;
  fig.layout = { ...fig.layout, template: look.template, title };
  s.full[name] = fig;
  const { plotted, painted } = split(fig);
  const config = (s.configs[name] ??= withDownload(s, (s.data.config || {})[name] || {}, name, painted.length > 0));
  const f0 = performance.now();
  await plotFigure(inst, name, plotted, config);
  const gd = inst.figs[name];
  paint(gd, painted);
  gd.pvnPainted = painted; // what the canvas shows, for tests and the benchmark
  inst.root.dataset[`ms_${name}`] = (performance.now() - f0).toFixed(1);
}

// What a drag changes in plotly's part of a figure besides the axis ranges: the legend's names (the optimum's J)
// and the colour bar's range (the painted cloud's colour scale). Plotly.update redraws these alone.
const RESTYLED = /^(name|marker\.(cmin|cmax|color))$/;

/** Has plotly draw `plotted` (the painted traces are NaN placeholders) with the cheapest call that does it:
 * nothing when nothing changed (only the canvas does); when only the axis ranges and RESTYLED attributes changed,
 * one Plotly.update (or relayout); anything else: Plotly.react. */
async function plotFigure(inst, name, plotted, config) {
  const s = inst.s;
  const gd = inst.figs[name];
  const Plotly = pvnPlotly.Plotly;
  const drawn = { layout: JSON.stringify(plotted.layout, (k, v) => (k === "range" ? undefined : v)),
    traces: plotted.data.map((trace) => JSON.parse(JSON.stringify(trace))) }; // typed arrays and NaN as JSON has them
  const last = s.plotted[name];
  s.plotted[name] = drawn;
  const same = last && plotlyDrawn(gd) && last.layout === drawn.layout && last.traces.length === drawn.traces.length;
  const changes = same ? drawn.traces.map((trace, i) => changedPaths(last.traces[i], trace)) : null;
  const counter = (kind) => (inst.root.dataset[`${kind}_${name}`] = String(Number(inst.root.dataset[`${kind}_${name}`] || 0) + 1));
  if (!changes?.every((paths, i) => paths.every((path) => RESTYLED.test(path) && valueAt(plotted.data[i], path) !== undefined))) {
    await Plotly.react(gd, plotted.data, plotted.layout, config);
    return void counter("reacts");
  }
  const ranges = Object.fromEntries(Object.entries(axisRanges(plotted.layout))
    .filter(([k, r]) => String(gd.layout[k.split(".")[0]]?.range) !== String(r)));
  const indices = changes.flatMap((paths, i) => (paths.length ? [i] : []));
  const update = {}; // path -> the new value of each trace in `indices` (undefined: leave it as it is)
  for (const i of indices) {
    for (const path of changes[i]) (update[path] ??= indices.map(() => undefined))[indices.indexOf(i)] = valueAt(plotted.data[i], path);
  }
  if (indices.length) await Plotly.update(gd, update, ranges, indices);
  else if (Object.keys(ranges).length) await Plotly.relayout(gd, ranges);
  counter("relayouts");
}

function changedPaths(before, after, prefix = "") {
  // The dotted paths ("marker.cmin") whose values differ between two JSON-like objects; plain objects are compared
  // key by key, anything else whole.
  const plain = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const out = [];
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [a, b] = [before[k], after[k]];
    if (plain(a) && plain(b)) out.push(...changedPaths(a, b, `${prefix}${k}.`));
    else if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${prefix}${k}`);
  }
  return out;
}

function valueAt(object, path) {
  return path.split(".").reduce((o, k) => o?.[k], object);
}

function withDownload(s, config, name, painting) {
  // A figure with painted traces downloads the whole figure (downloadButton), not plotly's SVG alone.
  if (!painting) return config;
  return { ...config, modeBarButtonsToRemove: [...(config.modeBarButtonsToRemove || []), "toImage"],
    modeBarButtonsToAdd: [downloadButton(() => s.full[name], config)] };
}

function showTexts(inst, v, t) {
  // The badge, the optimum's line, the ascent's sentence and the player's bar for the view drawn; the DOM is
  // written only where the text changed (a write costs the page a layout).
  const s = inst.s;
  const steps = s.controls.ascent_steps;
  const ends = v.learned ? `Learned ascent ends at J = ${v.learned.J[v.learned.J.length - 1].toFixed(3)}, exact ` : "Exact ";
  inst.badge.hidden = !v.stale;
  inst.root.dataset.stale = String(Boolean(v.stale));
  setHtml(s, inst.optimumLine,
    `Optimal policy [P(a1|s1), P(a1|s2)] = [${v.optimum.x.join(", ")}] → <b>J = ${v.optimum.J.toFixed(4)}</b>`);
  setHtml(s, inst.texts.ascent,
    `${s.data.texts.ascent} ${ends}ascent at ${v.exact.J[v.exact.J.length - 1].toFixed(3)}, optimum ${v.optimum.J.toFixed(3)}.`);
  setChanged(inst.bar.slider, "max", String(steps));
  setChanged(inst.bar.slider, "value", String(t));
  setChanged(inst.bar.caption, "textContent", `ascent step ${t} (${t + 1} of ${steps + 1})${s.playing ? " — playing" : ""}`);
  inst.root.dataset.frame = String(t);
}

function setChanged(target, prop, value) {
  if (target[prop] !== value) target[prop] = value;
}

function setHtml(s, target, html) {
  // innerHTML reads back serialized, not as written: the last HTML written to each element is kept.
  if (s.shown.get(target) === html) return;
  s.shown.set(target, html);
  target.innerHTML = html;
}

function stampRedraw(inst, eventAt) {
  // The time from the input event to the end of this redraw: the next animation frame, once the browser has
  // painted what plotly and the canvas drew.
  requestAnimationFrame(() => {
    inst.s.drawn += 1;
    inst.root.dataset.drawn = String(inst.s.drawn);
    if (eventAt !== null) inst.root.dataset.inputToDrawMs = (performance.now() - eventAt).toFixed(1);
  });
}
