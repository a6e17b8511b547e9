// plotly.js, started from the page's HTML. ui/server/early_plotly.py puts this file into the <head> of the page Streamlit
// serves, in one <script> after plotly_lib.js (whose pvnPlotly it uses) and with plotly.js's URL as a data attribute.
//
// The components would load plotly.js only once they mount, which is after the page's first script run has
// ended on the server, and then spend about a second evaluating it before the first figure is drawn. Here every
// page (each draws a figure in its first screen) starts it with pvnPlotly.load as soon as its first script run
// starts, while the browser mostly waits for the server; the components' own pvnPlotly.load calls then find it
// loading or loaded. Should it fail, pvnPlotly.load forgets it and the components try again.
(() => {
  const url = document.currentScript.dataset.plotly;
  // Streamlit marks its app's element with the script's state: "initial" until the server starts the first run.
  // Not sooner: evaluating plotly.js takes the page's only thread for about a second, and Streamlit must first
  // connect and ask for that run.
  const watch = new MutationObserver(() => {
    const state = document.querySelector("[data-test-script-state]")?.getAttribute("data-test-script-state");
    if (state && state !== "initial") {
      watch.disconnect();
      pvnPlotly.load(url).catch(() => {}); // a failure is the components' to show, when they load it again
    }
  });
  const attributeFilter = ["data-test-script-state"];
  watch.observe(document, { subtree: true, childList: true, attributes: true, attributeFilter });
})();
