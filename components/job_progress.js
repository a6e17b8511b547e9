// A run's progress in the browser: its place in the queue or its progress bar and text, and the live
// loss chart of Algorithm 2's training (Section 4) on a canvas, read from the server's progress route
// (ui/server/routes.py), which answers from what its store keeps of the job. The page reads it about once a second:
// no server rerun while a run waits in line or goes (each would cost the tab's CPU). Each read asks to wait
// (`wait=1`): the server holds it until the job ends, at most a second, and the next read goes as soon as one is
// answered, so the end shows at once. When the job ends, the component sets the trigger "state" to how it ended:
// the page reruns its job panel and its results, once.
//
// Its Stop button needs no server rerun either (Stop within a second, however busy the server's script threads
// are): it POSTs `stopUrl` (the Stop route, with this session's token), and shows "Run stopped" when that is
// answered; then it sets the trigger "stop" so the page reruns its job panel (the Run button again). A refused or
// unanswered POST sets the trigger too, and the page's rerun stops the run.
//
// Its Run button POSTs `run.startUrl` (the Run route, with a one-time token of this session's settings): the server
// queues the job with no script run and answers {url, stopUrl, payload, settings}, and the page follows that job at
// once, as if the server had drawn it (`local`); the session's next script run adopts it (ui/run_panel.py), or, if
// the page's settings changed meanwhile, queues those instead. A refused or unanswered POST sets the trigger "run",
// and the page's rerun queues it instead.
//
// data = {url, stopUrl, pollMs, payload, run}; url, stopUrl and payload are null with no job to follow;
// run = {label, help, disabled, startUrl, settings, adopted} or null (settings: a name of the page's settings;
// adopted: the last job this session's script runs took over from a Run here);
// payload (the file's content) = {id, state, active, text, fraction, chart};
// chart = {title, xTitle, yTitle, series: [{name, color, dash, x: [...], y: [...]}]} or null; x is drawn on a
// log axis. A plotly figure re-laid out per poll cost about a third of a core per watching tab; a canvas redraw
// costs a millisecond.

const PAD = { left: 64, right: 12, top: 34, bottom: 44 };
const HEIGHT = 300;
const WAITING = "Training losses appear here once the PVN trains (Algorithm 2).";
const MIN_GAP_MS = 50; // between an answer and the next read, however long the answer took
const STOP_TIMEOUT_MS = 5000;
const START_TIMEOUT_MS = 5000; // then the page's rerun asks for the run instead
const STOPPED = "Run stopped. The figures below are the last finished result."; // as the panel says after its rerun
const STOP_HELP =
  "Leave the queue, or stop waiting for the running job (it is cancelled unless another session waits on it).";

function logRange(values) {
  // step 0 is drawn at step 1 (the x title says so): the range covers it, so no line starts left of the axis
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (Number.isFinite(v)) {
      const l = Math.log10(Math.max(v, 1));
      lo = Math.min(lo, l);
      hi = Math.max(hi, l);
    }
  }
  if (!Number.isFinite(lo)) return [0, 1];
  return hi - lo < 1e-9 ? [lo - 0.5, hi + 0.5] : [lo, hi];
}

function linRange(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (Number.isFinite(v)) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  }
  if (!Number.isFinite(lo)) return [0, 1];
  const pad = hi - lo < 1e-12 ? 0.5 : 0.05 * (hi - lo);
  return [lo - pad, hi + pad];
}

function niceTicks(lo, hi, count) {
  const span = hi - lo;
  const step0 = Math.pow(10, Math.floor(Math.log10(span / count)));
  const step = [1, 2, 5, 10].map((m) => m * step0).find((s) => span / s <= count) || 10 * step0;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-12; t += step) ticks.push(t);
  return ticks;
}

