// The player's animations (components/player.js): a frame's figure from the first frame's and what the frame
// changes, the cheapest relayout between two frames, and the probing states' animation for two chosen axes.
// Concatenated before player.js (ui/browser_player.py).

function bold(title) {
  const t = typeof title === "string" ? { text: title } : title;
  return t?.text && !t.text.startsWith("<b>") ? { ...t, text: `<b>${t.text}</b>` } : title;
}

function merged(base, styled, change) {
  // A frame's figure: the first frame's (its layout with the Streamlit look), with this frame's changed trace
  // properties and layout entries.
  if (!change) return { data: base.data, layout: styled };
  const data = base.data.map((trace, i) => {
    const props = change.traces[String(i)];
    if (!props) return trace;
    const out = { ...trace };
    for (const [k, v] of Object.entries(props)) (v === null ? delete out[k] : (out[k] = v));
    return out;
  });
  const layout = { ...styled };
  for (const [k, v] of Object.entries(change.layout || {})) (v === null ? delete layout[k] : (layout[k] = v));
  if (change.layout?.title) layout.title = bold(change.layout.title);
  return { data, layout };
}

function quickLayout(before, now, layout, div) {
  // The layout entries a frame changes, as plotly's cheapest relayout: shapes and annotations item by item
  // (plotly then redraws only those), titles left for the exact redraw when playback pauses.
  const update = {};
  for (const k of new Set([...Object.keys(before || {}), ...Object.keys(now || {})])) {
    if (k === "title") continue;
    const old = div.layout?.[k];
    const value = layout[k] ?? null;
    if ((k === "shapes" || k === "annotations") && Array.isArray(old) && Array.isArray(value) && old.length === value.length) {
      value.forEach((item, i) => {
        for (const [prop, v] of Object.entries(item)) {
          if (JSON.stringify(old[i][prop]) !== JSON.stringify(v)) update[`${k}[${i}].${prop}`] = v;
        }
      });
    } else update[k] = value;
  }
  return update;
}

/** probes_animation (pvnviz/figures/experiment.py) for axes i, j from the snapshots `p.snaps` (S, n, D flat):
 * the template's look, the starting rings, the paths, the probes at each snapshot (traces found by their roles,
 * `meta`), the bounds and the ranges. */
function probesAnimation(template, p, i, j) {
  const [S, n, D] = p.shape;
  const at = (s, q, d) => p.snaps[(s * n + q) * D + d];
  const column = (s, d) => Float64Array.from({ length: n }, (_, q) => at(s, q, d));
  const trail = (d) => {
    const out = new Float64Array(n * (S + 1));
    let k = 0;
    for (let q = 0; q < n; q++) {
      for (let s = 0; s < S; s++) out[k++] = at(s, q, d);
      out[k++] = NaN;
    }
    return out;
  };
  const range = (d) => {
    let lo = Infinity;
    let hi = -Infinity;
    for (let k = d; k < p.snaps.length; k += D) {
      lo = Math.min(lo, p.snaps[k]);
      hi = Math.max(hi, p.snaps[k]);
    }
    const bound = p.bounds[d];
    if (bound) [lo, hi] = [Math.min(lo, bound[0]), Math.max(hi, bound[1])];
    const pad = 0.08 * (hi - lo + 1e-6);
    return [lo - pad, hi + pad];
  };
  const line = (axis, v) =>
    axis === "x"
      ? { line: p.line, type: "line", x0: v, x1: v, xref: "x", y0: 0, y1: 1, yref: "y domain" }
      : { line: p.line, type: "line", x0: 0, x1: 1, xref: "x domain", y0: v, y1: v, yref: "y" };
  const name = Object.keys(template.figures)[0];
  const base = template.figures[name];
  const title = (s) => ({ ...base.layout.title, text: `${p.title}: step ${p.steps[s]}` });
  const data = base.data.map((trace) => ({ ...trace }));
  // the traces by their roles (`meta`, pvnviz/figures/experiment.py's PROBES_*), not by name or position
  const role = Object.fromEntries(base.data.map((trace, k) => [trace.meta, k]));
  const [start, paths, now] = ["probes:start", "probes:paths", "probes:now"].map((r) => role[r]);
  [data[start].x, data[start].y] = [column(0, i), column(0, j)];
  [data[paths].x, data[paths].y] = [trail(i), trail(j)];
  [data[now].x, data[now].y] = [column(0, i), column(0, j)];
  const axis = (old, d) => ({ ...old, title: { ...old?.title, text: p.labels[d] }, range: range(d) });
  const layout = {
    ...base.layout,
    title: title(0),
    shapes: [...(p.bounds[i] || []).map((v) => line("x", v)), ...(p.bounds[j] || []).map((v) => line("y", v))],
    xaxis: axis(base.layout.xaxis, i),
    yaxis: axis(base.layout.yaxis, j),
  };
  const frames = Array.from({ length: S }, (_, s) =>
    s === 0 ? {} : { [name]: { traces: { [now]: { x: column(s, i), y: column(s, j) } }, layout: { title: title(s) } } },
  );
  return { figures: { [name]: { data, layout } }, frames, labels: p.steps };
}

/** The animation of the view chosen in `s.choice`: the probing states' for the chosen axes, the variant of the
 * chosen start and PVN, or the one animation. */
function chosenAnimation(s) {
  const source = s.animation;
  if (source.probes) return probesAnimation(source, source.probes, s.choice.x ?? 0, s.choice.y ?? 0);
  if (!source.variants) return source;
  const key = (s.data.choices || []).map((c) => s.choice[c.key] ?? 0).join("|");
  return source.variants[key] ?? Object.values(source.variants)[0];
}
