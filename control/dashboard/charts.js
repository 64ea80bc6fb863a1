// Charts over the last minutes, from what the page already polls: each
// refresh adds a sample to a ring (CHART_SPAN_MS of them at most); the
// charts are plain SVG polylines. Produce rate (records/s appended to
// the leaders' logs), HW and LEO per partition, lag per consumer group.
"use strict";

const CHART_SPAN_MS = 5 * 60 * 1000;
const CHART_MIN_STEP_MS = 900;
const CHART_MAX_PARTITIONS = 8;
const CHART_COLORS = ["#2f6fb3", "#d1342f", "#1f7a3a", "#a15c00", "#6a3fb5", "#00838f"];

const samples = []; // {t, leo: {"topic/p": n}, hw: {...}, lag: {group: n}}

function takeSample() {
  const now = Date.now();
  if (samples.length && now - samples[samples.length - 1].t < CHART_MIN_STEP_MS) return;
  const smp = { t: now, leo: {}, hw: {}, lag: {} };
  for (const t of state.cluster.topics) {
    if (t.name.startsWith("__")) continue;
    for (const p of t.partitions) {
      const key = `${t.name}/${p.partition}`;
      const leader = p.replicas.find((r) => r.broker === p.leader);
      smp.leo[key] = leader ? leader.log_end_offset : Math.max(0, ...p.replicas.map((r) => r.log_end_offset));
      smp.hw[key] = Math.max(0, p.high_watermark);
    }
  }
  for (const g of state.groups) {
    smp.lag[g.group] = (g.offsets || []).reduce((a, o) => a + Math.max(0, o.lag || 0), 0);
  }
  samples.push(smp);
  while (samples.length && now - samples[0].t > CHART_SPAN_MS) samples.shift();
  renderCharts();
}
renderHooks.push(takeSample);

// produceRate is records/s between consecutive samples, summed over the
// partitions present in both (a leader change's truncation counts 0).
function produceRate() {
  const out = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1], b = samples[i];
    let n = 0;
    for (const [k, v] of Object.entries(b.leo)) if (k in a.leo) n += Math.max(0, v - a.leo[k]);
    out.push([b.t, n * 1000 / (b.t - a.t)]);
  }
  return out;
}

const SVG = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// lineChart draws series ({name, cls, color, points: [[t, v]...]}) over the
// ring's time span, from 0 to the largest value.
function lineChart(title, key, series, fmt) {
  const W = 300, H = 90, L = 44, R = 6, T = 6, B = 16;
  const t1 = samples.length ? samples[samples.length - 1].t : Date.now(), t0 = t1 - CHART_SPAN_MS;
  const top = Math.max(1, ...series.flatMap((x) => x.points.map((p) => p[1])));
  const x = (t) => L + (W - L - R) * (t - t0) / CHART_SPAN_MS;
  const y = (v) => T + (H - T - B) * (1 - v / top);
  const f = fmt || ((v) => String(Math.round(v)));
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
    "aria-label": `${title}: ${series.map((x) => `${x.name} ${x.points.length ? f(x.points[x.points.length - 1][1]) : "-"}`).join(", ")}` },
    svgEl("line", { x1: L, y1: y(0), x2: W - R, y2: y(0), class: "axis" }),
    svgEl("line", { x1: L, y1: y(top), x2: W - R, y2: y(top), class: "grid" }),
    svgEl("text", { x: L - 4, y: y(top) + 4, "text-anchor": "end" }, f(top)),
    svgEl("text", { x: L - 4, y: y(0) + 4, "text-anchor": "end" }, "0"),
    svgEl("text", { x: L, y: H - 3 }, "−5 min"),
    svgEl("text", { x: W - R, y: H - 3, "text-anchor": "end" }, "now"));
  series.forEach((ser, i) => {
    if (ser.points.length === 0) return;
    svg.append(svgEl("polyline", { class: `series ${ser.cls || ""}`, fill: "none", stroke: ser.color || CHART_COLORS[i % CHART_COLORS.length],
      "stroke-width": 1.8, "data-series": ser.name, "data-last": ser.points[ser.points.length - 1][1],
      points: ser.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ") }));
  });
  const legend = h("div", { class: "chart-legend" }, series.map((ser, i) => h("span", {},
    h("span", { class: "swatch", style: `background:${ser.color || CHART_COLORS[i % CHART_COLORS.length]}` }),
    ` ${ser.name} ${ser.points.length ? f(ser.points[ser.points.length - 1][1]) : "-"}`)));
  return h("figure", { class: "chart", "data-chart": key }, h("figcaption", {}, title), svg, legend);
}

function renderCharts() {
  const box = $("#charts");
  if (samples.length < 2) {
    box.replaceChildren(h("p", { class: "empty" }, "Collecting samples…"));
    return;
  }
  const charts = [lineChart("produce rate (records/s)", "rate", [{ name: "all topics", points: produceRate() }], (v) => v.toFixed(v < 10 ? 1 : 0))];
  const keys = Object.keys(samples[samples.length - 1].leo).slice(0, CHART_MAX_PARTITIONS);
  for (const k of keys) {
    const pts = (m) => samples.filter((x) => k in x[m]).map((x) => [x.t, x[m][k]]);
    charts.push(lineChart(`${k}: HW and LEO`, `partition:${k}`,
      [{ name: "LEO", cls: "leo", color: "#9cc2ea", points: pts("leo") }, { name: "HW", cls: "hw", color: "#2f6fb3", points: pts("hw") }]));
  }
  const groups = Object.keys(samples[samples.length - 1].lag);
  if (groups.length) {
    charts.push(lineChart("consumer group lag (records)", "lag",
      groups.slice(0, CHART_COLORS.length).map((g) => ({ name: g, points: samples.filter((x) => g in x.lag).map((x) => [x.t, x.lag[g]]) }))));
  }
  box.replaceChildren(...charts);
}