function axes(ctx, box, xr, yr, data, style) {
  ctx.strokeStyle = style.grid;
  ctx.fillStyle = style.text;
  ctx.lineWidth = 1;
  ctx.font = "12px sans-serif";
  ctx.textAlign = "center";
  for (let p = Math.ceil(xr[0]); p <= Math.floor(xr[1]); p++) {
    const x = box.x(p);
    ctx.beginPath(); ctx.moveTo(x, box.top); ctx.lineTo(x, box.bottom); ctx.stroke();
    ctx.fillText(p >= 3 ? `${Math.pow(10, p - 3)}k` : `${Math.pow(10, p)}`, x, box.bottom + 16);
  }
  ctx.textAlign = "right";
  for (const t of niceTicks(yr[0], yr[1], 5)) {
    const y = box.y(t);
    ctx.beginPath(); ctx.moveTo(box.left, y); ctx.lineTo(box.right, y); ctx.stroke();
    ctx.fillText(t.toPrecision(3).replace(/\.?0+$/, ""), box.left - 6, y + 4);
  }
  ctx.textAlign = "center";
  ctx.fillText(data.xTitle || "", (box.left + box.right) / 2, box.bottom + 36);
  ctx.save();
  ctx.translate(14, (box.top + box.bottom) / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.fillText(data.yTitle || "", 0, 0);
  ctx.restore();
  ctx.font = "bold 14px sans-serif";
  ctx.textAlign = "left";
  ctx.fillText(data.title || "", box.left, 18);
}

function legend(ctx, box, series) {
  ctx.font = "12px sans-serif";
  ctx.textAlign = "left";
  let y = box.top + 14;
  for (const s of series) {
    ctx.strokeStyle = s.color;
    ctx.lineWidth = 2;
    ctx.setLineDash(s.dash === "dot" ? [2, 3] : []);
    ctx.beginPath(); ctx.moveTo(box.right - 190, y - 4); ctx.lineTo(box.right - 166, y - 4); ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillText(s.name, box.right - 160, y);
    y += 16;
  }
}

function draw(canvas, data) {
  const width = Math.max(canvas.clientWidth, 300);
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(HEIGHT * ratio);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, HEIGHT);
  const series = data.series || [];
  canvas.dataset.points = String(series.reduce((n, s) => n + s.x.length, 0));
  if (!series.length) {
    // the chart's place is kept from the start: its first losses do not move the page below it
    ctx.fillStyle = getComputedStyle(canvas).color || "#333";
    ctx.font = "14px sans-serif";
    ctx.textAlign = "center";
    ctx.fillText(data.waiting || WAITING, width / 2, HEIGHT / 2);
    return;
  }
  const xr = logRange(series.flatMap((s) => s.x));
  const yr = linRange(series.flatMap((s) => s.y));
  const box = { left: PAD.left, right: width - PAD.right, top: PAD.top, bottom: HEIGHT - PAD.bottom };
  box.x = (v) => box.left + ((v - xr[0]) / (xr[1] - xr[0])) * (box.right - box.left);
  box.y = (v) => box.bottom - ((v - yr[0]) / (yr[1] - yr[0])) * (box.bottom - box.top);
  const style = getComputedStyle(canvas);
  axes(ctx, box, xr, yr, data, { grid: "rgba(128,128,128,0.25)", text: style.color || "#333" });
  for (const s of series) {
    ctx.strokeStyle = s.color;
    ctx.lineWidth = 2;
    ctx.setLineDash(s.dash === "dot" ? [2, 3] : []);
    ctx.beginPath();
    s.x.forEach((xv, i) => {
      const px = box.x(Math.log10(Math.max(xv, 1)));
      const py = box.y(s.y[i]);
      if (i === 0) ctx.moveTo(px, py); else ctx.lineTo(px, py);
    });
    ctx.stroke();
  }
  ctx.setLineDash([]);
  legend(ctx, box, series);
}

const PANEL = Symbol("pvnJobProgress");

// One panel per parentElement: its DOM, its poller, and the job state Python last drew.
class Panel {
  constructor(parent) {
    this.parent = parent;
    this.root = document.createElement("div");
    this.root.className = "pvn-job-progress";
    this.text = document.createElement("p");
    this.text.className = "pvn-job-text";
    const track = document.createElement("div");
    track.className = "pvn-job-track";
    track.setAttribute("role", "progressbar");
    track.setAttribute("aria-valuemin", "0");
    track.setAttribute("aria-valuemax", "100");
    this.bar = document.createElement("div");
    this.bar.className = "pvn-job-bar";
    track.appendChild(this.bar);
    this.track = track;
    this.canvas = document.createElement("canvas");
    this.canvas.className = "pvn-loss-chart";
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", WAITING);
    this.stop = document.createElement("button");
    this.stop.type = "button";
    this.stop.className = "pvn-job-stop";
    this.stop.textContent = "Stop";
    this.stop.title = STOP_HELP;
    this.stop.addEventListener("click", () => this.stopClicked());
    this.run = document.createElement("button");
    this.run.type = "button";
    this.run.className = "pvn-job-run";
    this.run.hidden = true;
    this.run.addEventListener("click", () => this.runClicked());
    const head = document.createElement("div");
    head.className = "pvn-job-head";
    head.append(this.stop, this.text);
    this.body = document.createElement("div"); // the job's progress: hidden with no job to follow
    this.body.append(head, track, this.canvas);
    this.root.append(this.run, this.body);
    parent.appendChild(this.root);
    this.timer = null;
    this.generation = 0;
    this.renders = 0;
    this.local = null; // a job this page queued itself ({url, stopUrl, payload}), until Python draws it
    this.shown = { text: null, percent: null, chart: null };
  }

