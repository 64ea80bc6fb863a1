// The Schema registry panel: subjects (GET /v1/schema-registry), the
// versions of the one picked, and the schema of the version picked with
// its line diff to the version before. It reloads with the rest of the
// page and redraws only when the registry changed; a cluster without a
// registry (404) says so.
"use strict";

const schemas = { json: null, loading: false, st: null, faults: [], subject: null, version: null };

async function loadSchemas() {
  // A cluster gets its registry when it starts or never: once off, the
  // page stops asking.
  if (schemas.loading || schemas.json === "off") return;
  schemas.loading = true;
  try {
    const resp = await fetch("/v1/schema-registry");
    if (resp.status === 404) {
      if (schemas.json !== "off") {
        schemas.json = "off";
        $("#schemas-summary").textContent = "No schema registry in this cluster (Config.SchemaRegistry, --schema-registry).";
        $("#schemas").replaceChildren();
      }
      return;
    }
    const st = await resp.json();
    if (!resp.ok) throw new Error(st.error || `HTTP ${resp.status}`);
    const faults = (await api("GET", "/v1/schema-registry/faults")).faults || [];
    const json = JSON.stringify([st, faults]);
    if (json !== schemas.json) {
      schemas.json = json;
      schemas.st = st;
      schemas.faults = faults;
      renderSchemas();
    }
  } catch (e) {
    setStatus(`cannot load the schema registry: ${e.message}`, true);
  } finally {
    schemas.loading = false;
  }
}

function pickSubject(name) {
  schemas.subject = name;
  const s = schemas.st.subjects.find((x) => x.subject === name);
  schemas.version = s && s.versions.length ? s.versions[s.versions.length - 1].version : null;
  renderSchemas();
}

function pickVersion(v) {
  schemas.version = v;
  renderSchemas();
}

// renderSchemas redraws the panel, keeping keyboard focus on the button
// that had it (by data-key), as render() does for the rest of the page.
function renderSchemas() {
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
  drawSchemas();
  if (focused && !document.activeElement.isConnected || document.activeElement === document.body) {
    const el = focused && document.querySelector(`#schemas [data-key="${CSS.escape(focused)}"]`);
    if (el) el.focus();
  }
}

