// plotly_view (ui/components.py): one plotly figure, given as plotly JSON, drawn by plotly.js in the page.
//
// data = { key, figure: { data, layout, frames }, config, plotly }: `plotly` is plotly.min.js's URL on the app's
// own server, `config` the plotly.js config (modebar download options, no logo).
//
// Streamlit calls the default export at mount and again, on the same parentElement, whenever `data` changes
// (not on a rerun with identical data); the cleanup it keeps is the last one returned, and it runs it only when
// the element leaves the page. So the view lives on parentElement and each call redraws it with Plotly.react.
//
// A figure is drawn when it comes within half a screen of what the page shows (pvnPlotly.near), at first and for
// every new figure from Python: a results page of ten figures and three players opens without drawing what is
// below the fold, and a finished run's page, redrawn in every tab that waited on it, redraws only what each tab
// shows; a figure it scrolled past is redrawn when the reader comes back near it.

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
    // every figure from Python, not only the first: a finished run's new figures are drawn where the reader is
    // (the tabs of a class waiting on one run each redraw what they show, not the figures they scrolled past)
    this.waiting = pvnPlotly.near(this.el);
    await this.waiting.promise;
    if (generation !== this.generation || this.destroyed) return;
    const Plotly = await pvnPlotly.load(data.plotly);
    if (this.destroyed) return;
    const layout = pvnPlotly.look(data.figure.layout ?? {}, this.parent);
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
    this.waiting?.cancel();
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
