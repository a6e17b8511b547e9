// One player for every animation of the app (ui/browser_player.py): the polytope ascents (Section 6.1, Fig. 3),
// the probing states moving as they are trained (Section 4), the CartPole and Swimmer replays (Section 6.2-6.3).
//
// The server sends the animation once (pvnviz/figures/frames.py: the first frame's figures whole, then what each
// frame changes); this module plays it with requestAnimationFrame at the chosen speed, and steps, seeks and
// reads the keyboard (← → Space) in the page. The frame shown goes back to Python (setStateValue "frame", and so
// into the URL) only when playback pauses or the user steps or seeks: playing runs no server rerun.
//
// Views the page switches itself (drop-downs above the figures, `data.choices`): the replay's start and PVN from
// one animation per combination (`animation.variants`), the probing states' axes by projecting the snapshots
// (`animation.probes`) here, as pvnviz/figures/experiment.py's probes_animation does. A switch redraws at once
// and is reported once (setStateValue "choice", so the server can put it in the URL).
//
// Below the fold, a player keeps its place (`data.stageHeight`) and parses and draws its animation only when the
// reader scrolls near it (pvnPlotly.near); its caption names what it plays meanwhile.
//
// data = {id, plotly, config: {figure name: plotly config}, animation: {figures, frames, labels} | {variants} |
//         {figures, probes} (as JSON text) or url (where it is served: make run), frame, fps, label,
//         widths: {figure name: flex weight}, choices: [{key, label, options}], choice: {key: option index}}

const PLAYER = Symbol.for("pvn.player");
const FETCH_TRIES = 5; // reads of an animation's URL before the player says it is lost (1, 2, 4, 8 s apart)

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

