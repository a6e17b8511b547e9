// The polytope instrument (Section 6.1, Figs. 2-3, Appendix A): every exact view of the 2-state MDP, computed and
// drawn in the browser on every input event, so the figures follow a drag.
//
// The files before this one (ui/polytope_instrument.py's MODULES, after the prelude plotly_lib.js): plotly_adapter.js
// (where plotly put the axes), controls_lib.js (icons, typed arrays, the playback clock), mdp.js (the exact math:
// values, J, the gradient field, projected ascent; checked against pvnviz.polytope.mdp by
// tests/test_browser_mdp_js.py), polytope_views.js (the PVN in the browser, what the figures show, the figures),
// canvas_layer.js (the thousands of points and arrows painted under plotly), polytope_state.js (the state),
// polytope_controls.js (the inputs and what goes to the server), polytope_player.js (the ascent's player) and
// polytope_draw.js (the drawing loop). This file lays the instrument out and takes the server's data.
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

function el(tag, className, parent, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function layOut(parent) {
  // The instrument's elements: the MDP's controls beside the polytope, the fields, the ascent's controls, the
  // square and the returns side by side, the ascent's player and its sentence.
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
  const bar = playerBar(root, "ascent step");
  texts.ascent = el("div", "pvn-poly-text", root);
  return { parent, root, badge, mdpPanel, ascentPanel, figs, optimumLine, texts, bar };
}

function createInstrument(parent) {
  const inst = { ...layOut(parent), s: newInstrumentState() };
  bindControlDevice(inst);
  const unbindKeys = bindAscentPlayer(inst);
  return {
    update: (data, setStateValue) => updateInstrument(inst, data, setStateValue),
    destroy() {
      const s = inst.s;
      s.playing = false;
      s.stopClock?.();
      cancelAnimationFrame(s.scheduled);
      clearTimeout(s.sendTimer);
      unbindKeys();
      Object.values(inst.figs).forEach((div) => pvnPlotly.Plotly?.purge(div));
      inst.root.remove();
      delete parent[INSTRUMENT];
    },
  };
}

async function updateInstrument(inst, data, setStateValue) {
  const s = inst.s;
  s.data = data;
  await pvnPlotly.load(data.plotly);
  const spec = JSON.stringify(data.spec);
  if (s.spec !== spec) {
    s.spec = spec;
    buildControls(inst, data.spec);
    showControls(inst);
  }
  for (const name of ["polytope", "fields"]) inst.texts[name].innerHTML = data.texts[name] || "";
  const { controls, redraw: when } = takeData(inst, data, setStateValue);
  if (controls) {
    pausePlayback(inst, false);
    showControls(inst);
  }
  if (when === "none") return; // only the controls this page sent, coming back: nothing to redraw
  redraw(inst, ALL_FIGURES);
  if (when === "now") {
    cancelAnimationFrame(s.scheduled); // a new PVN: at once, before Streamlit redraws the page's other charts
    s.scheduled = 0;
    drawFigures(inst);
  }
}

export default function polytopeInstrument({ data, parentElement, setStateValue }) {
  const p = (parentElement[INSTRUMENT] ??= createInstrument(parentElement));
  const generation = (p.generation = (p.generation || 0) + 1);
  p.update(data, setStateValue).catch((error) => console.error("polytope instrument:", error));
  return () => {
    if (generation === p.generation) p.destroy();
  };
}
