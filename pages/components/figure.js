// plotly_view (ui/components.py): one plotly figure, given as plotly JSON, drawn by plotly.js in the page.
//
// data = { key, figure: { data, layout, frames }, config, plotly }: `plotly` is plotly.min.js's URL on the app's
// own server, `config` the plotly.js config (modebar download options, no logo).
//
// Streamlit calls the default export at mount and again, on the same parentElement, whenever `data` changes
// (not on a rerun with identical data); the cleanup it keeps is the last one returned, and it runs it only when
// the element leaves the page. So the view lives on parentElement and each call redraws it with Plotly.react.

const VIEW = Symbol.for("pvn.plotlyView");
const DEFAULT_HEIGHT = 450; // px, plotly.js's default

export default function plotlyView({ data, parentElement }) {
  const view = (parentElement[VIEW] ??= new PlotlyView(parentElement));
  const generation = view.show(data);
  return () => view.destroy(generation);
}

// One figure on one parentElement. Its redraws (from Python) and its handle's calls (from sibling modules) run
// one after the other through `queue`.
class PlotlyView {
  constructor(parent) {
    this.parent = parent;
    this.el = document.createElement("div");
    this.el.className = "pvn-plotly-view";
    this.el.style.width = "100%";
    parent.appendChild(this.el);
    Object.assign(this, { generation: 0, key: null, config: {}, destroyed: false, observer: null });
    this.queue = Promise.resolve();
    const el = this.el;
    this.handle = {
      el,
      key: null,
      restyle: (update, traces) => this.run(() => pvnPlotly.Plotly.restyle(el, update, traces)),
      react: (figure) =>
        this.run(() => pvnPlotly.Plotly.react(el, figure.data ?? el.data, figure.layout ?? el.layout, this.config)),
    };
  }

  run(task) {
    const result = this.queue.then(task);
    this.queue = result.catch(() => {});
    return result;
  }

  show(data) {
    this.generation += 1;
    const generation = this.generation;
    this.el.style.height = `${data.figure.layout?.height ?? DEFAULT_HEIGHT}px`; // the space is kept while loading
    this.run(() => this.draw(data, generation)).catch((error) => this.fail(error));
    return generation;
  }

  async draw(data, generation) {
    if (generation !== this.generation || this.destroyed) return; // a newer figure is queued, or gone
    const Plotly = await pvnPlotly.load(data.plotly);
    if (this.destroyed) return;
    const layout = streamlitLook(data.figure.layout ?? {}, this.parent);
    const { data: traces = [], frames } = data.figure;
    this.config = data.config ?? {};
    this.el.querySelector(":scope > .pvn-plotly-error")?.remove(); // an earlier figure's failure
    await Plotly.react(this.el, { data: traces, layout, frames, config: this.config });
    if (this.key !== data.key) {
      if (this.key !== null) pvnPlotly.unregister(this.key, this.handle);
      this.key = this.handle.key = data.key;
      pvnPlotly.register(this.key, this.handle);
    }
    this.observer ??= resizeWithWidth(this.el, Plotly);
  }

  fail(error) {
    console.error("plotly_view:", error);
    const message = document.createElement("div");
    message.className = "pvn-plotly-error";
    message.textContent = `The figure could not be drawn: ${error.message ?? error}`;
    this.el.replaceChildren(message);
  }

  destroy(generation) {
    // Only the latest call's cleanup ends the view: Streamlit runs a superseded call's cleanup at once.
    if (generation !== this.generation) return;
    this.destroyed = true;
    this.observer?.disconnect();
    if (this.key !== null) pvnPlotly.unregister(this.key, this.handle);
    pvnPlotly.Plotly?.purge(this.el);
    this.el.remove();
    delete this.parent[VIEW];
  }
}

// plotly.js sizes an autosized figure to its div when drawn; this redraws it when the div's width changes
// (window resize, sidebar collapsed, column width).
function resizeWithWidth(el, Plotly) {
  let width = el.clientWidth;
  const observer = new ResizeObserver(() => {
    if (el.clientWidth === width || !el.isConnected) return;
    width = el.clientWidth;
    Plotly.Plots.resize(el);
  });
  observer.observe(el);
  return observer;
}

// What st.plotly_chart's default theme="streamlit" does to a figure (Streamlit 1.67's PlotlyChart chunk), from
// the theme's CSS variables that Streamlit sets around a component: its fonts, greys and background under the
// figure's template (the figure's own layout still wins) and a bold title. Light and dark themes alike; the
// default is called again when the theme changes.
const GREYS = { light: ["#808495", "#e6eaf1", "#262730"], dark: ["#e6eaf1", "#31333F", "#fafafa"] };

function streamlitLook(layout, parent) {
  const css = getComputedStyle(parent);
  const v = (name) => css.getPropertyValue(`--st-${name}`).trim();
  const background = v("background-color") || "#ffffff";
  const [muted, grid, strong] = GREYS[isDark(background) ? "dark" : "light"];
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
  const styled = { ...layout, template: { ...template, layout: merged(template.layout ?? {}, look) } };
  const title = typeof layout.title === "string" ? { text: layout.title } : layout.title;
  if (title?.text && !title.text.startsWith("<b>")) styled.title = { ...title, text: `<b>${title.text}</b>` };
  return styled;
}

function isDark(color) {
  const probe = document.createElement("canvas").getContext("2d");
  probe.fillStyle = color; // normalised to #rrggbb (or rgba(...) when translucent)
  const hex = probe.fillStyle.startsWith("#") ? probe.fillStyle.slice(1).match(/../g) : ["ff", "ff", "ff"];
  const [r, g, b] = hex.map((h) => parseInt(h, 16));
  return 0.299 * r + 0.587 * g + 0.114 * b < 128;
}

function merged(base, extra) {
  const out = { ...base };
  for (const [name, value] of Object.entries(extra)) {
    if (value === "" || value === undefined) continue; // a CSS variable Streamlit did not set
    const inner = out[name];
    const nested = value && typeof value === "object" && inner && typeof inner === "object";
    out[name] = nested ? merged(inner, value) : value;
  }
  return out;
}
