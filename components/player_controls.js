// The player's controls (components/player.js): ⏮ ◀ ▶/⏸ ▶ ⏭, the speed, the frame slider and the keys ← → Space
// (controls_lib.js's playerBar and playerKeys), and the drop-downs of the views the page switches itself. The frame
// shown goes back to Python (setStateValue "frame") when playback pauses or the user steps or seeks, a view switch
// once (setStateValue "choice"). Concatenated before player.js (ui/browser_player.py).

/** Shows frame `t` (clamped): the slider and caption at once, the figures on the next draw. */
function showPlayerFrame(inst, t) {
  const { s, bar } = inst;
  if (!s.anim) return; // not drawn yet (below the fold): nothing to show or play
  const last = s.anim.frames.length - 1;
  s.frame = Math.min(Math.max(t, 0), last);
  bar.slider.value = String(s.frame);
  const label = s.anim.labels[s.frame];
  bar.caption.textContent = `${s.data.label} ${label} (${s.frame + 1} of ${last + 1})${s.playing ? " — playing" : ""}`;
  s.wanted = s.frame;
  drawWanted(inst);
}

function reportFrame(inst) {
  if (inst.s.setState) inst.s.setState("frame", inst.s.frame);
}

function pausePlayer(inst) {
  const s = inst.s;
  if (!s.playing) return;
  s.playing = false;
  s.stopClock?.();
  inst.bar.play.innerHTML = icon("play");
  inst.root.dataset.playing = "false";
  showPlayerFrame(inst, s.frame);
  reportFrame(inst);
}

function playPlayer(inst) {
  const s = inst.s;
  if (!s.anim) return;
  const last = s.anim.frames.length - 1;
  if (s.frame >= last) showPlayerFrame(inst, 0);
  s.playing = true;
  inst.root.dataset.playing = "true";
  inst.bar.play.innerHTML = icon("pause");
  s.stopClock = paced(() => 1000 / (s.data.fps * Number(inst.bar.speed.value)), () => {
    if (!s.playing) return false;
    if (s.frame >= last) return pausePlayer(inst), false;
    showPlayerFrame(inst, s.frame + 1);
  });
}

function stepPlayer(inst, delta) {
  pausePlayer(inst);
  showPlayerFrame(inst, inst.s.frame + delta);
  reportFrame(inst);
}

/** The bar's buttons, slider and keys wired to the player; returns the function that unbinds the keys. */
function bindPlayerBar(inst) {
  const { s, bar } = inst;
  const toggle = () => (s.playing ? pausePlayer(inst) : playPlayer(inst));
  const unbindKeys = playerKeys(inst.root, (delta) => stepPlayer(inst, delta), toggle);
  bar.first.onclick = () => stepPlayer(inst, -Infinity);
  bar.last.onclick = () => stepPlayer(inst, Infinity);
  bar.back.onclick = () => stepPlayer(inst, -1);
  bar.forward.onclick = () => stepPlayer(inst, 1);
  bar.play.onclick = toggle;
  bar.slider.addEventListener("input", () => {
    pausePlayer(inst);
    showPlayerFrame(inst, Number(bar.slider.value));
  });
  bar.slider.addEventListener("change", () => reportFrame(inst));
  return unbindKeys;
}

/** Takes the chosen view's animation (chosenAnimation); the next frame is drawn whole. */
function setPlayerView(inst) {
  const s = inst.s;
  s.anim = chosenAnimation(s);
  s.shown = null;
  Object.assign(s, { moving: {}, emptied: {} }); // what the frames move, and whether plotly's drawing lacks it
  for (const name of Object.keys(s.anim.figures)) s.styled[name] = pvnPlotly.look(s.anim.figures[name].layout || {}, inst.root);
  inst.bar.slider.max = String(s.anim.frames.length - 1);
  inst.root.dataset.choice = JSON.stringify(s.choice);
}

/** A drop-down for each of `s.data.choices`; a switch redraws at once and is reported once. */
function buildChoices(inst) {
  const s = inst.s;
  inst.choicesRow.replaceChildren();
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
      pausePlayer(inst);
      setPlayerView(inst);
      showPlayerFrame(inst, s.frame);
      if (s.setState) s.setState("choice", { ...s.choice });
    });
    label.appendChild(select);
    inst.choicesRow.appendChild(label);
  }
  inst.choicesRow.hidden = !(s.data.choices || []).length;
}
