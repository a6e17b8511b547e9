// The benchmark slider of scripts/bench/redraw_app.py (after the prelude components/plotly_lib.js). Each
// `input` event redraws the target figure in the browser and records, in window.pvnRedrawTimes[target], the
// time from the event to the redraw's promise resolving (`promise`), to the animation frame after it (`frame`)
// and to the task after that frame (`task`, roughly after the paint). mode "restyle": Plotly.restyle of trace 0's y (101 points); mode "react":
// Plotly.react with new arrays for both traces (data.points markers, data.arrows quiver arrows).

export default function benchSlider({ data, parentElement }) {
  if (parentElement.querySelector("input")) return; // called again only when data changes
  const input = document.createElement("input");
  Object.assign(input, { type: "range", min: 0, max: 1000, value: 0 });
  input.dataset.target = data.target;
  input.style.width = "300px";
  parentElement.appendChild(input);
  const times = ((globalThis.pvnRedrawTimes ??= {})[data.target] = { promise: [], frame: [], task: [] });
  input.addEventListener("input", async () => {
    const t0 = performance.now();
    const view = await pvnPlotly.figure(data.target);
    const phase = Number(input.value) / 100;
    await (data.mode === "restyle" ? view.restyle({ y: [sine(phase)] }, [0]) : view.react(cloud(view, data, phase)));
    times.promise.push(performance.now() - t0);
    requestAnimationFrame(() => {
      times.frame.push(performance.now() - t0);
      setTimeout(() => times.task.push(performance.now() - t0));
    });
  });
}

function sine(phase) {
  return Array.from({ length: 101 }, (_, i) => Math.sin((2 * Math.PI * i) / 100 + phase));
}

function cloud(view, data, phase) {
  const n = data.points;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = (2 * Math.PI * i) / (n - 1);
    const r = 1 + 0.3 * Math.sin(5 * t + phase);
    x[i] = r * Math.cos(t);
    y[i] = r * Math.sin(t);
  }
  const [points, field] = view.el.data;
  return { data: [{ ...points, x, y }, { ...field, ...quiver(Math.sqrt(data.arrows), phase) }] };
}

function quiver(side, phase) {
  const x = [];
  const y = [];
  for (let i = 0; i < side; i++) {
    for (let j = 0; j < side; j++) {
      const gx = -1.4 + (2.8 * i) / (side - 1);
      const gy = -1.4 + (2.8 * j) / (side - 1);
      const angle = phase + gx + gy;
      const x1 = gx + 0.1 * Math.cos(angle);
      const y1 = gy + 0.1 * Math.sin(angle);
      const [left, right] = [angle + Math.PI * 0.85, angle - Math.PI * 0.85];
      x.push(gx, x1, null, x1 + 0.04 * Math.cos(left), x1, x1 + 0.04 * Math.cos(right), null);
      y.push(gy, y1, null, y1 + 0.04 * Math.sin(left), y1, y1 + 0.04 * Math.sin(right), null);
    }
  }
  return { x, y };
}