  update(data, setTriggerValue) {
    this.renders += 1;
    this.setTrigger = setTriggerValue;
    this.runData = data.run || null;
    this.asked = false;
    const local = this.local;
    this.local = null;
    // No job drawn, though this page's Run queued one that has not ended, and that the server has not adopted (a
    // rerun that began before the Run reached it): with the same settings, keep following that job; with new ones
    // (a setting typed, then Run at once, and the typing's rerun came first), Run these instead: the server then
    // leaves the other one (or, when these cannot run, this page leaves it: runFor).
    const pending = !data.payload && local && this.reported === null && data.run?.adopted !== local.payload.id;
    if (pending && local.settings === data.run?.settings) {
      this.local = local;
      data = { ...data, url: local.url, stopUrl: local.stopUrl, payload: local.payload };
    }
    this.follow(data);
    if (pending && !this.local) this.runFor(local);
    return this.renders;
  }

  follow(data) {
    this.generation += 1;
    this.url = data.url;
    this.stopUrl = data.stopUrl;
    this.stopped = this.endSeen = false;
    this.stop.disabled = Boolean(this.stopping); // a Stop on its way keeps the button off
    this.stop.hidden = !data.stopUrl;
    this.pollMs = data.pollMs;
    this.reported = null;
    this.active = Boolean(data.payload);
    this.body.hidden = !this.active;
    this.drawRun();
    clearTimeout(this.timer);
    if (!this.active) return;
    this.show(data.payload);
    if (this.reported === null) this.poll(this.generation);
  }

  drawRun() {
    const run = this.runData;
    this.run.hidden = !run;
    if (!run) return;
    if (this.run.textContent !== run.label) this.run.textContent = run.label;
    this.run.title = run.help || "";
    this.run.disabled = Boolean(run.disabled || this.active || this.starting || this.asked);
  }

  async runClicked(again = false) {
    // The Run route queues the job at once and answers what to follow; refused (a used or replaced token, a
    // setting over the limits) or unreachable, the trigger asks the page's rerun to queue it (Run stays off until
    // that rerun draws the panel again). `again`: the page's own Run for its new settings (see update).
    if ((this.run.disabled && !again) || this.starting) return;
    this.starting = this.run.disabled = true;
    const url = this.runData?.startUrl;
    const renders = this.renders;
    let answer = null;
    if (url) {
      try {
        const signal = AbortSignal.timeout(START_TIMEOUT_MS);
        const response = await fetch(url, { method: "POST", cache: "no-store", signal });
        if (response.ok) answer = await response.json();
      } catch (error) {
        // the rerun below asks for it
      }
    }
    this.starting = false;
    if (this.destroyed) return; // the page left this panel meanwhile: its next script run adopts the job
    // Python drew a job meanwhile: it adopted this Run's (or queued the page's new settings instead): follow that
    if (this.renders !== renders && this.active) return;
    const queued = answer?.url && answer.payload ? answer : null;
    if (queued && this.runData?.adopted === queued.payload.id) return; // adopted, and over
    if (queued && queued.settings !== this.runData?.settings) {
      this.runFor(queued); // the page's settings changed meanwhile
      return;
    }
    if (queued) {
      this.local = queued;
      this.follow({ url: queued.url, stopUrl: queued.stopUrl, pollMs: this.pollMs, payload: queued.payload });
      return;
    }
    this.asked = true;
    this.drawRun();
    this.setTrigger("run", Date.now());
  }

