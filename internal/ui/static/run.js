// kubesim run --ui: the run's scenarios, their steps and assertions as
// they pass or fail, links to their clusters' pages while those exist,
// and the HTML report once the run is over. /api/run streams the run's
// whole state at each change.
"use strict";

const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function render(st) {
  const box = document.createDocumentFragment();
  for (const sc of st.scenarios) {
    const sec = el("section", "scenario");
    sec.dataset.scenario = sc.name;
    const status = sc.done ? (sc.passed ? "passed" : "failed") : "running";
    sec.dataset.status = status;
    sec.appendChild(el("h2", "", (status === "passed" ? "✓ " : status === "failed" ? "✗ " : "… ") + "Scenario " + sc.name + " (" + sc.file + ")"));
    if (sc.setup) sec.appendChild(el("p", "error", "clusters: " + sc.setup));
    if ((sc.clusters || []).length) {
      const cl = el("p", "clusters");
      cl.appendChild(document.createTextNode("clusters: "));
      for (const c of sc.clusters) {
        if (c.url) {
          const a = el("a", "cluster-link", c.name + " (its page)");
          a.href = c.url; a.target = "_blank"; a.rel = "noopener";
          a.dataset.cluster = c.name;
          cl.appendChild(a);
        } else {
          cl.appendChild(el("span", "sub", c.name + (c.error ? " (no page: " + c.error + ")" : c.gone ? " (gone: the run is over)" : "")));
        }
        cl.appendChild(document.createTextNode(" "));
      }
      sec.appendChild(cl);
    }
    const t = el("table", "steps");
    const hr = el("tr");
    for (const h of ["", "step", "action", "cluster", "time", "detail"]) hr.appendChild(el("th", "", h));
    t.appendChild(hr);
    for (const s of sc.steps) {
      const st = s.running ? "running" : s.failed ? "failed" : "passed";
      const tr = el("tr", "step " + st);
      tr.dataset.step = s.name;
      tr.dataset.status = st;
      tr.append(el("td", "mark", st === "running" ? "…" : st === "failed" ? "✗" : "✓"), el("td", "", s.name), el("td", "", s.action),
        el("td", "", s.cluster || ""), el("td", "", s.running ? "" : s.seconds.toFixed(1) + "s"), el("td", "", s.error || s.detail || ""));
      t.appendChild(tr);
      for (const a of s.assertions || []) {
        const ar = el("tr", "assertion " + (a.passed ? "passed" : "failed"));
        ar.dataset.assertion = a.name;
        ar.dataset.status = a.passed ? "passed" : "failed";
        ar.append(el("td", "mark", a.passed ? "✓" : "✗"), el("td", "", "  " + a.name), el("td", "", "assertion"), el("td"), el("td"),
          el("td", "", a.passed ? (a.actual || "") : "expected " + (a.expected || "") + ", got " + (a.actual || "")));
        t.appendChild(ar);
      }
    }
    sec.appendChild(t);
    box.appendChild(sec);
  }
  if (!st.scenarios.length) box.appendChild(el("p", "empty", "Loading the scenarios…"));
  $("scenarios").replaceChildren(box);
  if (st.done) {
    $("outcome").textContent = "run over: " + st.outcome;
    $("outcome").dataset.done = "true";
    $("report").hidden = !st.report;
    if (st.report) $("report").textContent = "the HTML report (" + st.reportFile + ")";
  }
  document.body.dataset.rendered = "true";
}

const es = new EventSource("/api/run");
es.onopen = () => { $("conn").textContent = "live"; $("conn").className = "conn live"; };
es.onmessage = (e) => render(JSON.parse(e.data));
es.onerror = () => { $("conn").textContent = "reconnecting…"; $("conn").className = "conn down"; };
