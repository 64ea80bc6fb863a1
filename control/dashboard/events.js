// The events panel: the newest events, then every new one as it happens.
// Filtering is the server's (not=hw_advanced, internal=false, type=), so a
// busy partition's hw_advanced never crowds out a crash; older events
// load on demand (GET /v1/events?before=SEQ&limit=N). The text filter
// only hides rows already loaded.
"use strict";

const EVENT_TYPES = [
  "broker_started", "broker_stopped", "broker_fenced", "broker_isolated", "broker_healed",
  "leader_elected", "partition_leaderless", "isr_shrunk", "isr_expanded", "hw_advanced",
  "log_truncated", "records_lost", "log_start_moved", "log_cleaned", "producer_expired",
  "fault_added", "fault_hit", "fault_expired", "fault_removed",
  "topic_created", "topic_deleted", "topic_config_changed", "group_config_changed",
  "partitions_created", "reassignment_started", "reassignment_completed", "reassignment_cancelled",
  "acl_created", "acl_deleted", "quota_changed", "client_throttled",
  "group_rebalance_started", "group_rebalance_completed", "group_member_joined", "group_member_left", "group_member_expired",
  "group_member_fenced", "group_upgraded", "group_downgraded", "offsets_expired", "share_records_released", "share_records_archived",
  "lso_advanced", "replica_paused", "replica_resumed",
  "txn_state_changed", "txn_partitions_added", "txn_epoch_bumped", "txn_timed_out", "txn_marker_written", "txn_expired",
  "share_state_initialized", "share_state_deleted", "share_coordinator_loaded",
  "client_authenticated", "client_reauthenticated", "authentication_failed", "sasl_user_changed", "delegation_token_changed", "jwks_refreshed", "authorization_denied",
  "chaos_started", "chaos_action", "chaos_anomaly", "chaos_stopped",
  "schema_registered", "schema_deleted", "schema_incompatible", "schema_config_changed",
];

// EVENT_PAGE is how many events a load asks for; EVENT_KEEP bounds the
// list: past it the oldest rows go (and "Load older" brings them back).
const EVENT_PAGE = 200;
const EVENT_KEEP = 2000;

const events = { es: null, lastSeq: 0, more: false, gen: 0 };

// eventFilter is the server-side filter of what the panel shows.
function eventFilter() {
  const q = new URLSearchParams();
  const only = $("#event-type").value;
  if (only) q.set("type", only);
  else if (!$("#show-hw").checked) q.set("not", "hw_advanced,lso_advanced");
  if (!state.showInternal) q.set("internal", "false");
  return q;
}

function eventKind(t) {
  if (t === "records_lost" || t === "log_truncated" || t === "partition_leaderless") return "bad";
  if (t.startsWith("broker_")) return "broker";
  if (t.startsWith("isr_") || t.startsWith("replica_") || t === "log_start_moved") return "isr";
  if (t.startsWith("leader_")) return "leader";
  if (t.startsWith("fault_")) return "fault";
  if (t.startsWith("group_") || t === "offsets_expired" || t.startsWith("share_")) return "group";
  if (t.startsWith("txn_") || t === "lso_advanced") return "txn";
  if (t === "authorization_denied" || t === "authentication_failed") return "fault";
  if (t === "schema_incompatible") return "bad";
  if (t.startsWith("schema_")) return "schema";
  return "other";
}

function eventSummary(e) {
  const parts = [];
  if (e.topic) parts.push(e.partition !== undefined ? `${e.topic}/${e.partition}` : e.topic);
  if (e.group) parts.push(`group ${e.group}`);
  if (e.member) parts.push(`member ${e.member}`);
  if (e.transactional_id) parts.push(`txn ${e.transactional_id} producer ${e.producer_id} epoch ${e.producer_epoch}`);
  if (e.previous_state) parts.push(`${e.previous_state} → ${e.state}`);
  else if (e.state) parts.push(e.state);
  if (e.partitions) parts.push(e.partitions.map((tp) => `${tp.topic}/${tp.partition}`).join(" "));
  if (e.type.startsWith("schema_")) {
    parts.push(`subject ${e.subject || "(global)"}`);
    if (e.version !== undefined) parts.push(`version ${e.version}`);
    if (e.schema_id !== undefined) parts.push(`id ${e.schema_id}`);
    if (e.schema_type) parts.push(e.schema_type);
    if (e.type === "schema_deleted") parts.push(e.permanent ? "permanent" : "soft");
    if (e.messages) parts.push(e.messages.join("; "));
    if (e.configs) parts.push(Object.entries(e.configs).map(([k, v]) => `${k}=${v || "(deleted)"}`).join(" "));
  }
  switch (e.type) {
    case "leader_elected": parts.push(`leader ${e.leader}${e.old_leader !== undefined ? ` (was ${e.old_leader})` : ""} epoch ${e.epoch}${e.unclean ? " UNCLEAN" : ""}`); break;
    case "hw_advanced": parts.push(`HW ${e.from} → ${e.to}`); break;
    case "lso_advanced": parts.push(`LSO ${e.from} → ${e.to}`); break;
    case "log_start_moved": parts.push(`replica ${e.broker}: log start ${e.from} → ${e.to}`); break;
    case "log_truncated": parts.push(`replica ${e.broker}: LEO ${e.from} → ${e.to}`); break;
    case "records_lost": parts.push(`offsets ${e.from}–${e.to - 1} LOST (leader ${e.broker})`); break;
    case "authorization_denied": parts.push(`${e.principal} from ${e.host}: ${e.operation} on ${e.resource_type} ${e.resource_name} denied in ${e.api} (broker ${e.broker})`); break;
    default: if (e.broker !== undefined) parts.push(`broker ${e.broker}`);
  }
  if (e.isr) parts.push(`ISR [${e.isr.join(",")}]`);
  if (e.mode) parts.push(e.mode);
  if (e.fault) parts.push(`fault ${e.fault}`);
  if (e.reason) parts.push(`(${e.reason})`);
  if (e.detail) parts.push(e.detail);
  return parts.join(" ");
}

