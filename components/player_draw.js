// The player's drawing (components/player.js): the newest frame asked for, one at a time. Playing: plotly's own
// fast path (Plotly.animate without a redraw: only the changed traces' points move) and a relayout for shapes and
// annotations, or for an animation that asks for it the moving parts painted over plotly (player_paint.js);
// paused: the exact frame with Plotly.react (names, hovers, legend, titles).
// Concatenated before player.js (ui/browser_player.py).
//
// Stamps on the player's root: data-frame and data-drawn (frames drawn) after each frame, data-draw-ms its drawing
// time, and after a view switch data-switch-ms (from the change event to the animation frame after the redraw)
// and data-switched (browserbench/views.py reads them).

/** Draws the newest wanted frame (`s.wanted`); frames asked for while one is drawn collapse into the last. */
async function drawWanted(inst) {
  const s = inst.s;
  if (s.busy) return;
  s.busy = true;
  try {
    while (s.wanted !== null) {
      const t = s.wanted;
      s.wanted = null;
      const t0 = performance.now();
      await drawPlayerFrame(inst, t, s.playing);
      inst.root.dataset.drawMs = (performance.now() - t0).toFixed(1); // the last frame's drawing time
      if (s.inputAt !== null) stampSwitch(inst);
      s.drawn += 1;
      inst.root.dataset.frame = String(t);
      inst.root.dataset.drawn = String(s.drawn);
    }
  } finally {
    s.busy = false;
  }
}

async function drawPlayerFrame(inst, t, quick) {
  const s = inst.s;
  const anim = s.anim;
  await Promise.all(
    Object.entries(anim.figures).map(async ([name, base]) => {
      const now = anim.frames[t][name];
      if (!quick || s.shown === null) {
        if (anim.painted) clearPaintedFrame(inst, name);
        const fig = merged(base, s.styled[name], now);
        return pvnPlotly.Plotly.react(s.divs[name], fig.data, fig.layout, (s.data.config || {})[name] || {});
      }
      if (anim.painted) return paintPlayerFrame(inst, name, base, now);
      moveFrame(inst, name, base, anim.frames[s.shown][name], now);
    }),
  );
  s.shown = t;
}

function moveFrame(inst, name, base, before, now) {
  // From the frame shown (`before`) to `now` while playing: the changed traces animated, the layout relaid out.
  const { s, root } = inst;
  const Plotly = pvnPlotly.Plotly;
  const div = s.divs[name];
  const indices = [...new Set([...Object.keys(before?.traces || {}), ...Object.keys(now?.traces || {})])];
  if (indices.length) {
    const data = indices.map((i) => {
      const keys = new Set([...Object.keys(before?.traces?.[i] || {}), ...Object.keys(now?.traces?.[i] || {})]);
      const target = { ...base.data[Number(i)], ...(now?.traces?.[i] || {}) };
      return Object.fromEntries([...keys].filter((k) => k in target).map((k) => [k, target[k]]));
    });
    const opts = { frame: { duration: 0, redraw: false }, transition: { duration: 0 }, mode: "immediate" };
    const a0 = performance.now();
    Plotly.animate(div, { data, traces: indices.map(Number) }, opts); // its promise waits a frame more
    root.dataset[`anim_${name}`] = (performance.now() - a0).toFixed(1);
  }
  const update = quickLayout(before?.layout, now?.layout, merged(base, s.styled[name], now).layout, div);
  const r0 = performance.now();
  if (Object.keys(update).length) Plotly.relayout(div, update);
  root.dataset[`relayout_${name}`] = (performance.now() - r0).toFixed(1) + JSON.stringify(Object.keys(update));
}

function stampSwitch(inst) {
  // A view switched: from its change event to the animation frame after the redraw (bench: views).
  const s = inst.s;
  const at = s.inputAt;
  s.inputAt = null;
  requestAnimationFrame(() => {
    inst.root.dataset.switchMs = (performance.now() - at).toFixed(1);
    inst.root.dataset.switched = String((s.switched = (s.switched || 0) + 1));
  });
}
