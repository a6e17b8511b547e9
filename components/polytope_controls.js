// The polytope instrument's controls (components/polytope.js): the MDP's and the ascent's inputs, what a value
// typed or dragged does to the figures, a click on the gradient field, and what goes back to the server.
// Concatenated before polytope.js (ui/polytope_instrument.py's MODULES).
//
//   - view controls change the figures at once, with no server rerun (redraw, polytope_draw.js);
//   - on release (`change`), the controls go back to Python (setStateValue "view"): into the URL, and, when the
//     MDP changed, to a worker that retrains the PVN;
//   - a value out of range or not a number is refused whole: the figures keep the last valid view.

const ALL_FIGURES = ["polytope", "fields", "square", "returns"];

/** The inputs of `spec` ([{key, label, group, kind, min, max, step, integer, help}]) in the instrument's two
 * panels (the ascent's group in its own), listening for input and release. */
function buildControls(inst, spec) {
  inst.mdpPanel.replaceChildren();
  inst.ascentPanel.replaceChildren();
  inst.s.inputs = {};
  const groups = {};
  for (const c of spec) {
    const panel = c.group === "ascent" ? inst.ascentPanel : inst.mdpPanel;
    if (c.group !== "ascent" && !groups[c.group]) groups[c.group] = el("div", "pvn-poly-group", panel, c.group);
    const box = el("label", `pvn-poly-control pvn-poly-${c.kind}`, panel);
    box.title = c.help || "";
    const head = el("span", "pvn-poly-label", box, c.label);
    const input = el("input", "pvn-poly-input", box);
    Object.assign(input, { name: c.key, type: c.kind === "range" ? "range" : "number" });
    Object.assign(input, { min: String(c.min), max: String(c.max), step: String(c.step) });
    input.setAttribute("aria-label", c.label);
    const shown = c.kind === "range" ? el("span", "pvn-poly-value", head) : null;
    const problem = el("span", "pvn-poly-problem", box);
    inst.s.inputs[c.key] = { input, shown, problem, spec: c };
    input.addEventListener("input", (event) => controlChanged(inst, c.key, event, false));
    input.addEventListener("change", (event) => controlChanged(inst, c.key, event, true));
  }
}

/** Every input showing the state's controls, with no problem reported. */
function showControls(inst) {
  for (const [key, { input, shown, problem, spec }] of Object.entries(inst.s.inputs)) {
    input.value = String(inst.s.controls[key]);
    if (shown) shown.textContent = formatValue(inst.s.controls[key], spec);
    problem.textContent = "";
    input.removeAttribute("aria-invalid");
  }
}

function formatValue(v, spec) {
  return spec.integer ? String(v) : Number(v).toFixed(Math.max(2, -Math.floor(Math.log10(spec.step)) || 2));
}

function validValue(input, spec) {
  const v = Number(input.value);
  const ok = input.value !== "" && Number.isFinite(v) && v >= spec.min && v <= spec.max &&
    (!spec.integer || Number.isInteger(v));
  return ok ? v : null;
}

/** An input's `input` (released false) or `change` (released true) event. */
function controlChanged(inst, key, event, released) {
  const s = inst.s;
  const { input, shown, problem, spec } = s.inputs[key];
  const v = validValue(input, spec);
  if (v === null) return refuseValue(inst, key);
  input.removeAttribute("aria-invalid");
  problem.textContent = "";
  if (shown) shown.textContent = formatValue(v, spec);
  const figures = MDP_KEYS.includes(key) ? ALL_FIGURES : ["square", "returns"];
  const moved = s.controls[key] !== v;
  s.dragging = !released || s.keyed; // keys: as a drag until they rest (send), then the exact axes
  s.settle = figures;
  if (moved || released) { // a release draws the exact axis ranges again
    s.controls[key] = v;
    pausePlayback(inst, false);
    s.frame = s.controls.ascent_steps;
    if (moved || s.keyed) redraw(inst, figures, moved ? event : null);
    else setTimeout(() => redraw(inst, figures), 60); // after the view has left for the server: it starts sooner
  }
  if (released) sendView(inst);
}

function refuseValue(inst, key) {
  // Refused whole: the figures, legend and badges go back to the last valid view (a value typed digit by digit
  // may have drawn its first digits), and nothing goes to the server, so the URL keeps that view too.
  const s = inst.s;
  const { input, shown, problem, spec } = s.inputs[key];
  const kept = s.committed[key] ?? s.controls[key];
  input.setAttribute("aria-invalid", "true");
  problem.textContent = `Enter ${spec.integer ? "a whole number" : "a number"} from ${spec.min} to ${spec.max}; ` +
    `the figures keep ${formatValue(kept, spec)}.`;
  if (shown) shown.textContent = formatValue(kept, spec);
  clearTimeout(s.sendTimer);
  if (s.controls[key] !== kept || s.dragging) {
    s.controls[key] = kept;
    s.dragging = false;
    redraw(inst, ALL_FIGURES);
  }
}

/** The view after a release goes to the server: at once after a mouse or touch, 400 ms after the last key
 * (holding an arrow key sends once it is let go). */
function sendView(inst) {
  const s = inst.s;
  clearTimeout(s.sendTimer);
  const now = () => {
    if (s.dragging && s.settle) {
      s.dragging = false;
      redraw(inst, s.settle); // the exact axis ranges and legend, once the keys rest
    }
    s.committed = { ...s.controls }; // the last valid view: what a refused value goes back to
    if (s.setState) s.setState("view", { controls: { ...s.controls }, frame: s.frame });
  };
  if (s.keyed) s.sendTimer = setTimeout(now, 400);
  else now(); // a mouse or touch release: the server hears of it before this page redraws
}

/** A click on the exact field (the left subplot) sets the ascent's start, to 3 decimals. */
function pickStart(inst, event) {
  const gd = inst.figs.fields;
  const xa = plotlyAxis(gd, "x");
  const ya = plotlyAxis(gd, "y");
  const area = gd.querySelector(".nsewdrag[data-subplot=xy]");
  if (!xa || !ya || !area) return;
  const box = area.getBoundingClientRect();
  const x = xa.toValue(event.clientX - box.left);
  const y = ya.toValue(event.clientY - box.top);
  if (!(x >= -0.03 && x <= 1.03 && y >= -0.03 && y <= 1.03)) return;
  const s = inst.s;
  s.controls.start1 = Math.round(Math.min(Math.max(x, 0), 1) * 1000) / 1000;
  s.controls.start2 = Math.round(Math.min(Math.max(y, 0), 1) * 1000) / 1000;
  pausePlayback(inst, false);
  s.frame = s.controls.ascent_steps;
  showControls(inst);
  redraw(inst, ["square", "returns"], event);
  sendView(inst);
}

/** Which device moved the controls last: keys send their view once they rest, a pointer at once. */
function bindControlDevice(inst) {
  inst.root.addEventListener("keydown", () => (inst.s.keyed = true), true);
  inst.root.addEventListener("pointerdown", () => (inst.s.keyed = false), true);
  inst.figs.fields.addEventListener("click", (event) => pickStart(inst, event));
}
