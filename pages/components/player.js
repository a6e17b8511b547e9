// One player for every animation of the app (ui/browser_player.py): the polytope ascents (Section 6.1, Fig. 3),
// the probing states moving as they are trained (Section 4), the CartPole and Swimmer replays (Section 6.2-6.3).
//
// The server sends the animation once (pvnviz/figures/frames.py: the first frame's figures whole, then what each
// frame changes); this module plays it with requestAnimationFrame at the chosen speed, and steps, seeks and
// reads the keyboard (← → Space) in the page. The frame shown goes back to Python (setStateValue "frame", and so
// into the URL) only when playback pauses or the user steps or seeks: playing runs no server rerun.
//
// data = {id, plotly, config: {figure name: plotly config}, animation: {figures, frames, labels}, frame, fps,
//         label, widths: {figure name: flex weight}}

const PLAYER = Symbol.for("pvn.player");

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

function createPlayer(parent) {
  const root = document.createElement("div");
  root.className = "pvn-player";
  root.tabIndex = 0;
  const stage = document.createElement("div");
  stage.className = "pvn-player-stage";
  root.appendChild(stage);
  parent.appendChild(root);
  const ui = playerBar(root);
  const s = { id: null, frame: 0, playing: false, divs: {}, data: null, setState: null, raf: 0, busy: false };
  s.shown = null; // the frame the figures show
  s.wanted = null;
  s.drawn = 0;

  async function drawFrame(t, quick) {
    // Playing: Plotly.animate without a redraw (plotly's own fast path: only the changed traces' points move)
    // and a relayout for shapes and titles; paused: the exact frame with Plotly.react (names, hovers, legend).
    const anim = s.data.animation;
    const Plotly = pvnPlotly.Plotly;
    await Promise.all(
      Object.entries(anim.figures).map(async ([name, base]) => {
        const div = s.divs[name];
        const now = anim.frames[t][name];
        if (!quick || s.shown === null) {
          const fig = merged(base, s.styled[name], now);
          return Plotly.react(div, fig.data, fig.layout, (s.data.config || {})[name] || {});
        }
        const before = anim.frames[s.shown][name];
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
      }),
    );
    s.shown = t;
  }

  async function draw() {
    // Draw the newest wanted frame; frames asked for while one is drawn collapse into the last.
    if (s.busy) return;
    s.busy = true;
    try {
      while (s.wanted !== null) {
        const t = s.wanted;
        s.wanted = null;
        const t0 = performance.now();
        await drawFrame(t, s.playing);
        root.dataset.drawMs = (performance.now() - t0).toFixed(1); // the last frame's drawing time
        s.drawn += 1;
        root.dataset.frame = String(t);
        root.dataset.drawn = String(s.drawn);
      }
    } finally {
      s.busy = false;
    }
  }

  function show(t) {
    const last = s.data.animation.frames.length - 1;
    s.frame = Math.min(Math.max(t, 0), last);
    ui.slider.value = String(s.frame);
    const label = s.data.animation.labels[s.frame];
    ui.caption.textContent = `${s.data.label} ${label} (${s.frame + 1} of ${last + 1})${s.playing ? " — playing" : ""}`;
    s.wanted = s.frame;
    draw();
  }

  function report() {
    if (s.setState) s.setState("frame", s.frame);
  }

  function pause() {
    if (!s.playing) return;
    s.playing = false;
    s.stopClock?.();
    ui.play.innerHTML = icon("play");
    root.dataset.playing = "false";
    show(s.frame);
    report();
  }

  function play() {
    const last = s.data.animation.frames.length - 1;
    if (s.frame >= last) show(0);
    s.playing = true;
    root.dataset.playing = "true";
    ui.play.innerHTML = icon("pause");
    s.stopClock = paced(() => 1000 / (s.data.fps * Number(ui.speed.value)), () => {
      if (!s.playing) return false;
      if (s.frame >= last) return pause(), false;
      show(s.frame + 1);
    });
  }

  function step(delta) {
    pause();
    show(s.frame + delta);
    report();
  }

  const unbindKeys = playerKeys(root, step, () => (s.playing ? pause : play)());
  ui.first.onclick = () => step(-Infinity);
  ui.last.onclick = () => step(Infinity);
  ui.back.onclick = () => step(-1);
  ui.forward.onclick = () => step(1);
  ui.play.onclick = () => (s.playing ? pause() : play());
  ui.slider.addEventListener("input", () => {
    pause();
    show(Number(ui.slider.value));
  });
  ui.slider.addEventListener("change", report);

  return {
    async update(data, setStateValue) {
      s.setState = setStateValue;
      const fresh = data.id !== s.id;
      s.data = data;
      if (!fresh) return;
      s.id = data.id;
      pause();
      await pvnPlotly.load(data.plotly);
      decodeArrays(data.animation);
      stage.replaceChildren();
      s.shown = null;
      s.divs = {};
      s.styled = {};
      for (const name of Object.keys(data.animation.figures)) {
        const div = document.createElement("div");
        div.className = "pvn-player-figure";
        div.style.flex = String((data.widths || {})[name] || 1);
        stage.appendChild(div);
        s.divs[name] = div;
        s.styled[name] = pvnPlotly.look(data.animation.figures[name].layout || {}, root);
      }
      ui.slider.max = String(data.animation.frames.length - 1);
      show(data.frame ?? 0);
    },
    destroy() {
      s.playing = false;
      s.stopClock?.();
      unbindKeys();
      Object.values(s.divs).forEach((div) => pvnPlotly.Plotly?.purge(div));
      root.remove();
      delete parent[PLAYER];
    },
  };
}

export default function player({ data, parentElement, setStateValue }) {
  const p = (parentElement[PLAYER] ??= createPlayer(parentElement));
  const generation = (p.generation = (p.generation || 0) + 1);
  p.update(data, setStateValue).catch((error) => console.error("player:", error));
  // Streamlit runs a superseded call's cleanup at once: only the latest call's cleanup ends the player.
  return () => {
    if (generation === p.generation) p.destroy();
  };
}
