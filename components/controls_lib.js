// Shared prelude of the components that carry their own controls (the player and the polytope instrument):
// inline SVG icons (no symbol font needed: Debian's Chromium has no glyph for ⏮ ⏭) on 44 px hit targets,
// and the decoding of plotly's typed-array specs. ui/components.py puts this text in front of those modules.

const PVN_ICONS = {
  first: "M6 5h2v14H6zM20 5v14L9 12z",
  back: "M18 5v14L7 12z",
  play: "M7 5v14l12-7z",
  pause: "M6 5h4v14H6zM14 5h4v14h-4z",
  forward: "M6 5v14l11-7z",
  last: "M16 5h2v14h-2zM4 5v14l11-7z",
};

function icon(name) {
  return `<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path d="${PVN_ICONS[name]}"/></svg>`;
}

function iconButton(name, title, className = "pvn-player-button") {
  const b = document.createElement("button");
  b.type = "button";
  b.className = `${className} pvn-${name}`;
  b.title = title;
  b.setAttribute("aria-label", title);
  b.innerHTML = icon(name);
  return b;
}

const DTYPES = { f8: Float64Array, f4: Float32Array, i4: Int32Array, i2: Int16Array, i1: Int8Array,
  u4: Uint32Array, u2: Uint16Array, u1: Uint8Array };

function decodeArray(v) {
  const bytes = Uint8Array.from(atob(v.bdata), (c) => c.charCodeAt(0));
  return new DTYPES[v.dtype](bytes.buffer);
}

function decodeArrays(value) {
  // plotly's typed-array specs {dtype, bdata} (from plotly's JSON encoder) as typed arrays, in place.
  if (!value || typeof value !== "object") return value;
  for (const [k, v] of Object.entries(value)) {
    if (v && typeof v === "object" && typeof v.bdata === "string" && DTYPES[v.dtype] && !v.shape) {
      value[k] = decodeArray(v);
    } else decodeArrays(v);
  }
  return value;
}

/** Calls `advance()` once every `stepMs()` milliseconds, on animation frames, until it returns false or the
 * returned function is called. A step is due within 15% of its length: at 30 frames a second on a 60 Hz display
 * every second animation frame, not sometimes every third when the display's frames come a little early. */
function paced(stepMs, advance) {
  let raf = 0;
  let since = performance.now();
  const frame = (now) => {
    const step = stepMs();
    if (now - since >= 0.85 * step) {
      // The next frame is due one step after this one was due, not after it was drawn: a frame that came a tick
      // late (a slow redraw) does not slow the whole animation; after a long stall (a hidden tab) it restarts.
      since = now - since > 3 * step ? now : since + step;
      if (advance() === false) return;
    }
    raf = requestAnimationFrame(frame);
  };
  raf = requestAnimationFrame(frame);
  return () => cancelAnimationFrame(raf);
}

const PVN_SPEEDS = [0.25, 0.5, 1, 2, 4];
const pvnPlayers = (globalThis.pvnPlayers ??= { active: null }); // which player owns the keys
pvnPlayers.roots ??= new Set();

/** The player that owns the keys: the one used last while it is on the page, else the page's first player
 * (document order). A page left for another keeps its players in the DOM until the new page's script ends, and
 * they may be registered after the new page's first players: only a connected player counts. */
function keyOwner() {
  if (pvnPlayers.active?.isConnected) return pvnPlayers.active;
  const on = [...pvnPlayers.roots].filter((r) => r.isConnected);
  return on.sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1))[0] ?? null;
}
const PVN_INTERACTIVE = "input, select, textarea, button, [contenteditable], [role=slider]";

/** A player's bar (⏮ ◀ ▶/⏸ ▶ ⏭, speed, frame slider) and caption, appended to `root`; `unit` names a frame in
 * the buttons' titles ("frame", "ascent step"). Returns the parts. */
function playerBar(root, unit = "frame") {
  const bar = document.createElement("div");
  bar.className = "pvn-player-bar";
  const parts = {
    first: iconButton("first", `First ${unit}`),
    back: iconButton("back", `One ${unit} back (←)`),
    play: iconButton("play", "Play or pause (Space)"),
    forward: iconButton("forward", `One ${unit} forward (→)`),
    last: iconButton("last", `Last ${unit}`),
    speed: document.createElement("select"),
    slider: document.createElement("input"),
    caption: document.createElement("span"),
  };
  parts.speed.className = "pvn-player-speed";
  parts.speed.setAttribute("aria-label", "Playing speed");
  parts.speed.innerHTML = PVN_SPEEDS.map((v) => `<option value="${v}"${v === 1 ? " selected" : ""}>${v}×</option>`).join("");
  parts.slider.type = "range";
  parts.slider.className = "pvn-player-slider";
  parts.slider.min = "0";
  parts.slider.setAttribute("aria-label", `${unit} shown`);
  parts.caption.className = "pvn-player-caption";
  bar.append(parts.first, parts.back, parts.play, parts.forward, parts.last, parts.speed, parts.slider);
  root.append(bar, parts.caption);
  return parts;
}

/** The keys ← → Space for the player `root` once it is the one used last (a click or focus in it; the first
 * player of a page until then), unless a control of its own has the focus. Returns the function that unbinds. */
function playerKeys(root, step, toggle) {
  const key = (event) => {
    if (keyOwner() !== root || event.target.closest?.(PVN_INTERACTIVE)) return; // the element's own keys win
    if (event.key === "ArrowLeft" || event.key === "ArrowRight") step(event.key === "ArrowLeft" ? -1 : 1, event);
    else if (event.key === " ") toggle();
    else return;
    event.preventDefault();
  };
  const use = () => (pvnPlayers.active = root);
  root.addEventListener("pointerdown", use);
  root.addEventListener("focusin", use);
  pvnPlayers.roots.add(root);
  document.addEventListener("keydown", key);
  return () => {
    document.removeEventListener("keydown", key);
    pvnPlayers.roots.delete(root);
    if (pvnPlayers.active === root) pvnPlayers.active = null;
  };
}
