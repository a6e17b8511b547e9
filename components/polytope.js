// The polytope instrument (Section 6.1, Figs. 2-3, Appendix A): every exact view of the 2-state MDP, computed and
// drawn in the browser on every input event, so the figures follow a drag.
//
// Prelude (ui/components.py's js_module): plotly_lib.js (pvnPlotly), controls_lib.js (icons, typed arrays, the
// playback clock), mdp.js (the exact math: values, J, the gradient field, projected ascent; checked against
// pvnviz.polytope.mdp by tests/test_browser_mdp_js.py), polytope_views.js (the PVN in the browser, what the figures show,
// the figures) and canvas_layer.js (the thousands of points and arrows painted under plotly). This file holds the
// controls, the ascent's player, the drawing loop and what goes to the server.
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
const FPS = 30;
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
  const ui = playerBar(root, "ascent step");
  const caption = ui.caption;
  texts.ascent = el("div", "pvn-poly-text", root);

  const s = {
    data: null, setState: null, revision: null, controls: {}, inputs: {}, frame: 0, playing: false, raf: 0,
    view: null, dirty: new Set(), scheduled: 0, eventAt: null, drawn: 0, busy: false, sendTimer: 0,
    committed: {}, cloudX: null, cloudOut: null, gridSize: 20, full: {}, looks: {}, configs: {}, signatures: {}, learned: null, learnedKey: null, figuresKey: null,
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
      // Refused whole: the figures, legend and badges go back to the last valid view (a value typed digit by digit
      // may have drawn its first digits), and nothing goes to the server, so the URL keeps that view too.
      const kept = s.committed[key] ?? s.controls[key];
      input.setAttribute("aria-invalid", "true");
      problem.textContent = `Enter ${spec.integer ? "a whole number" : "a number"} from ${spec.min} to ${spec.max}; ` +
        `the figures keep ${format(kept, spec)}.`;
      if (shown) shown.textContent = format(kept, spec);
      clearTimeout(s.sendTimer);
      if (s.controls[key] !== kept || s.dragging) {
        s.controls[key] = kept;
        s.dragging = false;
        redraw(["polytope", "fields", "square", "returns"]);
      }
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
      s.committed = { ...s.controls }; // the last valid view: what a refused value goes back to
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
      v.optimumName = `optimum (J=${v.optimum.J.toFixed(3)})`; // the legend follows a drag too
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
    s.stopClock?.();
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
    showFrame(s.frame);
    s.stopClock = paced(() => 1000 / (FPS * Number(ui.speed.value)), () => {
      if (!s.playing) return false;
      if (s.frame >= last) return pause(), false;
      showFrame(s.frame + 1);
    });
  }

  function step(delta, event) {
    pause(false);
    showFrame(s.frame + delta, event);
    send();
  }

  const unbindKeys = playerKeys(root, step, () => (s.playing ? pause : play)());
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
        s.committed = { ...data.controls };
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
      s.stopClock?.();
      cancelAnimationFrame(s.scheduled);
      clearTimeout(s.sendTimer);
      unbindKeys();
      Object.values(figs).forEach((div) => pvnPlotly.Plotly?.purge(div));
      root.remove();
      delete parent[INSTRUMENT];
    },
  };
}


export default function polytopeInstrument({ data, parentElement, setStateValue }) {
  const p = (parentElement[INSTRUMENT] ??= createInstrument(parentElement));
  const generation = (p.generation = (p.generation || 0) + 1);
  p.update(data, setStateValue).catch((error) => console.error("polytope instrument:", error));
  return () => {
    if (generation === p.generation) p.destroy();
  };
}
