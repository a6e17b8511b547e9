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
// The files before this one (ui/browser_player.py, after the prelude plotly_lib.js): controls_lib.js (the bar, the
// keys, the clock), player_frames.js (frames and views), player_draw.js (drawing) and player_controls.js (the bar's
// controls and the views' drop-downs). This file lays the player out and takes the server's data.

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
  const bar = playerBar(root);
  const s = { id: null, frame: 0, playing: false, divs: {}, data: null, animation: null, setState: null, busy: false };
  Object.assign(s, { anim: null, styled: {}, choice: {}, shown: null, wanted: null, drawn: 0, moving: {}, emptied: {} });
  s.inputAt = null; // when a view switch not drawn yet was made (performance.now() clock)
  const inst = { parent, root, choicesRow, stage, bar, s };
  const unbindKeys = bindPlayerBar(inst);
  inst.handle = {
    update: (data, setStateValue) => updatePlayer(inst, data, setStateValue),
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
  return inst.handle;
}

async function updatePlayer(inst, data, setStateValue) {
  const { s, stage, bar } = inst;
  s.setState = setStateValue;
  const fresh = data.id !== s.id;
  s.data = data;
  if (!fresh) return;
  s.id = data.id;
  pausePlayer(inst);
  if (!s.seen) {
    stage.style.minHeight = `${data.stageHeight || 0}px`; // its place is kept until it is drawn
    bar.caption.textContent = data.label; // what it plays (e.g. "time step"), its frames once drawn
  }
  // below the fold: drawn (and its animation parsed) when the reader scrolls near it, at first and for every
  // new animation (a finished run's, in a tab scrolled elsewhere)
  s.waiting?.cancel();
  s.waiting = pvnPlotly.near(inst.root);
  await s.waiting.promise;
  if (data.id !== s.id) return; // a newer animation came meanwhile: its own update draws it
  s.seen = true;
  stage.style.minHeight = "";
  // the animation comes as JSON text (one string for Streamlit to pass on), or under `make run` as a URL read
  // only now (not with every page's script run: ui/server/store.py); parsed once per animation id
  const [, sent] = await Promise.all([pvnPlotly.load(data.plotly), data.url ? fetchAnimation(inst, data) : data.animation]);
  if (data.id !== s.id || sent === null) return; // a newer animation came meanwhile, or this one is lost
  s.animation = decodeArrays(typeof sent === "string" ? JSON.parse(sent) : sent);
  s.choice = { ...(data.choice || {}) };
  s.styled = {};
  buildChoices(inst);
  setPlayerView(inst);
  layOutFigures(inst, data);
  showPlayerFrame(inst, data.frame ?? 0);
}

function layOutFigures(inst, data) {
  // One div per figure of the animation, side by side at the widths asked for.
  const { s, stage } = inst;
  stage.replaceChildren();
  s.divs = {};
  for (const name of Object.keys(s.anim.figures)) {
    const div = document.createElement("div");
    div.className = "pvn-player-figure";
    div.style.flex = String((data.widths || {})[name] || 1);
    stage.appendChild(div);
    s.divs[name] = div;
  }
}

// The animation at `data.url`, as text; while it is gone from the server's memory (pushed out by newer ones), the
// page asks its server to serve it again (a rerun: ui/browser_player.py) and reads it once more, a few times.
// Given up (after about 15 s): its place says so, nothing of an earlier animation stays playable, and the next
// call from Python (any change of the player's data) tries again.
async function fetchAnimation(inst, data) {
  const s = inst.s;
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
    if (attempt === 0) inst.handle.askAgain?.();
  }
  if (!current()) return null;
  pausePlayer(inst);
  Object.values(s.divs).forEach((div) => pvnPlotly.Plotly?.purge(div));
  inst.stage.replaceChildren();
  Object.assign(s, { anim: null, divs: {}, id: null });
  inst.bar.caption.textContent = "This animation could not be loaded: reload the page.";
  return null;
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