function createPlayer(parent) {
  const root = document.createElement("div");
  root.className = "pvn-player";
  root.tabIndex = 0;
  const choicesRow = document.createElement("div");
  choicesRow.className = "pvn-player-choices";
  const stage = document.createElement("div");
  stage.className = "pvn-player-stage";
  root.append(choicesRow, stage);
  parent.appendChild(root);
  const ui = playerBar(root);
  const s = { id: null, frame: 0, playing: false, divs: {}, data: null, animation: null, setState: null, raf: 0, busy: false };
  s.shown = null; // the frame the figures show
  s.inputAt = null; // when a view switch not drawn yet was made (performance.now() clock)
  s.wanted = null;
  s.drawn = 0;

  async function drawFrame(t, quick) {
    // Playing: Plotly.animate without a redraw (plotly's own fast path: only the changed traces' points move)
    // and a relayout for shapes and titles; paused: the exact frame with Plotly.react (names, hovers, legend).
    const anim = s.anim;
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

  function stampSwitch() {
    // A view switched: from its change event to the animation frame after the redraw (bench: views).
    const at = s.inputAt;
    s.inputAt = null;
    requestAnimationFrame(() => {
      root.dataset.switchMs = (performance.now() - at).toFixed(1);
      root.dataset.switched = String((s.switched = (s.switched || 0) + 1));
    });
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
        if (s.inputAt !== null) stampSwitch();
        s.drawn += 1;
        root.dataset.frame = String(t);
        root.dataset.drawn = String(s.drawn);
      }
    } finally {
      s.busy = false;
    }
  }

  function show(t) {
    if (!s.anim) return; // not drawn yet (below the fold): nothing to show or play
    const last = s.anim.frames.length - 1;
    s.frame = Math.min(Math.max(t, 0), last);
    ui.slider.value = String(s.frame);
    const label = s.anim.labels[s.frame];
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
    if (!s.anim) return;
    const last = s.anim.frames.length - 1;
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

  function pick() {
    // The animation of the chosen view.
    const source = s.animation;
    if (source.probes) return probesAnimation(source, source.probes, s.choice.x ?? 0, s.choice.y ?? 0);
    if (!source.variants) return source;
    const key = (s.data.choices || []).map((c) => s.choice[c.key] ?? 0).join("|");
    return source.variants[key] ?? Object.values(source.variants)[0];
  }

  function setView() {
    // Take the chosen view's animation; the next frame is drawn whole.
    s.anim = pick();
    s.shown = null;
    for (const name of Object.keys(s.anim.figures)) s.styled[name] = pvnPlotly.look(s.anim.figures[name].layout || {}, root);
    ui.slider.max = String(s.anim.frames.length - 1);
    root.dataset.choice = JSON.stringify(s.choice);
  }

  function buildChoices() {
    choicesRow.replaceChildren();
    for (const c of s.data.choices || []) {
      const label = document.createElement("label");
      label.textContent = c.label;
      const select = document.createElement("select");
      select.className = "pvn-player-speed";
      select.dataset.choice = c.key;
      select.innerHTML = c.options.map((o, k) => `<option value="${k}">${o}</option>`).join("");
      select.value = String(s.choice[c.key] ?? 0);
      select.addEventListener("change", (event) => {
        s.inputAt = event.timeStamp;
        s.choice = { ...s.choice, [c.key]: Number(select.value) };
        pause();
        setView();
        show(s.frame);
        if (s.setState) s.setState("choice", { ...s.choice });
      });
      label.appendChild(select);
      choicesRow.appendChild(label);
    }
    choicesRow.hidden = !(s.data.choices || []).length;
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

  // The animation at `data.url`, as text; while it is gone from the server's memory (pushed out by newer ones), the
  // page asks its server to serve it again (a rerun: ui/browser_player.py) and reads it once more, a few times.
  // Given up (after about 15 s): its place says so, nothing of an earlier animation stays playable, and the next
  // call from Python (any change of the player's data) tries again.
  async function fetched(data) {
    const current = () => data.id === s.id && !s.destroyed;
    for (let attempt = 0; attempt < FETCH_TRIES; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** (attempt - 1)));
      if (!current()) return null;
      try {
        const response = await fetch(data.url);
        if (response.ok) return await response.text();
      } catch (error) {
        // the server is busy or restarting: tried again below
      }
      if (attempt === 0) self.askAgain?.();
    }
    if (!current()) return null;
    pause();
    Object.values(s.divs).forEach((div) => pvnPlotly.Plotly?.purge(div));
    stage.replaceChildren();
    Object.assign(s, { anim: null, divs: {}, id: null });
    ui.caption.textContent = "This animation could not be loaded: reload the page.";
    return null;
  }

  const self = {
    async update(data, setStateValue) {
      s.setState = setStateValue;
      const fresh = data.id !== s.id;
      s.data = data;
      if (!fresh) return;
      s.id = data.id;
      pause();
      if (!s.seen) {
        stage.style.minHeight = `${data.stageHeight || 0}px`; // its place is kept until it is drawn
        ui.caption.textContent = data.label; // what it plays (e.g. "time step"), its frames once drawn
      }
      // below the fold: drawn (and its animation parsed) when the reader scrolls near it, at first and for every
      // new animation (a finished run's, in a tab scrolled elsewhere)
      s.waiting?.cancel();
      s.waiting = pvnPlotly.near(root);
      await s.waiting.promise;
      if (data.id !== s.id) return; // a newer animation came meanwhile: its own update draws it
      s.seen = true;
      stage.style.minHeight = "";
      // the animation comes as JSON text (one string for Streamlit to pass on), or under `make run` as a URL read
      // only now (not with every page's script run: ui/served_memory.py); parsed once per animation id
      const [, sent] = await Promise.all([pvnPlotly.load(data.plotly), data.url ? fetched(data) : data.animation]);
      if (data.id !== s.id || sent === null) return; // a newer animation came meanwhile, or this one is lost
      s.animation = decodeArrays(typeof sent === "string" ? JSON.parse(sent) : sent);
      stage.replaceChildren();
      s.divs = {};
      s.styled = {};
      s.choice = { ...(data.choice || {}) };
      buildChoices();
      setView();
      for (const name of Object.keys(s.anim.figures)) {
        const div = document.createElement("div");
        div.className = "pvn-player-figure";
        div.style.flex = String((data.widths || {})[name] || 1);
        stage.appendChild(div);
        s.divs[name] = div;
      }
      show(data.frame ?? 0);
    },
    destroy() {
      s.destroyed = true; // a read still retrying stops
      s.playing = false;
      s.waiting?.cancel();
      s.stopClock?.();
      unbindKeys();
      Object.values(s.divs).forEach((div) => pvnPlotly.Plotly?.purge(div));
      root.remove();
      delete parent[PLAYER];
    },
  };
  return self;
}

export default function player({ data, parentElement, setStateValue, setTriggerValue }) {
  const p = (parentElement[PLAYER] ??= createPlayer(parentElement));
  p.askAgain = () => setTriggerValue("missing", data.id);
  const generation = (p.generation = (p.generation || 0) + 1);
  p.update(data, setStateValue).catch((error) => console.error("player:", error));
  // Streamlit runs a superseded call's cleanup at once: only the latest call's cleanup ends the player.
  return () => {
    if (generation === p.generation) p.destroy();
  };
}
