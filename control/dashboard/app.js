// fakekafka dashboard: a client of the HTTP control API. It loads the
// cluster, groups, transactions and fault rules, then follows GET /v1/events/stream and
// reloads them whenever the cluster reports a change (and once a second).
// No build step, no external assets. This file: helpers, state, brokers,
// topics, groups, transactions, fault rules; events.js the events panel,
// records.js the record browser, charts.js the charts.
"use strict";


const $ = (sel) => document.querySelector(sel);

// h builds an element: h("button", {class: "x", onclick: f}, "text", child...).
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "style") el.setAttribute("style", v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.body = JSON.stringify(body);
    opts.headers["Content-Type"] = "application/json";
  }
  const resp = await fetch(path, opts);
  let data = null;
  try { data = await resp.json(); } catch (e) { /* not JSON */ }
  if (!resp.ok) throw new Error((data && data.error) || `${method} ${path}: HTTP ${resp.status}`);
  return data;
}

function setStatus(text, isError) {
  const s = $("#status");
  s.textContent = text;
  s.classList.toggle("error", !!isError);
}

// act runs a control action, after confirmation when it can lose data.
async function act(what, method, path, body, warning) {
  if (warning && !(await confirmAction(warning))) {
    setStatus(`${what}: cancelled`);
    return false;
  }
  let ok = false;
  try {
    await api(method, path, body);
    setStatus(`${what}: done`);
    ok = true;
  } catch (e) {
    setStatus(`${what}: ${e.message}`, true);
  }
  refresh();
  return ok;
}

function confirmAction(text) {
  const d = $("#confirm");
  $("#confirm-text").textContent = text;
  d.returnValue = "";
  return new Promise((resolve) => {
    d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    d.showModal();
  });
}

// ---- state and rendering ----

const state = { cluster: null, groups: [], faults: [], txns: [], showInternal: false };
// Elements are rebuilt only when what they show changed, so a refresh
// never swaps a button away under the pointer or the keyboard.
const partitionCache = new Map(); // "topic/partition" -> {json, el}
const brokerCache = new Map(); // broker id -> {json, el}

function cachedBroker(b) {
  const json = JSON.stringify(b) + (b.id === state.cluster.controller);
  const c = brokerCache.get(b.id);
  if (c && c.json === json) return c.el;
  const el = renderBroker(b);
  brokerCache.set(b.id, { json, el });
  return el;
}

// renderHooks run after every render (the record browser's choices, the
// charts' samples).
const renderHooks = [];

let refreshing = null, again = false;
async function refresh() {
  if (refreshing) { again = true; return refreshing; }
  refreshing = (async () => {
    try {
      const [cluster, groups, faults, txns] = await Promise.all([
        api("GET", "/v1/cluster"), api("GET", "/v1/groups"), api("GET", "/v1/faults"), api("GET", "/v1/transactions")]);
      state.cluster = cluster;
      state.groups = groups.groups || [];
      state.faults = faults.faults || [];
      state.txns = txns.transactions || [];
      render();
    } catch (e) {
      setStatus(`cannot load the cluster: ${e.message}`, true);
    }
  })();
  await refreshing;
  refreshing = null;
  if (again) { again = false; refresh(); }
}

let refreshTimer = null;
function scheduleRefresh() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, 80);
}

// render redraws everything, keeping keyboard focus on the control that
// had it (matched by data-key).
function render() {
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
  $("#cluster-id").textContent = state.cluster.cluster_id;
  sync($("#brokers"), state.cluster.brokers.map(cachedBroker));
  renderTopics();
  const groupsJSON = JSON.stringify(state.groups), faultsJSON = JSON.stringify(state.faults), txnsJSON = JSON.stringify(state.txns);
  if (groupsJSON !== render.groups) { render.groups = groupsJSON; renderGroups(); }
  if (txnsJSON !== render.txns) { render.txns = txnsJSON; renderTransactions(); }
  if (faultsJSON !== render.faults) { render.faults = faultsJSON; renderFaults(); }
  for (const f of renderHooks) f();
  if (focused && (!document.activeElement || !document.activeElement.isConnected || document.activeElement === document.body)) {
    const el = document.querySelector(`[data-key="${CSS.escape(focused)}"]`);
    if (el) el.focus();
  }
}

function brokerStatus(b) {
  if (b.isolated) return "isolated";
  if (b.up) return "up";
  return b.fenced ? "fenced" : "down";
}