function eventRow(e) {
  const t = new Date(e.time);
  const time = t.toLocaleTimeString([], { hour12: false }) + "." + String(t.getMilliseconds()).padStart(3, "0");
  const li = h("li", { class: `k-${eventKind(e.type)}`, "data-type": e.type, "data-seq": e.seq, "data-topic": e.topic },
    h("span", { class: "t" }, time), h("span", { class: "ty" }, e.type), eventSummary(e));
  li.hidden = !textMatches(li);
  return li;
}

function textMatches(li) {
  const f = $("#event-filter").value.trim().toLowerCase();
  return f === "" || li.textContent.toLowerCase().includes(f);
}

// addEvent puts a new event on top.
function addEvent(e) {
  if (e.seq <= events.lastSeq) return;
  events.lastSeq = e.seq;
  const list = $("#events");
  list.prepend(eventRow(e));
  if (list.children.length > EVENT_KEEP) {
    while (list.children.length > EVENT_KEEP) list.lastChild.remove();
    events.more = true;
    showOlder();
  }
}

function showOlder() {
  const n = $("#events").children.length;
  $("#events-older").hidden = !events.more;
  $("#events-count").textContent = `${n} event${n === 1 ? "" : "s"} shown`;
}

// loadOlder appends the page of events before the oldest shown.
async function loadOlder() {
  const list = $("#events");
  const oldest = list.lastElementChild ? Number(list.lastElementChild.dataset.seq) : events.lastSeq + 1;
  const q = eventFilter();
  q.set("before", String(oldest));
  q.set("limit", String(EVENT_PAGE));
  const gen = events.gen;
  try {
    const page = await api("GET", `/v1/events?${q}`);
    if (gen !== events.gen) return; // the filter changed meanwhile
    for (const e of page.events.slice().reverse()) list.append(eventRow(e));
    events.more = !!page.more;
  } catch (e) {
    setStatus(`cannot load older events: ${e.message}`, true);
  }
  showOlder();
}

function refilter() {
  for (const li of $("#events").children) li.hidden = !textMatches(li);
}

// follow loads the newest events that pass the filter, then streams the
// rest; refollow starts over when the filter changes.
async function follow() {
  const gen = ++events.gen;
  if (events.es) { events.es.close(); events.es = null; }
  const q = eventFilter();
  q.set("limit", String(EVENT_PAGE));
  $("#events").replaceChildren();
  events.lastSeq = 0;
  events.more = false;
  try {
    const past = await api("GET", `/v1/events?${q}`);
    if (gen !== events.gen) return;
    for (const e of past.events) addEvent(e);
    events.more = !!past.more;
    events.lastSeq = Math.max(events.lastSeq, past.last_seq);
  } catch (e) {
    setStatus(`cannot load events: ${e.message}`, true);
  }
  showOlder();
  q.delete("limit");
  q.set("since", String(events.lastSeq));
  const es = new EventSource(`/v1/events/stream?${q}`);
  events.es = es;
  const live = $("#live");
  es.onopen = () => { live.textContent = "live"; live.classList.add("on"); };
  es.onerror = () => { live.textContent = "reconnecting…"; live.classList.remove("on"); };
  for (const t of EVENT_TYPES) {
    es.addEventListener(t, (m) => {
      if (gen !== events.gen) return;
      addEvent(JSON.parse(m.data));
      showOlder();
      scheduleRefresh();
    });
  }
}

function refollow() { follow(); }

$("#event-type").append(...[...EVENT_TYPES].sort().map((t) => h("option", { value: t }, t)));
$("#event-filter").addEventListener("input", refilter);
$("#show-hw").addEventListener("change", refollow);
$("#event-type").addEventListener("change", refollow);
$("#events-older").addEventListener("click", loadOlder);
