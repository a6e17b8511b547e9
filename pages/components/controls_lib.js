// Shared prelude of the components that carry their own controls (the player and the polytope instrument):
// inline SVG icons (no symbol font needed: Debian's Chromium drew ⏮ ⏭ as empty boxes) on 44 px hit targets,
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
    if (now - since >= 0.85 * stepMs()) {
      since = now;
      if (advance() === false) return;
    }
    raf = requestAnimationFrame(frame);
  };
  raf = requestAnimationFrame(frame);
  return () => cancelAnimationFrame(raf);
}
