// The polytope instrument's ascent player (components/polytope.js): ⏮ ◀ ▶/⏸ ▶ ⏭, the step slider, the speed and
// the keys ← → Space (controls_lib.js's playerBar and playerKeys), showing one ascent step of the square and
// returns figures. The step shown goes to the server with the controls when playback pauses or the user steps.
// Concatenated before polytope.js (ui/polytope_instrument.py's MODULES).

const ASCENT_FPS = 30;

function showFrame(inst, t, event) {
  inst.s.frame = Math.min(Math.max(t, 0), inst.s.controls.ascent_steps);
  redraw(inst, ["frame"], event);
}

/** Stops playback (if playing) on the step shown; `report` sends the view to the server. */
function pausePlayback(inst, report = true) {
  const s = inst.s;
  if (!s.playing) return;
  s.playing = false;
  s.stopClock?.();
  inst.bar.play.innerHTML = icon("play");
  inst.root.dataset.playing = "false";
  showFrame(inst, s.frame);
  if (report) sendView(inst);
}

function playAscent(inst) {
  const s = inst.s;
  const last = s.controls.ascent_steps;
  if (s.frame >= last) s.frame = 0;
  s.playing = true;
  inst.root.dataset.playing = "true";
  inst.bar.play.innerHTML = icon("pause");
  showFrame(inst, s.frame);
  s.stopClock = paced(() => 1000 / (ASCENT_FPS * Number(inst.bar.speed.value)), () => {
    if (!s.playing) return false;
    if (s.frame >= last) return pausePlayback(inst), false;
    showFrame(inst, s.frame + 1);
  });
}

function stepAscent(inst, delta, event) {
  pausePlayback(inst, false);
  showFrame(inst, inst.s.frame + delta, event);
  sendView(inst);
}

/** The bar's buttons, slider and keys wired to the ascent; returns the function that unbinds the keys. */
function bindAscentPlayer(inst) {
  const { bar, s } = inst;
  const toggle = () => (s.playing ? pausePlayback(inst) : playAscent(inst));
  const unbindKeys = playerKeys(inst.root, (delta, event) => stepAscent(inst, delta, event), toggle);
  bar.first.onclick = (e) => stepAscent(inst, -Infinity, e);
  bar.last.onclick = (e) => stepAscent(inst, Infinity, e);
  bar.back.onclick = (e) => stepAscent(inst, -1, e);
  bar.forward.onclick = (e) => stepAscent(inst, 1, e);
  bar.play.onclick = toggle;
  bar.slider.addEventListener("input", (e) => {
    pausePlayback(inst, false);
    showFrame(inst, Number(bar.slider.value), e);
  });
  bar.slider.addEventListener("change", () => sendView(inst));
  return unbindKeys;
}
