// The record browser: one replica's own log (not the leader's), from
// GET /v1/partitions/{topic}/{partition}/replicas/{id}/records: offsets,
// keys, values, headers, timestamps, transaction markers, and which
// records are above the HW (no consumer sees them yet), aborted or in an
// open transaction.
"use strict";

const records = { key: null, offset: null, data: null, json: "", loading: false, last: 0 };

// recordChoices keeps the partition and replica menus in step with the
// cluster, keeping the choice made.
function recordChoices() {
  const psel = $("#records-partition"), rsel = $("#records-replica");
  const parts = [];
  for (const t of state.cluster.topics) {
    if (t.name.startsWith("__") && !state.showInternal) continue;
    for (const p of t.partitions) parts.push({ key: `${t.name}/${p.partition}`, topic: t.name, p });
  }
  const keys = parts.map((x) => x.key);
  if (JSON.stringify(keys) !== psel.dataset.keys) {
    const keep = psel.value;
    psel.replaceChildren(...keys.map((k) => h("option", { value: k }, k)));
    psel.dataset.keys = JSON.stringify(keys);
    if (keys.includes(keep)) psel.value = keep;
  }
  const cur = parts.find((x) => x.key === psel.value);
  const reps = cur ? cur.p.replicas.map((r) => ({ id: r.broker, label: `broker ${r.broker}${r.state === "follower" ? "" : ` (${r.state})`}` })) : [];
  if (JSON.stringify(reps) !== rsel.dataset.reps) {
    const keep = rsel.value;
    rsel.replaceChildren(...reps.map((r) => h("option", { value: r.id }, r.label)));
    rsel.dataset.reps = JSON.stringify(reps);
    if (reps.some((r) => String(r.id) === keep)) rsel.value = keep;
  }
  // What is shown follows the cluster, at most once a second.
  if (records.key && !records.loading && Date.now() - records.last > 900) loadRecords(records.offset, true);
}
renderHooks.push(recordChoices);

// showRecords picks topic/partition and broker's replica and shows its log.
function showRecords(topic, partition, broker) {
  $("#records-partition").value = `${topic}/${partition}`;
  recordChoices();
  $("#records-replica").value = String(broker);
  $("#records-offset").value = "";
  loadRecords(null);
  $("#records-section").scrollIntoView({ block: "start" });
}

function recordMax() {
  const n = Number($("#records-max").value || 50);
  return Math.min(1000, Math.max(1, Number.isFinite(n) ? Math.floor(n) : 50));
}

// loadRecords shows the chosen replica's records from offset (null: its
// log start); quiet reloads keep the status line alone.
async function loadRecords(offset, quiet) {
  const pk = $("#records-partition").value, broker = $("#records-replica").value;
  if (!pk || broker === "") return;
  const i = pk.lastIndexOf("/");
  const topic = pk.slice(0, i), partition = pk.slice(i + 1);
  const q = new URLSearchParams({ max: String(recordMax()) });
  if (offset !== null && offset !== undefined) q.set("offset", String(offset));
  records.loading = true;
  try {
    const data = await api("GET", `/v1/partitions/${encodeURIComponent(topic)}/${partition}/replicas/${broker}/records?${q}`);
    records.key = `${pk}@${broker}`;
    records.offset = offset;
    records.data = data;
    const json = JSON.stringify(data);
    if (json !== records.json) { records.json = json; renderRecords(data); }
  } catch (e) {
    if (!quiet) setStatus(`records of ${pk} on broker ${broker}: ${e.message}`, true);
  } finally {
    records.loading = false;
    records.last = Date.now();
  }
}

// bytesCell shows a key, value or header value: text, base64 marked, or null.
function bytesCell(v, enc) {
  if (v === null || v === undefined) return h("span", { class: "null" }, "null");
  if (enc === "base64") return h("span", { class: "b64", title: "not UTF-8: base64" }, `base64:${v}`);
  return v;
}

function recordStatus(r) {
  const s = [];
  if (r.control) s.push(`${r.control} marker`);
  if (r.aborted) s.push("aborted");
  if (r.open) s.push("open transaction");
  if (r.above_hw) s.push("above HW");
  return s;
}

function renderRecords(d) {
  const box = $("#records");
  const head = h("p", { class: "records-head", "data-topic": d.topic, "data-partition": d.partition, "data-broker": d.broker },
    `${d.topic}/${d.partition} on broker ${d.broker}: log start ${d.log_start_offset}, LEO ${d.log_end_offset}, ` +
    `its HW ${d.high_watermark}, LSO ${d.last_stable_offset}; the partition's HW ${d.partition_high_watermark}`);
  if (d.records.length === 0) {
    box.replaceChildren(head, h("p", { class: "empty" }, "No records from there."));
    return;
  }
  const ms = (t) => { const x = new Date(t); return x.toLocaleTimeString([], { hour12: false }) + "." + String(x.getMilliseconds()).padStart(3, "0"); };
  box.replaceChildren(head, h("table", { class: "records" },
    h("tr", {}, ["offset", "time", "key", "value", "headers", "producer · epoch · seq", "leader epoch", ""].map((c) => h("th", {}, c))),
    d.records.map((r) => {
      const cls = [r.control ? "marker" : "", r.aborted ? "aborted" : "", r.open ? "open" : "", r.above_hw ? "above-hw" : ""].filter(Boolean).join(" ");
      return h("tr", { class: cls || null, "data-offset": r.offset, "data-control": r.control || null,
        "data-aborted": r.aborted || null, "data-above-hw": r.above_hw || null, "data-open": r.open || null },
        h("td", { class: "num" }, r.offset),
        h("td", { class: "num", title: r.log_append_time ? "LogAppendTime" : "CreateTime" }, ms(r.timestamp)),
        h("td", { class: "rkey" }, r.control ? h("span", { class: "null" }, "control") : bytesCell(r.key, r.key_encoding)),
        h("td", { class: "rvalue" }, r.control ? `${r.control} (coordinator epoch ${r.coordinator_epoch || 0})` : bytesCell(r.value, r.value_encoding)),
        h("td", { class: "rheaders" }, (r.headers || []).flatMap((x, i) => [i ? ", " : "", `${x.key}=`, bytesCell(x.value, x.value_encoding)])),
        h("td", { class: "num" }, r.producer_id < 0 ? "-" : `${r.producer_id} · ${r.producer_epoch} · ${r.sequence < 0 ? "-" : r.sequence}`),
        h("td", { class: "num" }, r.leader_epoch),
        h("td", { class: "status" }, recordStatus(r).join(", ")));
    })));
}

$("#records-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const v = $("#records-offset").value;
  loadRecords(v === "" ? null : Number(v));
});
$("#records-partition").addEventListener("change", () => { recordChoices(); loadRecords(null); });
$("#records-replica").addEventListener("change", () => loadRecords(null));
$("#records-prev").addEventListener("click", () => {
  const d = records.data;
  if (!d) return;
  const from = d.records.length ? d.records[0].offset : d.next_offset;
  loadRecords(Math.max(d.log_start_offset, from - recordMax()));
});
$("#records-next").addEventListener("click", () => { if (records.data) loadRecords(records.data.next_offset); });
$("#records-tail").addEventListener("click", () => {
  const d = records.data;
  if (d) loadRecords(Math.max(d.log_start_offset, d.log_end_offset - recordMax()));
  else loadRecords(null);
});
