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
//
// A view's calls are queued behind its own redraws, so a redraw from Python and an update from a sibling never
// interleave.

const pvnPlotly = (globalThis.pvnPlotly ??= (() => {
  let loading = null;
  const views = new Map(); // key -> view handle
  const waiting = new Map(); // key -> resolve functions of figure(key) calls made before the view was drawn

  // Our own copy even when window.Plotly exists: Streamlit's st.plotly_chart chunk sets window.Plotly to the
  // plotly.js bundled with Streamlit (another version) whenever a native chart loads, before or after ours; the
  // reference is taken in the script's load event, which follows its execution at once.
  function load(url) {
    if (api.Plotly) return Promise.resolve(api.Plotly);
    loading ??= new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = new URL(url, window.location.origin).href; // a blob: module has no base URL to resolve against
      script.async = true;
      script.dataset.pvnPlotly = "";
      script.onload = () => {
        api.Plotly = globalThis.Plotly;
        api.Plotly ? resolve(api.Plotly) : reject(new Error(`${script.src} defined no Plotly`));
      };
      script.onerror = () => {
        loading = null; // the next figure tries again
        script.remove();
        reject(new Error(`plotly.js could not be loaded from ${script.src}`));
      };
      document.head.appendChild(script);
    });
    return loading;
  }

  function register(key, view) {
    views.set(key, view);
    for (const resolve of waiting.get(key) ?? []) resolve(view);
    waiting.delete(key);
  }

  function unregister(key, view) {
    if (views.get(key) === view) views.delete(key);
  }

  function figure(key) {
    if (views.has(key)) return Promise.resolve(views.get(key));
    return new Promise((resolve) => waiting.set(key, [...(waiting.get(key) ?? []), resolve]));
  }

  const api = { Plotly: null, load, register, unregister, figure, views };
  return api;
})());