function renderBroker(b) {
  const st = brokerStatus(b);
  const id = b.id, base = `/v1/brokers/${id}`;
  const btn = (label, key, enabled, onclick, danger) =>
    h("button", { "data-action": key, "data-key": `b${id}-${key}`, class: danger ? "danger" : null, disabled: !enabled, onclick }, label);
  return h("div", { class: "broker", "data-broker": id, "data-status": st },
    h("h3", {}, `Broker ${id}`,
      h("span", { class: `badge status-${st}` }, st === "fenced" ? "down, fenced" : st),
      id === state.cluster.controller ? h("span", { class: "badge controller" }, "controller") : null),
    h("div", { class: "addr" }, b.address),
    h("div", { class: "actions" },
      btn("Crash", "crash", b.up && !b.isolated, () => act(`crash broker ${id}`, "POST", `${base}/stop`, { mode: "crash" },
        `Crash broker ${id}? Its listener and connections drop at once. Records acknowledged with acks=1 that no follower has fetched yet will be lost.`), true),
      btn("Clean stop", "clean", b.up && !b.isolated, () => act(`clean stop of broker ${id}`, "POST", `${base}/stop`, { mode: "clean" })),
      btn("Power loss", "powerloss", b.up && !b.isolated, () => act(`power loss of broker ${id}`, "POST", `${base}/stop`, { mode: "powerloss" },
        `Cut the power of broker ${id}? Every replica there loses what was not flushed to disk (with Kafka's default flush policy, everything since its last clean shutdown). If no other replica has those records, acknowledged records are lost.`), true),
      btn("Restart", "start", !b.up, () => act(`restart of broker ${id}`, "POST", `${base}/start`)),
      btn("Isolate", "isolate", b.up && !b.isolated, () => act(`isolation of broker ${id}`, "POST", `${base}/isolate`, undefined,
        `Isolate broker ${id} from the other brokers? A leader there becomes a zombie: it still takes acks=1 writes, which are lost when it heals.`), true),
      btn("Heal", "heal", b.isolated, () => act(`heal of broker ${id}`, "POST", `${base}/heal`))));
}

// sync makes els the children of box, touching the DOM only if they differ.
function sync(box, els) {
  if (els.length !== box.children.length || els.some((el, i) => box.children[i] !== el)) box.replaceChildren(...els);
}

const topicCache = new Map(); // name -> {head, el}
let internalToggle = null;

function renderTopics() {
  const topics = state.cluster.topics.filter((t) => state.showInternal || !t.name.startsWith("__"));
  const box = $("#topics");
  internalToggle = internalToggle || h("label", { class: "legend" },
    h("input", { type: "checkbox", id: "show-internal", "data-key": "show-internal",
      onchange: (e) => { state.showInternal = e.target.checked; render(); refollow(); } }), " show internal topics");
  if (topics.length === 0) {
    sync(box, [internalToggle, h("p", { class: "empty" }, "No topics yet.")]);
    return;
  }
  const seen = new Set(), seenTopics = new Set();
  const cards = topics.map((t) => {
    seenTopics.add(t.name);
    const configs = Object.entries(t.configs || {}).map(([k, v]) => `${k}=${v}`).join(" ");
    const head = `${t.partitions.length} partition${t.partitions.length === 1 ? "" : "s"} ${configs}`;
    let card = topicCache.get(t.name);
    if (!card || card.head !== head) {
      card = { head, el: h("article", { class: "topic", "data-topic": t.name },
        h("h3", {}, t.name, " ", h("small", {}, head)), h("div", { class: "parts" })) };
      topicCache.set(t.name, card);
    }
    sync(card.el.querySelector(".parts"), t.partitions.map((p) => {
      const key = `${t.name}/${p.partition}`;
      seen.add(key);
      const txns = openTxns(t.name, p.partition);
      const json = JSON.stringify(p) + JSON.stringify(txns);
      const cached = partitionCache.get(key);
      if (cached && cached.json === json) return cached.el;
      const el = renderPartition(t.name, p, txns);
      partitionCache.set(key, { json, el });
      return el;
    }));
    return card.el;
  });
  for (const k of partitionCache.keys()) if (!seen.has(k)) partitionCache.delete(k);
  for (const k of topicCache.keys()) if (!seenTopics.has(k)) topicCache.delete(k);
  sync(box, [internalToggle, ...cards]);
}

// openTxns lists the transactions not yet complete on topic/partition:
// they hold its LSO back.
function openTxns(topic, partition) {
  return state.txns.filter((x) => /^(Ongoing|Prepare)/.test(x.state) &&
    (x.partitions || []).some((tp) => tp.topic === topic && tp.partition === partition));
}

