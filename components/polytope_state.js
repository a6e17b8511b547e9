// The polytope instrument's state (components/polytope.js): what the server sent, what the controls hold, and
// what the last redraw drew. Concatenated before polytope.js (ui/polytope_instrument.py's MODULES).

/** A new instrument's state. Fields:
 * - data, setState: the component's last data and its setStateValue;
 * - revision, version, spec, look: which server data was taken (the controls, the PVN, the controls' spec, the
 *   figures' look and config as JSON), so that data seen before changes nothing;
 * - controls: {key: value} the figures show; committed: the last valid view sent (a refused value goes back to
 *   it); inputs: {key: {input, shown, problem, spec}}; frame: the ascent step shown; playing, stopClock;
 * - keyed: the last input was a key (its release is sent 400 ms after the last key); dragging: the axes keep
 *   still (polytope_views.js's steady); settle: the figures to draw with exact axes once the keys rest;
 *   sendTimer;
 * - cloudX, cloudOut: the cloud's policies (2N) and their reused output buffers; gridSize; learned: the PVN;
 * - view: what the figures show (polytope_views.js's computeView); axes, jRange, colorRange: their ranges as drawn;
 * - dirty, scheduled, busy, eventAt, drawn: the redraw loop (polytope_draw.js);
 * - full, looks, configs, plotted: per figure, what was drawn and how; shown: the HTML last written to each
 *   text element (polytope_draw.js). */
function newInstrumentState() {
  return {
    data: null, setState: null, revision: null, version: undefined, spec: null, look: null,
    controls: {}, committed: {}, inputs: {}, frame: 0, playing: false, stopClock: null,
    keyed: false, dragging: false, settle: null, sendTimer: 0,
    cloudSource: null, cloudX: null, cloudOut: null, gridSize: 20, learned: null,
    view: null, axes: null, jRange: null, colorRange: null,
    dirty: new Set(), scheduled: 0, busy: false, eventAt: null, drawn: 0,
    full: {}, looks: {}, configs: {}, plotted: {}, shown: new WeakMap(),
  };
}

/** Takes the server's `data` into the state: the arrays decoded, the cloud's buffers made once per cloud, the PVN
 * decoded. Returns {controls: whether the server set the controls, redraw: "none" (only the controls this page
 * sent, coming back), "all", or "now" (a new PVN with figures drawn: every figure, at once)}. */
function takeData(inst, data, setStateValue) {
  const s = inst.s;
  s.setState = setStateValue;
  s.data = data;
  decodeArrays(data.figures);
  takeCloud(s, data);
  s.gridSize = data.gridSize;
  s.learned = decodeLearned(data.learned);
  const fresh = data.version !== s.version;
  takeLook(s, data);
  s.version = data.version;
  const controls = data.revision !== s.revision;
  if (controls) {
    // The server set the controls (first draw, a link, Paper settings, Random MDP): take them.
    s.revision = data.revision;
    s.controls = { ...data.controls };
    s.committed = { ...data.controls };
    s.frame = data.frame ?? s.controls.ascent_steps;
  } else if (!fresh) return { controls, redraw: "none" };
  return { controls, redraw: fresh && s.view ? "now" : "all" };
}

function takeCloud(s, data) {
  if (!data.cloud || data.cloud === s.cloudSource) return;
  s.cloudSource = data.cloud;
  s.cloudX = decodeArray(data.cloud);
  s.cloudOut = { V: new Float64Array(s.cloudX.length), J: new Float64Array(s.cloudX.length / 2) };
}

function takeLook(s, data) {
  // Another look (the projector mode, the download format): styles and configs anew. A new PVN alone keeps them,
  // so plotly redraws nothing and only the canvas is painted again.
  const look = JSON.stringify([data.figures, data.config]);
  if (look === s.look) return;
  s.look = look;
  s.looks = {};
  s.configs = {};
  s.plotted = {};
}

function decodeLearned(L) {
  // The PVN the server trained, its weights and the policies it was trained and tested on as typed arrays.
  if (!L) return null;
  return { ...L, W1: decodeArray(L.W1), b1: decodeArray(L.b1), W2: decodeArray(L.W2), b2: decodeArray(L.b2),
    train: decodeArray(L.train), test: decodeArray(L.test) };
}
