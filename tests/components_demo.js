// The demo slider of tests/components_app.py (after the prelude components/plotly_lib.js): each `input`
// event recomputes the target figure's first trace in the browser (y = sin(x + phase / 10)) and restyles it;
// `change` sends the phase to Python with setStateValue. window.pvnDemo counts events and finished redraws.

export default function demoSlider({ data, parentElement, setStateValue }) {
  if (parentElement.querySelector("input.pvn-demo")) return; // called again only when data changes
  const input = document.createElement("input");
  Object.assign(input, { type: "range", min: 0, max: 100, value: 0, className: "pvn-demo" });
  input.style.width = "300px";
  parentElement.appendChild(input);
  const counts = (globalThis.pvnDemo = { inputs: 0, redraws: 0, changes: 0 });
  const x = Array.from({ length: 101 }, (_, i) => (2 * Math.PI * i) / 100);
  input.addEventListener("input", async () => {
    counts.inputs += 1;
    const phase = Number(input.value);
    const view = await pvnPlotly.figure(data.target);
    await view.restyle({ y: [x.map((v) => Math.sin(v + phase / 10))] }, [0]);
    counts.redraws += 1;
    counts.phase = phase;
  });
  input.addEventListener("change", () => {
    counts.changes += 1;
    setStateValue("phase", Number(input.value));
  });
}