function renderPartition(topic, p, txns) {
  // The LSO matters where transactions exist: it differs from the HW, or
  // a transaction is open here.
  const showLSO = p.last_stable_offset >= 0 && (p.last_stable_offset !== p.high_watermark || txns.length > 0);
  const base = `/v1/partitions/${encodeURIComponent(topic)}/${p.partition}`;
  const label = `${topic}/${p.partition}`;
  const scale = Math.max(1, ...p.replicas.map((r) => r.log_end_offset));
  const pct = (o) => `${(100 * Math.max(0, o) / scale).toFixed(3)}%`;
  const rows = p.replicas.map((r) => {
    const paused = !!r.paused;
    const who = [`broker ${r.broker}`, r.state];
    if ((p.adding_replicas || []).includes(r.broker)) who.push("adding"); // a reassignment in progress
    if ((p.removing_replicas || []).includes(r.broker)) who.push("removing");
    const k = `${label}-r${r.broker}`;
    return h("div", { class: "replica", "data-broker": r.broker, "data-state": r.state, "data-leo": r.log_end_offset,
      "data-hw": r.high_watermark, "data-start": r.log_start_offset, "data-lso": r.last_stable_offset },
      h("span", { class: "who" }, who.join(" · "), paused ? " · paused" : "", r.in_sync ? "" : h("span", { class: "out" }, " out of ISR")),
      h("div", { class: "track", role: "img",
        "aria-label": `broker ${r.broker}: log ${r.log_start_offset} to ${r.log_end_offset}, HW ${r.high_watermark}` +
          (showLSO ? `, LSO ${r.last_stable_offset}` : "") },
        h("div", { class: "bar-log", style: `left:${pct(r.log_start_offset)};width:${pct(r.log_end_offset - r.log_start_offset)}` }),
        h("div", { class: "bar-hw", style: `left:${pct(r.log_start_offset)};width:${pct(r.high_watermark - r.log_start_offset)}` }),
        // Between the LSO and the HW: committed but undecided, hidden
        // from read_committed consumers.
        showLSO && r.high_watermark > r.last_stable_offset ? h("div", { class: "bar-unstable",
          style: `left:${pct(Math.max(r.log_start_offset, r.last_stable_offset))};width:${pct(r.high_watermark - Math.max(r.log_start_offset, r.last_stable_offset))}` }) : null,
        p.high_watermark >= 0 ? h("div", { class: "hw-line", style: `left:${pct(p.high_watermark)}` }) : null,
        showLSO ? h("div", { class: "lso-line", style: `left:${pct(p.last_stable_offset)}` }) : null),
      h("span", { class: "nums" }, `start ${r.log_start_offset} · LEO ${r.log_end_offset} · HW ${r.high_watermark}`,
        showLSO ? ` · LSO ${r.last_stable_offset}` : ""),
      h("span", { class: "actions" },
        r.state === "leader" ? null : h("button", { "data-action": paused ? "resume" : "pause", "data-key": `${k}-pause`,
          onclick: () => act(`${paused ? "resume" : "pause"} ${label} replica ${r.broker}`, "POST", `${base}/replicas/${r.broker}/${paused ? "resume" : "pause"}`) },
          paused ? "Resume" : "Pause"),
        r.state === "follower" ? h("button", { "data-action": "step", "data-key": `${k}-step`, title: "one fetch by this follower",
          onclick: () => act(`one fetch by ${label} replica ${r.broker}`, "POST", `${base}/replicas/${r.broker}/fetch`) }, "Step") : null,
        h("button", { "data-action": "records", "data-key": `${k}-records`, title: "this replica's own log, record by record",
          onclick: () => showRecords(topic, p.partition, r.broker) }, "Records")));
  });

  const leaderSel = h("select", { name: "leader", "data-key": `${label}-leader`, "aria-label": `new leader of ${label}` },
    h("option", { value: "" }, "Kafka's choice"), p.replicas.map((r) => h("option", { value: r.broker }, `broker ${r.broker}`)));
  const unclean = h("input", { type: "checkbox", name: "unclean", "data-key": `${label}-unclean` });
  const electForm = h("form", { class: "elect", onsubmit: (e) => {
    e.preventDefault();
    const body = { unclean: unclean.checked };
    if (leaderSel.value !== "") body.leader = Number(leaderSel.value);
    act(`election on ${label}`, "POST", `${base}/elect`, body, unclean.checked
      ? `Run an unclean election on ${label}? A replica outside the ISR may lead: acknowledged records it lacks are lost and their offsets reused.` : null);
  } }, leaderSel, h("label", {}, unclean, " unclean"), h("button", { type: "submit", "data-key": `${label}-elect` }, "Elect"),
  h("button", { type: "button", "data-key": `${label}-preferred`, onclick: () => act(`preferred election on ${label}`, "POST", `${base}/elect`, { preferred: true }) }, "Preferred"));

  const boxes = p.replicas.map((r) => h("input", { type: "checkbox", value: r.broker, checked: p.isr.includes(r.broker),
    "data-key": `${label}-isr-${r.broker}`, "aria-label": `broker ${r.broker} in the ISR` }));
  const isrForm = h("form", { class: "isr", onsubmit: (e) => {
    e.preventDefault();
    const isr = boxes.filter((b) => b.checked).map((b) => Number(b.value));
    act(`ISR of ${label}`, "POST", `${base}/isr`, { isr });
  } }, "ISR", p.replicas.map((r, i) => h("label", {}, boxes[i], ` ${r.broker}`)),
  h("button", { type: "submit", "data-key": `${label}-setisr` }, "Set ISR"));

  return h("div", { class: "partition", "data-topic": topic, "data-partition": p.partition, "data-hw": p.high_watermark,
    "data-lso": p.last_stable_offset },
    h("div", { class: "pmeta" },
      h("strong", {}, `partition ${p.partition}`),
      p.leader < 0 ? h("span", { class: "warn" }, "no leader") : h("span", {}, `leader ${p.leader}`),
      h("span", {}, `epoch ${p.leader_epoch}`),
      h("span", {}, `ISR [${p.isr.join(", ")}]`),
      h("span", {}, `HW ${p.high_watermark}`),
      showLSO ? h("span", { class: "lso", title: "last stable offset: read_committed consumers read below it" }, `LSO ${p.last_stable_offset}`) : null,
      txns.map((x) => h("span", { class: "txn-open", "data-txn": x.transactional_id },
        `${x.state === "Ongoing" ? "open" : "ending"} transaction ${x.transactional_id} (${x.state})`))),
    h("div", { class: "replicas" }, rows),
    h("div", { class: "pforms" }, electForm, isrForm));
}

