// The Security panel: who is connected (per broker, listener and
// principal, from GET /v1/security) and the authorizer's recent denials,
// newest first. It reloads with the rest of the page.
"use strict";

const security = { json: null, loading: false };

async function loadSecurity() {
  if (security.loading) return;
  security.loading = true;
  try {
    const st = await api("GET", "/v1/security");
    const json = JSON.stringify(st);
    if (json !== security.json) {
      security.json = json;
      renderSecurity(st);
    }
  } catch (e) {
    setStatus(`cannot load security: ${e.message}`, true);
  } finally {
    security.loading = false;
  }
}

function renderSecurity(st) {
  $("#security-summary").textContent = [
    st.authorizer ? "authorizer on" : "authorizer off: every request is allowed",
    `ssl.principal.mapping.rules ${st.ssl_principal_mapping_rules}`,
    `${st.denied_total} denied since the start`].join(" · ");
  const principals = st.principals || [];
  $("#principals").replaceChildren(principals.length === 0 ? h("p", { class: "empty" }, "No connections.") : h("table", {},
    h("tr", {}, ["broker", "listener", "protocol", "principal", "connections", "hosts"].map((c) => h("th", {}, c))),
    principals.map((p) => h("tr", { "data-principal": p.principal, "data-broker": p.broker, "data-listener": p.listener },
      h("td", { class: "num" }, p.broker), h("td", {}, p.listener), h("td", {}, p.security_protocol),
      h("td", { class: "principal" }, p.principal), h("td", { class: "num" }, p.connections), h("td", {}, (p.hosts || []).join(", "))))));
  const denials = (st.denials || []).slice().reverse();
  $("#denials").replaceChildren(denials.length === 0 ? h("p", { class: "empty" }, "No denials.") : h("table", {},
    h("tr", {}, ["time", "principal", "host", "operation", "resource", "API", "broker"].map((c) => h("th", {}, c))),
    denials.map((d) => h("tr", { "data-denial": d.seq, "data-principal": d.principal },
      h("td", { class: "num" }, new Date(d.time).toLocaleTimeString([], { hour12: false })),
      h("td", { class: "principal" }, d.principal), h("td", {}, d.host), h("td", {}, d.operation),
      h("td", { class: "resource" }, `${d.resource_type}:${d.pattern_type}:${d.resource_name}`),
      h("td", {}, d.api), h("td", { class: "num" }, d.broker)))));
}

renderHooks.push(loadSecurity);