  async poll(generation) {
    // One read at a time, each after the last: the next goes when this one is answered (held by the server until
    // the job ends, at most a second), or a second after this one began if the server answered sooner.
    const began = performance.now();
    try {
      const response = await fetch(`${this.url}?t=${Date.now()}&wait=1`, { cache: "no-store" });
      const payload = response.ok ? await response.json() : null;
      if (payload && generation === this.generation) this.show(payload); // checked after the body: new data may come
      // while it arrives (a job the page's rerun drew instead of this one)
    } catch (error) {
      // the server is busy or restarting: the next read tries again
    }
    if (generation !== this.generation || this.reported !== null) return; // new data, an end, or gone
    const wait = Math.max(this.pollMs - (performance.now() - began), MIN_GAP_MS);
    this.timer = setTimeout(() => this.poll(generation), wait);
  }

  runFor(queued) {
    // A Run queued `queued` with the settings the page showed before its last change; it was meant for the page's
    // settings now: Run those (the server then leaves `queued`), or, when they cannot run, leave `queued` here.
    if (this.runData?.startUrl) {
      this.runClicked(true);
    } else if (queued.stopUrl) {
      fetch(queued.stopUrl, { method: "POST", cache: "no-store" }).catch(() => {}); // the next script run agrees
    }
  }

  async stopClicked() {
    // The Stop route takes the Stop at once; then the page reruns its panel, which draws the Run button again.
    // Refused or unreachable: the trigger alone asks the server to stop, in that rerun.
    // A redraw from Python meanwhile (a page rerun) changes nothing: the click still ends in the trigger.
    if (this.stop.disabled || this.stopping || this.reported !== null) return; // once, and not after the end
    this.stop.disabled = this.stopping = true;
    this.local = null; // whatever the answer, this page no longer follows a job it queued itself
    let taken = false;
    try {
      const signal = AbortSignal.timeout(STOP_TIMEOUT_MS); // a Stop never holds back the end's report for long
      taken = (await fetch(this.stopUrl, { method: "POST", cache: "no-store", signal })).ok;
    } catch (error) {
      // the rerun below stops it
    }
    this.stopping = false;
    if (taken || this.endSeen) {
      this.reported ??= "stopped"; // the trigger below reruns the panel, which draws the end too (_on_stop)
      clearTimeout(this.timer);
    }
    if (taken) {
      this.stopped = true; // no further reads shown
      this.text.textContent = this.text.title = this.shown.text = STOPPED;
      this.root.dataset.state = "stopped";
    }
    this.setTrigger("stop", taken ? "taken" : "asked");
  }

  show(payload) {
    // only what changed is touched: an unchanged poll costs the tab no style, layout or paint
    if (this.stopped) return;
    if (this.local) this.local.payload = payload;
    const text = payload.text || "";
    if (text !== this.shown.text) {
      this.text.textContent = this.text.title = this.shown.text = text;
    }
    const percent = Math.round(100 * Math.min(Math.max(payload.fraction || 0, 0), 1));
    if (percent !== this.shown.percent) {
      this.bar.style.transform = `scaleX(${percent / 100})`;
      this.track.setAttribute("aria-valuenow", String((this.shown.percent = percent)));
    }
    const chart = JSON.stringify(payload.chart ?? null);
    if (chart !== this.shown.chart || this.canvas.clientWidth !== this.drawnWidth) {
      this.shown.chart = chart;
      this.drawnWidth = this.canvas.clientWidth;
      const series = payload.chart?.series ?? [];
      this.canvas.setAttribute("aria-label", series.length ? payload.chart.title || "loss chart" : WAITING);
      draw(this.canvas, series.length ? payload.chart : {});
    }
    if (this.root.dataset.state !== payload.state) this.root.dataset.state = payload.state;
    if (!payload.active) this.stop.disabled = this.endSeen = true; // ended: Run comes back with the rerun below
    // (not while a Stop is on its way: its own rerun draws the end, one rerun instead of two)
    if (!payload.active && payload.state !== this.reported && !this.stopping) {
      this.reported = payload.state; // once: Python reruns the panel and the results, which draw it anew
      clearTimeout(this.timer);
      this.setTrigger("state", payload.state);
    }
  }

  destroy(render) {
    // Only the latest call's cleanup ends the panel: Streamlit runs a superseded call's cleanup at once.
    if (render !== this.renders) return;
    this.destroyed = true;
    this.generation += 1; // a read still in flight schedules no other
    clearTimeout(this.timer);
    this.root.remove();
    delete this.parent[PANEL];
  }
}

export default function jobProgress({ data, parentElement, setTriggerValue }) {
  const panel = (parentElement[PANEL] ??= new Panel(parentElement));
  const render = panel.update(data, setTriggerValue);
  return () => panel.destroy(render);
}
