// Plotly traces painted on a canvas under plotly's SVG (for components/polytope.js). Where plotly put the axes
// comes from plotly_adapter.js.

// ---- a canvas under plotly's SVG for the thousands of points and arrows --------------------------------------
// Plotly redraws every SVG point (or a software-WebGL scene) on each update: 5,000 cloud points and three
// 400-arrow fields would take most of a redraw. Traces whose meta is in LAYERED are painted on a canvas below the plot
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
    // A WebGL trace kept as an SVG one: plotly then keeps no WebGL canvases for a figure whose WebGL traces are all
    // painted, canvases a browser without a GPU composites in software on every frame. Its legend entry looks the
    // same, and its colour bar keeps the template's WebGL defaults (no outline, no ticks).
    const type = trace.type === "scattergl" ? "scatter" : trace.type;
    const kept = { ...trace, type, x: [NaN], y: [NaN], customdata: undefined, text: undefined,
      hovertemplate: undefined, fade: undefined };
    if (trace.showlegend === false) kept.name = undefined; // a name only the hover label showed
    if (ArrayBuffer.isView(trace.marker?.color) || typeof trace.marker?.color?.[0] === "number") { // a colour scale
      const [lo, hi] = fig.colorRange ?? extent(trace.marker.color);
      const bar = trace.type === "scattergl" ? fig.layout.template?.data?.scattergl?.[0]?.marker?.colorbar : null;
      const colorbar = bar ? { ...bar, ...trace.marker.colorbar } : trace.marker.colorbar;
      kept.marker = { ...trace.marker, color: [lo], cmin: lo, cmax: hi, showscale: true, colorbar };
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
  // Paints `traces` (split's `painted`) on the canvas under `gd`'s SVG, in plotly's own axis coordinates; the
  // text labels painted go to gd.pvnNotes, {text, left, top, width, height} in figure pixels, apart.
  const box = plotlyFigureBox(gd);
  const container = gd.querySelector(".svg-container");
  if (!container || !box) return;
  const ctx = layerContext(container, box);
  gd.pvnNotes = [];
  for (const item of traces) {
    if (item.shape || item.note) paintNote(ctx, gd, box, item, gd.pvnNotes);
    else paintTrace(ctx, gd, item);
  }
}

function layerContext(container, { width: w, height: h }) {
  // The canvas under plotly's SVG (made once), sized to the figure at the screen's pixel ratio, cleared.
  let canvas = container.querySelector("canvas.pvn-layer");
  if (!canvas) {
    canvas = document.createElement("canvas");
    canvas.className = "pvn-layer";
    canvas.style.cssText = "position:absolute;left:0;top:0;pointer-events:none";
    container.insertBefore(canvas, container.firstChild);
  }
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return ctx;
}

function paintTrace(ctx, gd, trace) {
  // One scatter trace, clipped to its plot area (markers drawn over the axes' edges when cliponaxis is false).
  const xa = plotlyAxis(gd, trace.xaxis || "x");
  const ya = plotlyAxis(gd, trace.yaxis || "y");
  if (!xa || !ya) return;
  ctx.save();
  ctx.beginPath();
  ctx.rect(xa.offset, ya.offset, xa.length, ya.length);
  ctx.clip();
  const at = { X: xa.toPixel, Y: ya.toPixel };
  const mode = trace.mode ?? (trace.x.length < 20 ? "lines+markers" : "lines"); // plotly's default mode
  if (mode.includes("lines")) strokeLines(ctx, trace, at);
  if (mode.includes("markers")) {
    if (trace.cliponaxis === false) ctx.restore(), ctx.save();
    paintMarkers(ctx, trace, at);
  }
  ctx.restore();
}