function drawSchemas() {
  const st = schemas.st;
  $("#schemas-summary").textContent = `${st.url} · compatibility ${st.compatibility} · mode ${st.mode} · ` +
    `${st.subjects.length} subject${st.subjects.length === 1 ? "" : "s"}`;
  const faults = schemaFaults();
  if (st.subjects.length === 0) {
    $("#schemas").replaceChildren(...faults, h("p", { class: "empty" }, "No subjects yet."));
    return;
  }
  const subject = st.subjects.find((s) => s.subject === schemas.subject);
  if (!subject) schemas.subject = schemas.version = null;
  const subjects = h("table", { class: "schema-subjects" },
    h("tr", {}, ["subject", "versions", "latest id", "type", "compatibility", "mode", ""].map((c) => h("th", {}, c))),
    st.subjects.map((s) => {
      const latest = s.versions[s.versions.length - 1];
      const live = s.versions.filter((v) => !v.deleted).length;
      return h("tr", { "data-subject": s.subject, class: [s.subject === schemas.subject ? "picked" : "", s.deleted ? "deleted" : ""].join(" ").trim() || null },
        h("td", {}, h("button", { class: "link", "data-key": `subject-${s.subject}`, onclick: () => pickSubject(s.subject) }, s.subject)),
        h("td", { class: "num" }, live), h("td", { class: "num" }, latest.id), h("td", {}, latest.schema_type),
        h("td", {}, s.compatibility || "-"), h("td", {}, s.mode || "-"), h("td", {}, s.deleted ? "deleted" : ""));
    }));
  if (!subject) {
    $("#schemas").replaceChildren(...faults, subjects, h("p", { class: "legend" }, "Pick a subject to see its versions."));
    return;
  }
  const versions = h("div", { class: "schema-versions", role: "group", "aria-label": `versions of ${subject.subject}` },
    h("span", {}, `${subject.subject}:`),
    subject.versions.map((v) => h("button", { "data-version": v.version, "data-key": `version-${subject.subject}-${v.version}`,
      class: [v.version === schemas.version ? "picked" : "", v.deleted ? "deleted" : ""].join(" ").trim() || null,
      "aria-pressed": v.version === schemas.version ? "true" : "false",
      title: `id ${v.id}${v.deleted ? ", soft-deleted" : ""}`, onclick: () => pickVersion(v.version) }, `v${v.version}`)));
  const i = subject.versions.findIndex((v) => v.version === schemas.version);
  const view = [];
  if (i >= 0) {
    const v = subject.versions[i], prev = i > 0 ? subject.versions[i - 1] : null;
    view.push(h("h3", { class: "schema-head" }, `${subject.subject} version ${v.version} · id ${v.id} · ${v.schema_type}` +
      (v.deleted ? " · soft-deleted" : "") +
      ((v.references || []).length ? ` · references ${v.references.map((r) => `${r.name} → ${r.subject}/${r.version}`).join(", ")}` : "")));
    view.push(h("div", { class: "schema-panes" },
      h("figure", {}, h("figcaption", {}, "schema"), h("pre", { id: "schema-text", class: "schema" }, schemaLines(v.schema).join("\n"))),
      h("figure", {}, h("figcaption", {}, prev ? `diff to version ${prev.version}` : "first version: nothing to diff"),
        prev ? h("pre", { id: "schema-diff", class: "schema diff" },
          lineDiff(schemaLines(prev.schema), schemaLines(v.schema)).map(([op, line]) =>
            h("span", { class: op === "+" ? "add" : op === "-" ? "del" : "same" }, `${op} ${line}\n`))) : null)));
  }
  $("#schemas").replaceChildren(...faults, subjects, versions, ...view);
}

// schemaFaults is the table of the registry's fault rules (none: nothing),
// each with a Remove button.
function schemaFaults() {
  if (schemas.faults.length === 0) return [];
  return [h("table", { class: "schema-faults" },
    h("caption", {}, "Fault rules on the registry's API"),
    h("tr", {}, ["id", "method", "path", "answer", "delay", "hits", "remaining", ""].map((c) => h("th", {}, c))),
    schemas.faults.map((f) => h("tr", { "data-schema-fault": f.id },
      h("td", {}, f.id), h("td", {}, f.method || "any"), h("td", {}, f.path || "any"),
      h("td", {}, f.status ? `${f.status} error_code ${f.error_code}` : "served"),
      h("td", { class: "num" }, `${f.delay_ms} ms`), h("td", { class: "num hits" }, f.hits),
      h("td", { class: "num" }, f.remaining < 0 ? "∞" : f.remaining),
      h("td", {}, h("button", { "data-key": `schema-fault-${f.id}-rm`,
        onclick: () => act(`remove schema registry fault ${f.id}`, "DELETE", `/v1/schema-registry/faults/${f.id}`) }, "Remove")))))];
}

// schemaLines is a schema's text as lines: JSON (Avro, JSON Schema)
// indented the same way for both sides of a diff, Protobuf as written.
function schemaLines(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2).split("\n"); } catch (e) { /* not JSON */ }
  return text.replace(/\n$/, "").split("\n");
}

// lineDiff is the line diff of a to b by longest common subsequence:
// [op, line] with op "+" (only in b), "-" (only in a) or " " (both).
function lineDiff(a, b) {
  const n = a.length, m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push([" ", a[i]]); i++; j++; }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push(["-", a[i++]]);
    else out.push(["+", b[j++]]);
  }
  while (i < n) out.push(["-", a[i++]]);
  while (j < m) out.push(["+", b[j++]]);
  return out;
}

renderHooks.push(loadSchemas);