function renderGroups() {
  const box = $("#groups");
  if (state.groups.length === 0) {
    box.replaceChildren(h("p", { class: "empty" }, "No groups."));
    return;
  }
  // KIP-848 groups (type "consumer"), streams groups (KIP-1071) and share
  // groups (KIP-932) have a group epoch, a target assignment epoch and an
  // epoch per member instead of a generation; a streams member shows its
  // process and tasks, a share group its partitions with records in flight.
  const kip848 = (g) => g.type === "consumer" || g.type === "streams" || g.type === "share";
  const typeName = { consumer: "consumer (KIP-848)", streams: "streams (KIP-1071)", share: "share (KIP-932)" };
  const tasks = (t) => ["active", "standby", "warmup"].map((k) => [k, Object.entries((t || {})[k] || {}).sort()
    .map(([s, ps]) => `${s}:${ps.join(",")}`).join(" ")]).filter(([, v]) => v !== "").map(([k, v]) => `${k} ${v}`).join("; ");
  box.replaceChildren(...state.groups.map((g) => h("div", { class: "group", "data-group": g.group, "data-type": g.type, "data-state": g.state },
    h("h3", { class: "group-title" }, [g.group, typeName[g.type] || g.type, g.state,
      kip848(g) ? `group epoch ${g.generation}` : `generation ${g.generation}`,
      kip848(g) && g.assignment_epoch !== undefined ? `assignment epoch ${g.assignment_epoch}` : null,
      g.protocol ? `assignor ${g.protocol}` : null, `coordinator ${g.coordinator}`].filter((x) => x !== null).join(" · ")),
    (g.members || []).length === 0 ? h("p", { class: "empty" }, "No members.") : h("table", {},
      h("tr", {}, h("th", {}, "member"), kip848(g) ? h("th", {}, "epoch") : null, h("th", {}, "client"), h("th", {}, "host"),
        h("th", {}, "subscription"), h("th", {}, "assignment")),
      g.members.map((m) => h("tr", { "data-member": m.member_id }, h("td", {}, m.member_id),
        kip848(g) ? h("td", { class: "num member-epoch" }, m.member_epoch) : null,
        h("td", {}, m.client_id), h("td", {}, m.client_host),
        h("td", {}, m.streams ? `process ${m.streams.process_id}${m.streams.user_endpoint ? " · " + m.streams.user_endpoint : ""}` : (m.subscription || []).join(", ")),
        h("td", { class: "assignment" }, m.streams ? tasks(m.streams.tasks) || "-"
          : Object.entries(m.assignment || {}).sort().map(([t, ps]) => `${t}: ${[...ps].sort((a, b) => a - b).join(",")}`).join("; "))))),
    (g.offsets || []).length === 0 ? null : h("table", {},
      h("tr", {}, h("th", {}, "topic"), h("th", {}, "partition"), h("th", {}, "committed"), h("th", {}, "HW"), h("th", {}, "lag")),
      g.offsets.map((o) => h("tr", {}, h("td", {}, o.topic), h("td", { class: "num" }, o.partition), h("td", { class: "num" }, o.offset),
        h("td", { class: "num" }, o.high_watermark), h("td", { class: "num" }, o.lag)))),
    (g.share_partitions || []).length === 0 ? null : h("table", { class: "share-partitions" },
      h("tr", {}, ["topic", "partition", "leader", "start", "end", "in flight (offset: state ×deliveries)"].map((c) => h("th", {}, c))),
      g.share_partitions.map((sp) => h("tr", { "data-share-partition": `${sp.topic}/${sp.partition}` },
        h("td", {}, sp.topic), h("td", { class: "num" }, sp.partition), h("td", { class: "num" }, sp.leader),
        h("td", { class: "num" }, sp.start_offset), h("td", { class: "num" }, sp.end_offset),
        h("td", { class: "in-flight" }, (sp.in_flight || []).map((r) => `${r.offset}: ${r.state.toLowerCase()} ×${r.delivery_count}`).join(", ") || "-")))))));
}