function strokeLines(ctx, trace, { X, Y }) {
  // The trace's line, broken at every non-finite point (plotly's connectgaps: false).
  const { x, y } = trace;
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

function paintMarkers(ctx, trace, at) {
  const m = trace.marker || {};
  const bubbles = Array.isArray(m.size) || ArrayBuffer.isView(m.size); // plotly's default opacity for them: 0.7
  ctx.globalAlpha = (m.opacity ?? (bubbles ? 0.7 : 1)) * (trace.opacity ?? 1) * (trace.fade ?? 1);
  const colors = m.color;
  const numeric = colors && typeof colors !== "string" && typeof colors[0] === "number";
  if (numeric && !m.line?.width && !m.symbol) fillColorLevels(ctx, trace, at);
  else paintEachMarker(ctx, trace, at, numeric);
}

function fillColorLevels(ctx, trace, { X, Y }) {
  // The cloud: one path per colour (64 levels of the scale), filled once: 5,000 points in a few ms.
  const { x, y } = trace;
  const colors = trace.marker.color;
  const r = (trace.marker.size ?? 6) / 2;
  const span = (trace.cmax - trace.cmin) || 1;
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
}

const pointValue = (v, k, fallback) => ((Array.isArray(v) || ArrayBuffer.isView(v) ? v[k] : v) ?? fallback);

function paintEachMarker(ctx, trace, { X, Y }, numeric) {
  // Markers one by one: circles, squares, stars and crosses, each in its colour and size, outlined if the marker
  // says so (sizes, outline colours and widths: one for all or one per point, as plotly takes them).
  const { x, y } = trace;
  const m = trace.marker || {};
  const colors = m.color;
  const span = (trace.cmax - trace.cmin) || 1;
  for (let k = 0; k < x.length; k++) {
    if (!Number.isFinite(x[k]) || !Number.isFinite(y[k])) continue;
    const color = numeric ? viridis((colors[k] - trace.cmin) / span)
      : typeof colors === "string" ? colors : colors?.[k] || trace.line?.color || "#1f77b4";
    const r = pointValue(m.size, k, 6) / 2;
    const width = pointValue(m.line?.width, k, 0);
    const outline = width ? { color: pointValue(m.line.color, k, "#444"), width } : null;
    const [cx, cy] = [X(x[k]), Y(y[k])];
    ctx.beginPath();
    if (m.symbol === "x") {
      strokeCross(ctx, cx, cy, r, color, outline);
      continue;
    }
    markerPath(ctx, m.symbol, cx, cy, r);
    ctx.fillStyle = color;
    ctx.fill();
    if (outline) {
      ctx.strokeStyle = outline.color || "#444";
      ctx.lineWidth = outline.width;
      ctx.stroke();
    }
  }
}

function strokeCross(ctx, cx, cy, r, color, outline) {
  // plotly's "x" symbol: its outline's colour first, wider, then the cross in its own colour over it.
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
}

function markerPath(ctx, symbol, cx, cy, r) {
  // A square, a five-pointed star or (any other symbol) a circle of radius r around (cx, cy).
  if (symbol === "square") ctx.rect(cx - r, cy - r, 2 * r, 2 * r);
  else if (symbol === "star") {
    for (let p = 0; p < 10; p++) {
      const a = -Math.PI / 2 + (p * Math.PI) / 5;
      const rr = p % 2 ? r * 0.45 : r * 1.1;
      ctx.lineTo(cx + rr * Math.cos(a), cy + rr * Math.sin(a));
    }
    ctx.closePath();
  } else ctx.arc(cx, cy, r, 0, 2 * Math.PI);
}

function paintNote(ctx, gd, box, { shape, note }, placed = []) {
  // A horizontal line across its plot (add_hline's shape) or a text label (an annotation at data coordinates).
  const item = shape || note;
  const xa = plotlyAxis(gd, item.xref || "x");
  const ya = plotlyAxis(gd, item.yref || "y");
  if (!xa || !ya) return;
  const yDomain = (item.yref || "").endsWith("domain");
  const Y = yDomain ? ya.offset + (1 - note.y) * ya.length : ya.toPixel(shape ? shape.y0 : note.y);
  ctx.save();
  if (shape) {
    const line = shape.line || {};
    ctx.strokeStyle = line.color || "#444";
    ctx.lineWidth = line.width ?? 2;
    ctx.setLineDash(line.dash === "dash" ? [9, 9] : line.dash === "dot" ? [3, 3] : []);
    ctx.beginPath();
    ctx.moveTo(xa.offset, Y);
    ctx.lineTo(xa.offset + xa.length, Y);
    ctx.stroke();
  } else {
    const X = (note.xref || "").endsWith("domain") ? xa.offset + note.x * xa.length : xa.toPixel(note.x);
    paintLabel(ctx, box, note, X, Y, placed);
  }
  ctx.restore();
}

function paintLabel(ctx, box, note, X, Y, placed) {
  // A label stays inside the figure and clear of the labels in `placed` (corners of a polytope can be close): it
  // moves away from its point, a line at a time, and is added to `placed`.
  const font = note.font || {};
  ctx.font = `${note.text.startsWith("<i>") ? "italic " : ""}${font.size || 12}px ${box.fontFamily || "sans-serif"}`;
  const text = String(note.text).replace(/<[^>]+>/g, "");
  const w = ctx.measureText(text).width;
  const h = (font.size || 12) * 1.2;
  const left = Math.min(Math.max(note.xanchor === "left" ? X : X - w / 2, 2), box.width - w - 2);
  let top = note.yanchor === "top" ? Y + 2 : Y - (note.yshift || 0) - h / 2;
  const away = (note.yshift || 0) >= 0 ? -1 : 1; // a label above its point moves up, one below it down
  const clash = (t) => placed.some((p) => left - 2 < p.left + p.width + 2 && p.left - 2 < left + w + 2
    && t < p.top + p.height + 2 && p.top < t + h + 2);
  for (let k = 0; clash(top) && k < placed.length * 2; k++) top += away * (h + 3);
  placed.push({ text, left, top, width: w, height: h });
  if (note.bgcolor) {
    ctx.fillStyle = note.bgcolor;
    ctx.fillRect(left - 2, top, w + 4, h);
  }
  ctx.fillStyle = font.color || box.fontColor || "#444";
  ctx.textBaseline = "middle";
  ctx.fillText(text, left, top + h / 2);
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
