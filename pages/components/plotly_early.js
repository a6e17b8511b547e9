// plotly.js, started from the page's HTML (ui/asgi.py puts this script in the <head> of the page Streamlit serves,
// with the file's URL as a data attribute).
//
// The components would load plotly.js only once they mount, which is after the page's first script run has
// ended on the server, and then spend about a second evaluating it before the first figure is drawn. Here every
// page (each draws a figure in its first screen) starts evaluating it as soon as its first script run starts,
// while the browser mostly waits for the server. pvnPlotly.load (plotly_lib.js) takes globalThis.pvnPlotlyEarly
// when its URL is the same, and loads plotly.js itself when this failed.
(() => {
  const me = document.currentScript;
  const url = new URL(me.dataset.plotly, location.origin).href;

  function start() {
    if (globalThis.pvnPlotlyEarly || document.querySelector("script[data-pvn-plotly]")) return; // already loading
    const script = document.createElement("script");
    script.src = url;
    script.async = true;
    script.dataset.pvnPlotly = "";
    // The reference is taken in the load event, as pvnPlotly.load does: Streamlit's own plotly chunk may set
    // window.Plotly to another version later.
    const promise = new Promise((resolve, reject) => {
      script.onload = () => (globalThis.Plotly ? resolve(globalThis.Plotly) : reject(new Error("no Plotly")));
      script.onerror = () => reject(new Error(`plotly.js could not be loaded from ${url}`));
    });
    promise.catch(() => {
      script.remove();
      globalThis.pvnPlotlyEarly = null; // pvnPlotly.load tries again its own way
    });
    globalThis.pvnPlotlyEarly = { url, promise };
    document.head.appendChild(script);
  }

  // Streamlit marks its app's element with the script's state: "initial" until the server starts the first run.
  // Not sooner: evaluating plotly.js takes the page's only thread for about a second, and Streamlit must first
  // connect and ask for that run.
  const watch = new MutationObserver(() => {
    const state = document.querySelector("[data-test-script-state]")?.getAttribute("data-test-script-state");
    if (state && state !== "initial") {
      watch.disconnect();
      start();
    }
  });
  const attributeFilter = ["data-test-script-state"];
  watch.observe(document, { subtree: true, childList: true, attributes: true, attributeFilter });
})();