function renderTransactions() {
  const box = $("#transactions");
  if (state.txns.length === 0) {
    box.replaceChildren(h("p", { class: "empty" }, "No transactional ids."));
    return;
  }
  const since = (ms) => ms < 0 ? "-" : new Date(ms).toLocaleTimeString([], { hour12: false });
  box.replaceChildren(h("table", {},
    h("tr", {}, ["transactional id", "state", "producer id", "epoch", "partitions", "started", "timeout", "coordinator", "version"].map((c) => h("th", {}, c))),
    state.txns.map((x) => h("tr", { "data-txn": x.transactional_id, "data-state": x.state },
      h("td", {}, x.transactional_id), h("td", { class: `txn-state s-${x.state}` }, x.state),
      h("td", { class: "num" }, x.producer_id), h("td", { class: "num" }, x.producer_epoch),
      h("td", {}, (x.partitions || []).map((tp) => `${tp.topic}/${tp.partition}`).join(", ") || "-"),
      h("td", { class: "num" }, since(x.start_timestamp)), h("td", { class: "num" }, `${x.timeout_ms} ms`),
      h("td", { class: "num" }, x.coordinator), h("td", { class: "num" }, x.transaction_version)))));
}

function renderFaults() {
  const box = $("#faults");
  if (state.faults.length === 0) {
    box.replaceChildren(h("p", { class: "empty" }, "No fault rules."));
    return;
  }
  box.replaceChildren(h("table", {},
    h("tr", {}, ["id", "API", "error", "broker", "topic", "partition", "delay", "hits", "remaining", ""].map((c) => h("th", {}, c))),
    state.faults.map((f) => h("tr", { "data-fault": f.id },
      h("td", {}, f.id), h("td", {}, f.api || "any"),
      h("td", {}, f.error || (f.drop_connection ? "drop connection" : "-")),
      h("td", { class: "num" }, f.broker || "any"), h("td", {}, f.topic || "any"),
      h("td", { class: "num" }, f.partition === null || f.partition === undefined ? "any" : f.partition),
      h("td", { class: "num" }, `${f.delay_ms} ms`), h("td", { class: "num hits" }, f.hits),
      h("td", { class: "num" }, f.remaining < 0 ? "∞" : f.remaining),
      h("td", {}, h("button", { "data-key": `fault-${f.id}-rm`, onclick: () => act(`remove fault ${f.id}`, "DELETE", `/v1/faults/${f.id}`) }, "Remove"))))));
}

$("#fault-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  const body = { api: f.get("api"), error: f.get("error"), topic: f.get("topic"),
    broker: Number(f.get("broker") || 0), count: Number(f.get("count") || 0), delay_ms: Number(f.get("delay_ms") || 0),
    drop_connection: f.get("drop_connection") === "on", after_work: f.get("after_work") === "on" };
  if (f.get("partition") !== "") body.partition = Number(f.get("partition"));
  act("add fault rule", "POST", "/v1/faults", body).then((ok) => { if (ok) e.target.reset(); });
});

// Events carry every state change, but not appends that leave the HW
// where it is (a follower lagging in the ISR): a slow poll shows those.
const POLL_MS = 1000;
setInterval(() => { if (!document.hidden) scheduleRefresh(); }, POLL_MS);

// The other scripts load after this one; start once they have.
document.addEventListener("DOMContentLoaded", () => refresh().then(follow));
