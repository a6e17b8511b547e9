// Shared prelude of every plotly component module (ui/components.py puts this text in front of each one).
//
// Streamlit imports each component's JavaScript from its own Blob URL, so modules cannot import each other
// (a blob: module resolves no relative or root-relative specifier); they share this one page-wide object,
// created by whichever module runs first:
//
//   const Plotly = await pvnPlotly.load(url)  // plotly.js, loaded once per page by a classic <script>
//   pvnPlotly.Plotly                           // the same, once loaded (not window.Plotly: see load)
//   const view = await pvnPlotly.figure(key)   // the plotly_view mounted under `key`, once it is drawn
//   await view.restyle({ y: [ys] }, [0])       // Plotly.restyle on the given trace indices
//   await view.react({ data, layout })         // Plotly.react (layout defaults to the drawn one)
//   view.el                                    // the graph div (class js-plotly-plot once drawn)
//   pvnPlotly.look(layout, parent)             // the layout with st.plotly_chart's Streamlit look
//
// A view's calls are queued behind its own redraws, so a redraw from Python and an update from a sibling never
// interleave.

// The helpers are `const` function expressions, not declarations: ui/server/early_plotly.py runs this file in a
// block of a classic <script>, where a function declaration would also become a global.

// Our own copy even when window.Plotly exists: Streamlit's st.plotly_chart chunk sets window.Plotly to the
// plotly.js bundled with Streamlit (another version) whenever a native chart loads, before or after ours; the
// reference is taken in the script's load event, which follows its execution at once.
const loadPlotlyOnce = function (api, url) {
  if (api.Plotly) return Promise.resolve(api.Plotly);
  api.loading ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = new URL(url, window.location.origin).href; // a blob: module has no base URL to resolve against
    script.async = true;
    script.dataset.pvnPlotly = "";
    script.onload = () => {
      api.Plotly = globalThis.Plotly;
      api.Plotly ? resolve(api.Plotly) : reject(new Error(`${script.src} defined no Plotly`));
    };
    script.onerror = () => {
      api.loading = null; // the next figure tries again
      script.remove();
      reject(new Error(`plotly.js could not be loaded from ${script.src}`));
    };
    document.head.appendChild(script);
  });
  return api.loading;
};

const registerView = function (api, key, view) {
  api.views.set(key, view);
  for (const resolve of api.waiting.get(key) ?? []) resolve(view);
  api.waiting.delete(key);
};

const viewOf = function (api, key) {
  if (api.views.has(key)) return Promise.resolve(api.views.get(key));
  return new Promise((resolve) => api.waiting.set(key, [...(api.waiting.get(key) ?? []), resolve]));
};

// What st.plotly_chart's default theme="streamlit" does to a figure (Streamlit 1.67's PlotlyChart chunk), from
// the theme's CSS variables that Streamlit sets around a component: its fonts, greys and background under the
// figure's template (the figure's own layout still wins) and a bold title. Light and dark themes alike; the
// default is called again when the theme changes.
const STREAMLIT_GREYS = { light: ["#808495", "#e6eaf1", "#262730"], dark: ["#e6eaf1", "#31333F", "#fafafa"] };

const streamlitLook = function (layout, parent) {
  const css = getComputedStyle(parent);
  const v = (name) => css.getPropertyValue(`--st-${name}`).trim();
  const background = v("background-color") || "#ffffff";
  const [muted, grid, strong] = STREAMLIT_GREYS[isDarkColor(background) ? "dark" : "light"];
  const rem = parseFloat(v("base-font-size")) || 16;
  const small = 0.75 * rem; // Streamlit's fontSizes.twoSm, sm and md
  const axisTitle = { font: { color: muted, size: 0.875 * rem } };
  const axis = { zerolinecolor: grid, gridcolor: grid, tickcolor: grid, tickfont: { color: muted, size: small } };
  const look = {
    font: { color: muted, family: v("font"), size: small },
    title: { font: { family: v("heading-font"), size: rem, color: v("heading-color") }, xanchor: "left", x: 0 },
    legend: { font: { size: small, color: strong }, bordercolor: "rgba(0,0,0,0)", borderwidth: 0, valign: "top" },
    margin: { pad: 0.5 * rem }, // Streamlit's spacing.sm between the plot and its tick labels
    paper_bgcolor: background,
    plot_bgcolor: background,
    xaxis: { ...axis, showgrid: false, zeroline: false, title: axisTitle, automargin: true },
    yaxis: { ...axis, title: axisTitle, automargin: true },
    hoverlabel: { bgcolor: background, bordercolor: v("border-color"), font: { color: muted, family: v("font") } },
  };
  const template = layout.template ?? {};
  const styled = { ...layout, template: { ...template, layout: mergedLook(template.layout ?? {}, look) } };
  const title = typeof layout.title === "string" ? { text: layout.title } : layout.title;
  if (title?.text && !title.text.startsWith("<b>")) styled.title = { ...title, text: `<b>${title.text}</b>` };
  return styled;
};

const isDarkColor = function (color) {
  const probe = document.createElement("canvas").getContext("2d");
  probe.fillStyle = color; // normalised to #rrggbb (or rgba(...) when translucent)
  const hex = probe.fillStyle.startsWith("#") ? probe.fillStyle.slice(1).match(/../g) : ["ff", "ff", "ff"];
  const [r, g, b] = hex.map((h) => parseInt(h, 16));
  return 0.299 * r + 0.587 * g + 0.114 * b < 128;
};

const mergedLook = function (base, extra) {
  const out = { ...base };
  for (const [name, value] of Object.entries(extra)) {
    if (value === "" || value === undefined) continue; // a CSS variable Streamlit did not set
    const inner = out[name];
    const nested = value && typeof value === "object" && inner && typeof inner === "object";
    out[name] = nested ? mergedLook(inner, value) : value;
  }
  return out;
};

// Resolves once `el` is within half a screen of what its scroll container shows (at once if it is there): a figure
// below the fold is drawn when the reader scrolls near it, not while the page opens. Hidden (a collapsed expander,
// an unselected tab): when it is shown. `cancel` stops waiting (an element that left the page). Half a screen, not
// a whole one: a finished run's result then costs each tab that waited on it one figure draw less.
const NEAR_MARGIN = "50% 0px";
const nearScreen = function (el) {
  let io = null;
  const promise = new Promise((resolve) => {
    io = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        io.disconnect();
        resolve();
      },
      { root: scrollParent(el), rootMargin: NEAR_MARGIN },
    );
    io.observe(el);
  });
  return { promise, cancel: () => io.disconnect() };
};

const scrollParent = function (el) {
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    const y = getComputedStyle(p).overflowY;
    if (y === "auto" || y === "scroll") return p;
  }
  return null; // the window's viewport
};

const newPvnPlotly = function () {
  // views: key -> view handle; waiting: key -> resolve functions of figure(key) calls made before the view was drawn
  const api = { Plotly: null, loading: null, views: new Map(), waiting: new Map(), look: streamlitLook, near: nearScreen };
  api.load = (url) => loadPlotlyOnce(api, url);
  api.register = (key, view) => registerView(api, key, view);
  api.unregister = (key, view) => api.views.get(key) === view && api.views.delete(key);
  api.figure = (key) => viewOf(api, key);
  return api;
};

const pvnPlotly = (globalThis.pvnPlotly ??= newPvnPlotly());
