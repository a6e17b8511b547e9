// Painted playback (components/player.js), for animations that ask for it (`animation.painted`: the polytope's
// active rounds, pvnviz/figures/polytope_rounds.py). plotly's own fast path costs a whole-figure pass per frame
// (its defaults and calc run again however few points move: 35-45 ms a frame in a Chromium without a GPU); here,
// while the player plays, what the frames move (the traces and layout path shapes any frame changes) is painted on
// a canvas over plotly's plot instead, in plotly's own axis coordinates (plotly_adapter.js, canvas_layer.js's
// painters), and plotly draws the rest once, with those parts emptied. Paused, the player draws the exact frame
// with plotly (hovers, names) and the canvas is cleared. Concatenated after canvas_layer.js, before player_draw.js.

/** What the animation's frames move in figure `name`: {traces: trace indices, shapes: shape indices}. */
function movingParts(anim, name) {
  const traces = new Set();
  const shapes = new Set();
  for (const frame of anim.frames) {
    const change = frame?.[name];
    if (!change) continue;
    for (const i of Object.keys(change.traces || {})) traces.add(Number(i));
    (change.layout?.shapes || []).forEach((shape, i) => shape?.type === "path" && shapes.add(i));
  }
  return { traces, shapes };
}

/** Frame `now` of figure `name` while playing: plotly's drawing without the moving parts (once, when playback
 * starts), the moving parts painted over it. */
async function paintPlayerFrame(inst, name, base, now) {
  const { s } = inst;
  const div = s.divs[name];
  const fig = merged(base, s.styled[name], now);
  const moving = (s.moving[name] ??= movingParts(s.anim, name));
  if (!s.emptied[name]) {
    s.emptied[name] = true;
    const data = fig.data.map((trace, i) => (moving.traces.has(i) ? { ...trace, x: [], y: [] } : trace));
    const layout = { ...fig.layout, shapes: (fig.layout.shapes || []).filter((_, i) => !moving.shapes.has(i)) };
    await pvnPlotly.Plotly.react(div, data, layout, (s.data.config || {})[name] || {});
  }
  const ctx = overlayContext(div);
  if (!ctx) return;
  paintTitle(ctx, div, fig.layout.title);
  (fig.layout.shapes || []).forEach((shape, i) => moving.shapes.has(i) && paintPathShape(ctx, div, shape));
  for (const i of moving.traces) {
    const trace = fig.data[i];
    if (trace && trace.visible !== false && trace.x?.length) paintTrace(ctx, div, trace);
  }
}

/** Clears the painted frame of figure `name` (plotly draws the exact frame next, moving parts included). */
function clearPaintedFrame(inst, name) {
  inst.s.emptied[name] = false;
  const div = inst.s.divs[name];
  const canvas = div?.querySelector("canvas.pvn-overlay");
  canvas?.getContext("2d").clearRect(0, 0, canvas.width, canvas.height);
  div?.querySelector(".gtitle")?.style.removeProperty("visibility");
}

function paintTitle(ctx, div, title) {
  // The frame's title where plotly drew the first frame's (its SVG text: position, anchor, font), plotly's hidden:
  // one line per <br> from its first line's baseline down, 1.3 sizes apart as plotly sets them, bold where the
  // title is (tags dropped).
  const node = div.querySelector(".gtitle");
  const text = typeof title === "string" ? title : title?.text;
  if (!node || !text) return;
  node.style.visibility = "hidden";
  const style = getComputedStyle(node);
  const size = parseFloat(style.fontSize) || 16;
  ctx.save();
  ctx.font = `${text.includes("<b>") ? "bold " : ""}${size}px ${style.fontFamily}`;
  ctx.fillStyle = style.fill || "#444";
  const anchor = node.getAttribute("text-anchor");
  ctx.textAlign = anchor === "middle" ? "center" : anchor === "end" ? "right" : "left";
  const lines = text.split(/<br\s*\/?>/i).map((line) => line.replace(/<[^>]+>/g, ""));
  const [x, y] = [Number(node.getAttribute("x")), Number(node.getAttribute("y"))];
  lines.forEach((line, k) => ctx.fillText(line, x, y + k * 1.3 * size)); // y: the first line's baseline
  ctx.restore();
}

function overlayContext(div) {
  // A canvas over plotly's plot (above its first SVG, below its legend and hover layer), sized to the figure at
  // the screen's pixel ratio, cleared; null before plotly has drawn the figure.
  const box = plotlyFigureBox(div);
  const container = div.querySelector(".svg-container");
  const plot = container?.querySelector(".main-svg");
  if (!box || !plot) return null;
  let canvas = container.querySelector("canvas.pvn-overlay");
  if (!canvas) {
    canvas = document.createElement("canvas");
    canvas.className = "pvn-overlay";
    canvas.style.cssText = "position:absolute;left:0;top:0;pointer-events:none";
    plot.after(canvas);
  }
  const dpr = window.devicePixelRatio || 1;
  const [w, h] = [Math.round(box.width * dpr), Math.round(box.height * dpr)];
  if (canvas.width !== w || canvas.height !== h) {
    [canvas.width, canvas.height] = [w, h];
    [canvas.style.width, canvas.style.height] = [`${box.width}px`, `${box.height}px`];
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, box.width, box.height);
  return ctx;
}

function paintPathShape(ctx, div, shape) {
  // A layout shape of type "path" in data coordinates ("M x,y L x,y ..."; M starts a new piece), clipped to its
  // plot area, in its line's colour and width at its opacity.
  const xa = plotlyAxis(div, shape.xref || "x");
  const ya = plotlyAxis(div, shape.yref || "y");
  if (!xa || !ya || shape.visible === false) return;
  ctx.save();
  ctx.beginPath();
  ctx.rect(xa.offset, ya.offset, xa.length, ya.length);
  ctx.clip();
  ctx.globalAlpha = shape.opacity ?? 1;
  ctx.strokeStyle = shape.line?.color || "#444";
  ctx.lineWidth = shape.line?.width ?? 2;
  ctx.beginPath();
  for (const [, command, x, y] of String(shape.path || "").matchAll(/([ML])\s*(-?[\d.eE+-]+)\s*,\s*(-?[\d.eE+-]+)/g)) {
    const [px, py] = [xa.toPixel(Number(x)), ya.toPixel(Number(y))];
    if (command === "M") ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  }
  ctx.stroke();
  ctx.restore();
}
