// kubesim ui: the cluster map, its Pending pods, and a pod's explanation.
// State comes from /api/watch (server-sent events): a snapshot, then
// batches of changed nodes and pods. Only the cards that changed are
// drawn again.
"use strict";

const S = {
  nodes: new Map(),    // name → node
  pods: new Map(),     // ns/name → pod
  byNode: new Map(),   // node name → Set of pod keys
  groupBy: "topology.kubernetes.io/zone",
  dirtyNodes: new Set(),
  layoutDirty: true,
  pendingDirty: true,
  scheduled: false,
  cards: new Map(),    // node name → its card element
  maxChips: 120,
  events: [],          // oldest first, the newest 2000
  timelineDirty: true,
  off: new Set(),      // timeline categories filtered out
  info: { readOnly: true },
  slowest: {},
  lastRender: 0,
  owners: new Map(),   // namespace/Kind/name → its pods, for the legend
  lastTimeline: 0,
};

function countOwner(p, by) {
  const key = p.namespace + "/" + p.owner, n = (S.owners.get(key) || 0) + by;
  if (n > 0) S.owners.set(key, n); else S.owners.delete(key);
}

const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function podKey(p) { return p.namespace + "/" + p.name; }

// An owner's colour: one of 20, by a hash of its name, so it stays put.
function colour(owner) {
  let h = 0;
  for (let i = 0; i < owner.length; i++) h = (h * 31 + owner.charCodeAt(i)) | 0;
  return "c" + (Math.abs(h) % 20);
}

// The first of these labels that a node has groups the map, else none.
function defaultGroup(nodes) {
  for (const k of ["topology.kubernetes.io/zone", "karpenter.sh/nodepool", "kubesim.io/node-group"]) {
    if (nodes.some((n) => n.labels && n.labels[k] !== undefined)) return k;
  }
  return "";
}

function groupOf(n) {
  if (S.groupBy === "") return "all nodes";
  const v = n.labels && n.labels[S.groupBy];
  return v === undefined ? "(no " + S.groupBy + ")" : v;
}

function place(key, node) {
  if (!node) return;
  let set = S.byNode.get(node);
  if (!set) S.byNode.set(node, (set = new Set()));
  set.add(key);
  S.dirtyNodes.add(node);
}
function unplace(key, node) {
  if (!node) return;
  const set = S.byNode.get(node);
  if (set) set.delete(key);
  S.dirtyNodes.add(node);
}

function apply(d) {
  if (d.snapshot) {
    S.nodes.clear(); S.pods.clear(); S.byNode.clear(); S.owners.clear();
    S.layoutDirty = true;
    if (!S.chosenGroup) S.groupBy = defaultGroup(d.nodes || []);
  }
  for (const n of d.nodes || []) {
    const old = S.nodes.get(n.name);
    if (!old || groupOf(old) !== groupOf(n)) S.layoutDirty = true;
    S.nodes.set(n.name, n);
    S.dirtyNodes.add(n.name);
  }
  for (const name of d.nodesGone || []) { S.nodes.delete(name); S.layoutDirty = true; }
  for (const p of d.pods || []) {
    const key = podKey(p), old = S.pods.get(key);
    if (old && old.node !== p.node) unplace(key, old.node);
    if (old && !old.node !== !p.node) S.pendingDirty = true;
    if (!p.node || (old && !old.node)) S.pendingDirty = true;
    if (old) countOwner(old, -1);
    countOwner(p, 1);
    S.pods.set(key, p);
    place(key, p.node);
  }
  if (d.snapshot) S.events = [];
  if (d.events && d.events.length) {
    for (const ev of d.events) ev.t = Date.parse(ev.time);
    S.events.push(...d.events);
    if (S.events.length > 2000) S.events.splice(0, S.events.length - 2000);
    S.timelineDirty = true;
  }
  for (const key of d.podsGone || []) {
    const old = S.pods.get(key);
    if (!old) continue;
    countOwner(old, -1);
    S.pods.delete(key);
    if (old.node) unplace(key, old.node); else S.pendingDirty = true;
  }
  schedule();
}

// schedule draws the page at the next frame, or, on a big cluster, no
// sooner than half a second after the last drawing: a burst of changes is
// drawn a few times, and the page stays free for the user in between.
function schedule() {
  if (S.scheduled) return;
  S.scheduled = true;
  const wait = S.pods.size > 2000 ? Math.max(0, S.lastRender + 500 - performance.now()) : 0;
  setTimeout(() => requestAnimationFrame(render), wait);
}

// timed runs f, keeping the longest it took under name (S.slowest: the
// benchmark reads it).
function timed(name, f) {
  const t = performance.now();
  f();
  S.slowest[name] = Math.max(S.slowest[name] || 0, Math.round(performance.now() - t));
}

function render() {
  S.scheduled = false;
  S.lastRender = performance.now();
  let pending = 0;
  for (const p of S.pods.values()) if (!p.node) pending++;
  $("count-nodes").textContent = S.nodes.size;
  $("count-pods").textContent = S.pods.size;
  $("count-pending").textContent = pending;
  $("pending-count-side").textContent = "(" + pending + ")";
  if (S.layoutDirty) {
    timed("map", renderMap);
    // When the map was first drawn, since the page began to load.
    if (S.nodes.size && !document.body.dataset.firstMapMs) document.body.dataset.firstMapMs = Math.round(performance.now());
    renderGroupChoices();
  } else {
    timed("cards", () => {
      for (const name of S.dirtyNodes) {
        const card = S.cards.get(name), n = S.nodes.get(name);
        if (card && n) fillCard(card, n);
      }
    });
  }
  S.dirtyNodes.clear();
  if (S.pendingDirty) timed("pending", renderPending);
  S.pendingDirty = false;
  // On a big cluster the timeline is drawn every 2 seconds at most.
  if (S.timelineDirty && (S.pods.size <= 2000 || performance.now() - S.lastTimeline > 2000)) {
    timed("timeline", renderTimeline);
    S.timelineDirty = false;
    S.lastTimeline = performance.now();
  } else if (S.timelineDirty) {
    schedule();
  }
  timed("legend", renderLegend);
  document.body.dataset.rendered = "true";
}

function renderMap() {
  S.layoutDirty = false;
  const groups = new Map();
  for (const n of S.nodes.values()) {
    const g = groupOf(n);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(n);
  }
  const map = $("map");
  const frag = document.createDocumentFragment();
  S.cards.clear();
  for (const g of [...groups.keys()].sort()) {
    const box = el("div", "group-box");
    const nodes = groups.get(g).sort((a, b) => a.name.localeCompare(b.name));
    box.appendChild(el("h3", "", g + " · " + nodes.length + (nodes.length === 1 ? " node" : " nodes")));
    const list = el("div", "nodes");
    for (const n of nodes) {
      const card = el("div", "node");
      card.dataset.node = n.name;
      fillCard(card, n);
      S.cards.set(n.name, card);
      list.appendChild(card);
    }
    box.appendChild(list);
    frag.appendChild(box);
  }
  if (S.nodes.size === 0) frag.appendChild(el("p", "empty", "No nodes."));
  map.replaceChildren(frag);
}

function fillCard(card, n) {
  const keys = S.byNode.get(n.name) || new Set();
  let cpu = 0, mem = 0;
  for (const k of keys) { const p = S.pods.get(k); if (p) { cpu += p.cpu; mem += p.memory; } }
  const notReady = n.ready !== "True";
  card.className = "node" + (notReady ? " notready" : "") + (n.unschedulable ? " cordoned" : "");
  card.dataset.ready = n.ready;
  card.dataset.pods = keys.size;
  const head = el("div", "nh");
  head.appendChild(el("span", "nn", n.name)).title = n.name;
  const badges = el("div", "badges");
  if (notReady) badges.appendChild(el("span", "badge bad", n.ready === "False" ? "NotReady" : "Unknown"));
  if (n.unschedulable) badges.appendChild(el("span", "badge warn", "cordoned"));
  if (n.devices) badges.appendChild(el("span", "badge dev", "devices " + (n.devicesUsed || 0) + "/" + n.devices)).title = "DRA devices allocated to claims / published by the node's ResourceSlices";
  if (n.taints && n.taints.length) badges.appendChild(el("span", "badge", n.taints.length + " taint" + (n.taints.length > 1 ? "s" : ""))).title = n.taints.join("\n");
  const usage = el("div", "nh");
  usage.appendChild(el("span", "", keys.size + "/" + n.pods + " pods"));
  usage.appendChild(el("span", "", fmtCPU(cpu) + "/" + fmtCPU(n.cpu) + " CPU"));
  const cpuBar = bar("cpu", cpu, n.cpu, "CPU requested " + fmtCPU(cpu) + " of " + fmtCPU(n.cpu)), memBar = bar("mem", mem, n.memory, "memory requested " + fmtBytes(mem) + " of " + fmtBytes(n.memory));
  // Usage, when the metrics API has it: a mark on each bar.
  if (n.usageCPU >= 0) useMark(cpuBar, n.usageCPU / n.cpu, "CPU used " + fmtCPU(n.usageCPU));
  if (n.usageMemory >= 0) useMark(memBar, n.usageMemory / n.memory, "memory used " + fmtBytes(n.usageMemory));
  card.replaceChildren(head, ...(badges.childElementCount ? [badges] : []), usage, cpuBar, memBar, chips(keys));
}

function bar(kind, used, total, title) {
  const b = el("div", "bar " + kind), i = el("i");
  const f = total > 0 ? Math.min(1, used / total) : 0;
  if (f >= 0.999) b.classList.add("full");
  i.style.width = (f * 100).toFixed(1) + "%";
  b.title = title;
  b.appendChild(i);
  return b;
}

function useMark(b, f, title) {
  const m = el("b", "use");
  m.style.left = (Math.min(1, f) * 100).toFixed(1) + "%";
  b.title += " · " + title;
  b.appendChild(m);
}

function chips(keys) {
  const box = el("div", "chips");
  let shown = 0;
  for (const k of keys) {
    if (shown === S.maxChips) { box.appendChild(el("span", "more", "+" + (keys.size - shown))); break; }
    const p = S.pods.get(k);
    if (!p) continue;
    const c = el("span", "chip " + colour(p.owner) + (p.phase === "Pending" ? " pending" : ""));
    c.title = k + "\n" + p.owner + " · " + p.phase;
    c.dataset.pod = k;
    box.appendChild(c);
    shown++;
  }
  return box;
}

function renderPending() {
  const list = [];
  for (const p of S.pods.values()) if (!p.node) list.push(p);
  list.sort((a, b) => podKey(a).localeCompare(podKey(b)));
  const box = $("pending");
  const frag = document.createDocumentFragment();
  for (const p of list.slice(0, 300)) {
    const item = el("div", "pending-item");
    item.dataset.pod = podKey(p);
    const name = el("div", "pn");
    name.appendChild(el("span", "chip " + colour(p.owner)));
    name.appendChild(el("span", "", podKey(p)));
    item.appendChild(name);
    item.appendChild(el("div", "pr", p.reason || "not yet tried by the scheduler"));
    item.addEventListener("click", () => openPod(p.namespace, p.name));
    frag.appendChild(item);
  }
  if (list.length > 300) frag.appendChild(el("p", "empty", "… and " + (list.length - 300) + " more"));
  if (list.length === 0) frag.appendChild(el("p", "empty", "None: every pod is bound."));
  box.replaceChildren(frag);
}

function renderLegend() {
  const count = S.owners;
  const top = [...count.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 16);
  const frag = document.createDocumentFragment();
  for (const [key, n] of top) {
    const [ns, kind, name] = key.split("/");
    const s = el("span", "owner");
    s.dataset.owner = key;
    s.appendChild(el("span", "chip " + colour(kind + "/" + name)));
    s.appendChild(document.createTextNode((ns === "default" ? "" : ns + "/") + kind + "/" + name + " (" + n + ")"));
    s.addEventListener("click", () => openOwner(ns, kind, name));
    frag.appendChild(s);
  }
  if (count.size > top.length) frag.appendChild(el("span", "more", "+" + (count.size - top.length) + " more owners"));
  const sig = JSON.stringify(top) + count.size;
  if (sig === S.legendSig) return;
  S.legendSig = sig;
  $("legend").replaceChildren(frag);
}

function renderGroupChoices() {
  const sel = $("group-by");
  const keys = new Set(["topology.kubernetes.io/zone", "kubesim.io/node-group", "karpenter.sh/nodepool", "node.kubernetes.io/instance-type"]);
  for (const n of S.nodes.values()) for (const k in n.labels || {}) if (keys.size < 60) keys.add(k);
  const want = ["", ...[...keys].sort()];
  if (sel.options.length === want.length) { sel.value = S.groupBy; return; }
  sel.replaceChildren(...want.map((k) => { const o = el("option", "", k === "" ? "(nothing)" : k); o.value = k; return o; }));
  sel.value = S.groupBy;
}

function fmtCPU(m) { return m >= 1000 ? (m / 1000).toFixed(m % 1000 ? 1 : 0) : m + "m"; }
function fmtBytes(b) {
  const u = ["B", "Ki", "Mi", "Gi", "Ti"];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return b.toFixed(b >= 10 || i === 0 ? 0 : 1) + u[i];
}

// The drawer.
function drawer(...children) {
  $("drawer-body").replaceChildren(...children);
  $("drawer").hidden = false;
}
$("drawer-close").addEventListener("click", () => { $("drawer").hidden = true; });
document.addEventListener("keydown", (e) => { if (e.key === "Escape") $("drawer").hidden = true; });

async function getJSON(url) {
  const r = await fetch(url, { credentials: "same-origin" });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

async function openPod(ns, name) {
  drawer(el("h2", "", ns + "/" + name), el("p", "sub", "asking the scheduler…"));
  $("drawer").dataset.pod = ns + "/" + name;
  let x, pod;
  const more = getJSON("/api/pod/" + encodeURIComponent(ns) + "/" + encodeURIComponent(name)).catch((e) => ({ error: e.message }));
  try {
    x = await getJSON("/api/explain/" + encodeURIComponent(ns) + "/" + encodeURIComponent(name));
  } catch (e) {
    x = { error: e.message };
  }
  pod = await more;
  const parts = [el("h2", "", ns + "/" + name)];
  if (x.error) {
    parts.push(el("p", "error", x.error));
    drawer(...parts, ...podDetails(pod));
    return;
  }
  const when = x.attempted ? " · attempted " + new Date(x.attempted).toLocaleString() : "";
  parts.push(el("p", "sub", x.result + (x.node ? " on " + x.node : "") + (x.profile ? " · profile " + x.profile : "") + when));
  if (x.message) parts.push(el("p", "", x.message));
  if (x.decided) parts.push(el("p", "decided", x.decided));
  if (x.nodeHint) parts.push(el("p", "sub", x.nodeHint + " was tried first, as a nominated or batch-hinted node"));
  if (x.preFilter) parts.push(el("p", "", "PreFilter: " + (x.preFilter.plugins || []).join(", ") + " — " + (x.preFilter.reasons || []).join("; ")));
  if (x.karpenter) {
    parts.push(el("h3", "", "Karpenter"));
    const k = x.karpenter;
    if (k.event) parts.push(el("p", "", k.event.reason + ": " + k.event.message));
    if (k.nodeClaim) parts.push(el("p", "", "NodeClaim " + k.nodeClaim.name + (k.nodeClaim.nodePool ? " of NodePool " + k.nodeClaim.nodePool : "") + (k.nodeClaim.instanceType ? " · " + k.nodeClaim.instanceType : "")));
    if (k.note) parts.push(el("p", "sub", k.note));
  }
  const nodes = x.nodes || [];
  if (nodes.length) {
    const plugins = [];
    for (const n of nodes) for (const s of n.scores || []) if (!plugins.includes(s.plugin)) plugins.push(s.plugin);
    parts.push(el("h3", "", "Every node, as the scheduler judged it (" + nodes.length + ")"));
    const t = el("table", "explain");
    const hr = el("tr");
    for (const h of ["node", "filter", "reason", "total", ...plugins]) hr.appendChild(el("th", "", h));
    t.appendChild(hr);
    for (const n of nodes.slice(0, 500)) {
      const tr = el("tr", n.name === x.node ? "chosen" : "");
      tr.dataset.node = n.name;
      tr.dataset.filter = n.filter;
      const reason = n.plugin ? n.plugin + ": " + (n.reasons || []).join("; ") : "";
      tr.dataset.reason = reason;
      tr.appendChild(el("td", "", n.name + (n.name === x.node ? " ★" : "")));
      tr.appendChild(el("td", n.filter, n.filter));
      tr.appendChild(el("td", "", reason));
      tr.appendChild(el("td", "", n.total === undefined ? "" : String(n.total)));
      for (const pl of plugins) {
        const s = (n.scores || []).find((s) => s.plugin === pl);
        tr.appendChild(el("td", "", s ? s.weighted + " (" + s.normalized + ")" : ""));
      }
      t.appendChild(tr);
    }
    parts.push(t);
    if (nodes.length > 500) parts.push(el("p", "empty", "first 500 of " + nodes.length + " nodes: kubesim explain pod " + name + " --all lists them all"));
  }
  drawer(...parts, ...podDetails(pod));
}

// podDetails are a pod's conditions, events and YAML.
function podDetails(pod) {
  if (!pod || pod.error) return [el("p", "error", (pod && pod.error) || "")];
  const parts = [el("h3", "", "Conditions")];
  const ct = el("table", "conditions");
  ct.appendChild(row("th", ["type", "status", "reason", "message"]));
  for (const c of pod.conditions || []) ct.appendChild(row("td", [c.type, c.status, c.reason || "", c.message || ""]));
  parts.push(ct, el("h3", "", "Events (" + (pod.events || []).length + ")"));
  const et = el("table", "events");
  et.appendChild(row("th", ["time", "type", "reason", "from", "message"]));
  for (const ev of pod.events || []) et.appendChild(row("td", [fmtTime(Date.parse(ev.time)), ev.type, ev.reason, ev.source || "", ev.message]));
  parts.push(et, el("h3", "", "YAML"), el("pre", "yaml", pod.yaml));
  return parts;
}

async function openNode(name, result) {
  drawer(el("h2", "", name), ...(result ? [result] : []));
  $("drawer").dataset.node = name;
  let n, x;
  const why = getJSON("/api/explain-node/" + encodeURIComponent(name)).catch(() => null);
  try { n = await getJSON("/api/node/" + encodeURIComponent(name)); } catch (e) { drawer(el("h2", "", name), el("p", "error", e.message)); return; }
  x = await why;
  const parts = [el("h2", "", name)];
  parts.push(el("p", "sub", [n.spec.unschedulable ? "cordoned" : "", n.spec.providerID || ""].filter(Boolean).join(" · ")));
  if (!S.info.readOnly) {
    const stopped = (n.metadata.labels || {})["kubesim.io/node-stopped"] === "true";
    parts.push(actionsBar([
      n.spec.unschedulable ? ["Uncordon", { action: "uncordon", node: name }, "Uncordon " + name + "?"]
        : ["Cordon", { action: "cordon", node: name }, "Cordon " + name + "? New pods will not be scheduled on it."],
      ["Drain", { action: "drain", node: name }, "Drain " + name + "? It is cordoned and its pods evicted, as kubectl drain --ignore-daemonsets --delete-emptydir-data does; a PodDisruptionBudget may refuse.", "danger"],
      stopped ? ["Start kubelet", { action: "start", node: name }, "Start the kubelet of " + name + " again (kubesim node start)?"]
        : ["Stop kubelet", { action: "stop", node: name }, "Stop the kubelet of " + name + " (kubesim node stop)? It turns NotReady and its pods are evicted.", "danger"],
    ], (res) => openNode(name, res)));
  }
  if (result) parts.push(result);
  parts.push(el("h3", "", "Conditions"));
  const ct = el("table");
  ct.appendChild(row("th", ["type", "status", "reason", "message"]));
  for (const c of n.status.conditions || []) ct.appendChild(row("td", [c.type, c.status, c.reason || "", c.message || ""]));
  parts.push(ct);
  const m = S.nodes.get(name);
  if (m && m.devices) parts.push(el("p", "", "DRA devices: " + (m.devicesUsed || 0) + " of " + m.devices + " allocated to claims"));
  parts.push(el("h3", "", "Taints"));
  const taints = (n.spec.taints || []).map((t) => t.key + (t.value ? "=" + t.value : "") + ":" + t.effect);
  parts.push(el("p", taints.length ? "" : "empty", taints.join(", ") || "none"));
  if (x && x.explanation && x.explanation.managedBy) {
    parts.push(el("h3", "", "Karpenter (kubesim explain node)"));
    parts.push(el("pre", "karpenter", x.text));
  }
  const keys = [...(S.byNode.get(name) || [])].sort();
  parts.push(el("h3", "", "Pods (" + keys.length + ")"));
  const pt = el("table");
  pt.appendChild(row("th", ["pod", "owner", "phase", "CPU", "memory"]));
  for (const k of keys) {
    const p = S.pods.get(k);
    if (!p) continue;
    const tr = row("td", [k, p.owner, p.phase, fmtCPU(p.cpu), fmtBytes(p.memory)]);
    tr.addEventListener("click", () => openPod(p.namespace, p.name));
    pt.appendChild(tr);
  }
  parts.push(pt);
  parts.push(el("h3", "", "Labels"));
  parts.push(el("pre", "", Object.entries(n.metadata.labels || {}).map(([k, v]) => k + "=" + v).join("\n")));
  drawer(...parts);
}

// actionsBar is buttons, each asking for a confirmation and then doing
// its action, its output shown below.
function actionsBar(buttons, after) {
  const bar = el("div", "actions");
  const slot = el("div");
  for (const [label, req, question, cls] of buttons) {
    const b = el("button", "act " + (cls || ""), label);
    b.dataset.action = req.action;
    b.addEventListener("click", () => confirmThen(slot, question, req, after));
    bar.appendChild(b);
  }
  bar.appendChild(slot);
  return bar;
}

// confirmThen asks question in slot, and on Confirm does req and shows
// its output there, or hands it to after (which draws the drawer anew).
function confirmThen(slot, question, req, after) {
  const box = el("div", "confirm");
  box.appendChild(el("div", "", question));
  const yes = el("button", "act go", "Confirm"), no = el("button", "act", "Cancel");
  yes.id = "confirm-yes";
  no.addEventListener("click", () => slot.replaceChildren());
  yes.addEventListener("click", async () => {
    slot.replaceChildren(el("p", "sub", req.action + "…" + (req.action === "drain" ? " (PodDisruptionBudgets may hold it until the drain timeout)" : "")));
    const result = await act(req);
    if (after) after(result); else slot.replaceChildren(result);
  });
  const buttons = el("div");
  buttons.append(yes, no);
  box.appendChild(buttons);
  slot.replaceChildren(box);
}

async function act(req) {
  let res;
  try {
    const r = await fetch("/api/action", { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Kubesim-UI": "1" }, body: JSON.stringify(req) });
    res = r.ok ? await r.json() : { output: "", error: await r.text() };
  } catch (e) {
    res = { output: "", error: e.message };
  }
  const pre = el("pre", "result" + (res.error ? " failed" : ""), (res.output || "") + (res.error ? "error: " + res.error : ""));
  pre.id = "action-result";
  pre.dataset.done = "true";
  return pre;
}

// A workload's drawer: its pods, and scale for a Deployment or StatefulSet.
async function openOwner(ns, kind, name, result) {
  const title = kind + " " + ns + "/" + name;
  drawer(el("h2", "", title), ...(result ? [result] : []));
  const parts = [el("h2", "", title)];
  let w = { scalable: false };
  try { w = await getJSON("/api/workload/" + encodeURIComponent(kind) + "/" + encodeURIComponent(ns) + "/" + encodeURIComponent(name)); }
  catch (e) { parts.push(el("p", "error", e.message)); }
  if (w.scalable) {
    parts.push(el("p", "sub", w.replicas + " replicas wanted, " + w.ready + " ready"));
    if (!S.info.readOnly) {
      const box = el("div", "actions"), input = el("input"), slot = el("div");
      input.type = "number"; input.min = "0"; input.value = w.replicas; input.id = "scale-replicas";
      const b = el("button", "act", "Scale");
      b.dataset.action = "scale";
      b.addEventListener("click", () => confirmThen(slot, "Scale " + title + " to " + input.value + " replicas?",
        { action: "scale", kind, namespace: ns, name, replicas: Number(input.value) }, (res) => openOwner(ns, kind, name, res)));
      box.append(el("span", "", "replicas "), input, b, slot);
      parts.push(box);
    }
  }
  if (result) parts.push(result);
  const pt = el("table");
  pt.appendChild(row("th", ["pod", "node", "phase"]));
  const pods = [...S.pods.values()].filter((p) => p.namespace === ns && p.owner === kind + "/" + name).sort((a, b) => a.name.localeCompare(b.name));
  for (const p of pods.slice(0, 500)) {
    const tr = row("td", [p.name, p.node || "(Pending)", p.phase]);
    tr.addEventListener("click", () => openPod(p.namespace, p.name));
    pt.appendChild(tr);
  }
  parts.push(el("h3", "", "Pods (" + pods.length + ")"), pt);
  drawer(...parts);
}

// The timeline: the events the cluster's components wrote, at the times
// they wrote (the cluster's clock), by kind of happening.
const CATEGORIES = ["scheduling", "eviction", "nodes", "scaling", "preemption", "other"];
function category(ev) {
  const r = ev.reason;
  if (r === "Preempted") return "preemption";
  if (["Scheduled", "FailedScheduling", "Nominated"].includes(r)) return "scheduling";
  if (["Evicted", "Killing", "TaintManagerEviction", "Descheduled", "Evict", "DisruptionBlocked", "Disrupted", "Unconsolidatable"].includes(r) || /evict/i.test(r)) return "eviction";
  if (ev.kind === "Node" || /^Node/.test(r)) return "nodes";
  if (["SuccessfulRescale", "ScalingReplicaSet", "SuccessfulCreate", "SuccessfulDelete", "Launched", "Registered", "Initialized"].includes(r) || ev.kind === "NodeClaim") return "scaling";
  return "other";
}

function renderTimeline() {
  const filters = $("timeline-filters");
  if (!filters.childElementCount) {
    for (const c of CATEGORIES) {
      const l = el("label"), cb = el("input");
      cb.type = "checkbox"; cb.checked = true; cb.dataset.category = c;
      cb.addEventListener("change", () => { if (cb.checked) S.off.delete(c); else S.off.add(c); S.timelineDirty = true; S.lastTimeline = 0; schedule(); });
      l.append(cb, el("span", "chip k-" + c), document.createTextNode(c));
      filters.appendChild(l);
    }
  }
  const shown = S.events.filter((ev) => !S.off.has(category(ev)));
  const strip = $("timeline-strip"), list = $("timeline-list");
  if (!S.events.length) {
    strip.replaceChildren();
    list.replaceChildren(el("p", "empty", "No events yet."));
    $("timeline-span").textContent = "";
    return;
  }
  const t0 = S.events[0].t, t1 = Math.max(S.events[S.events.length - 1].t, t0 + 1000);
  $("timeline-span").textContent = fmtTime(t0) + " – " + fmtTime(t1) + " (the cluster's clock) · " + shown.length + " of " + S.events.length + " events";
  const frag = document.createDocumentFragment();
  for (let i = 0; i <= 4; i++) {
    const tick = el("span", "tick" + (i === 0 ? " first" : i === 4 ? " last" : ""), fmtTime(t0 + (t1 - t0) * i / 4));
    tick.style.left = (i * 25) + "%";
    frag.appendChild(tick);
  }
  const rows = CATEGORIES.length;
  shown.forEach((ev, i) => {
    const c = category(ev), d = el("span", "dot k-" + c);
    d.style.left = ((ev.t - t0) / (t1 - t0) * 100) + "%";
    d.style.top = (4 + CATEGORIES.indexOf(c) * (36 / rows)) + "px";
    d.title = fmtTime(ev.t) + " " + ev.reason + " " + ev.kind + " " + ev.name + "\n" + ev.message;
    d.dataset.i = i;
    frag.appendChild(d);
  });
  S.shownEvents = shown;
  strip.replaceChildren(frag);
  const lf = document.createDocumentFragment();
  for (let i = shown.length - 1; i >= Math.max(0, shown.length - 200); i--) {
    const ev = shown[i], r = el("div", "ev " + ev.type);
    r.dataset.i = i;
    r.dataset.reason = ev.reason;
    r.dataset.object = ev.kind + "/" + (ev.namespace ? ev.namespace + "/" : "") + ev.name;
    r.append(el("span", "", fmtTime(ev.t)), el("span", "reason", ev.reason),
      el("span", "", ev.kind + " " + (ev.namespace && ev.namespace !== "default" ? ev.namespace + "/" : "") + ev.name), el("span", "", ev.message));
    r.title = ev.message;
    lf.appendChild(r);
  }
  list.replaceChildren(lf);
}

function openObject(ev) {
  if (ev.kind === "Pod") openPod(ev.namespace, ev.name);
  else if (ev.kind === "Node") openNode(ev.name);
  else if (ev.kind === "Deployment" || ev.kind === "StatefulSet") openOwner(ev.namespace, ev.kind, ev.name);
}

function fmtTime(ms) {
  const d = new Date(ms);
  return d.toLocaleDateString() === new Date().toLocaleDateString() ? d.toLocaleTimeString() : d.toLocaleString();
}

// The header's tools: the descheduler, once.
function renderTools() {
  const tools = $("tools");
  if (S.info.readOnly || !(S.info.deschedulerProfiles || []).length) { tools.replaceChildren(); return; }
  const sel = el("select");
  sel.id = "deschedule-profile";
  for (const p of S.info.deschedulerProfiles) { const o = el("option", "", p); o.value = p; sel.appendChild(o); }
  const b = el("button", "act", "Run descheduler once");
  b.dataset.action = "deschedule";
  b.addEventListener("click", () => {
    const slot = el("div");
    drawer(el("h2", "", "Descheduler"), el("p", "sub", "One cycle of the upstream descheduler with the profile " + sel.value + ", as kubesim deschedule --profile " + sel.value + " runs it."), slot);
    confirmThen(slot, "Run one descheduling cycle with " + sel.value + "? Its evictions are real.", { action: "deschedule", profile: sel.value });
  });
  tools.replaceChildren(sel, b);
}

function row(cell, values) {
  const tr = el("tr");
  for (const v of values) tr.appendChild(el(cell, "", v));
  return tr;
}

// The stream.
function connect() {
  const es = new EventSource("/api/watch");
  es.onopen = () => { $("conn").textContent = "live"; $("conn").className = "conn live"; };
  es.onmessage = (e) => timed("apply", () => apply(JSON.parse(e.data)));
  es.onerror = () => { $("conn").textContent = "reconnecting…"; $("conn").className = "conn down"; };
}

// One listener for the timeline's dots and rows.
for (const id of ["timeline-strip", "timeline-list"]) {
  $(id).addEventListener("click", (e) => {
    const hit = e.target.closest("[data-i]");
    const ev = hit && S.shownEvents[Number(hit.dataset.i)];
    if (ev) openObject(ev);
  });
}

// One listener for the map's thousands of cards and chips.
$("map").addEventListener("click", (e) => {
  const chip = e.target.closest(".chip[data-pod]");
  if (chip) {
    const p = S.pods.get(chip.dataset.pod);
    if (p) openPod(p.namespace, p.name);
    return;
  }
  const card = e.target.closest(".node[data-node]");
  if (card) openNode(card.dataset.node);
});
$("group-by").addEventListener("change", (e) => { S.groupBy = e.target.value; S.chosenGroup = true; S.layoutDirty = true; schedule(); });
getJSON("/api/cluster").then((c) => {
  S.info = c;
  $("cluster").textContent = c.name + (c.readOnly ? " (read-only)" : "");
  if (c.clock && c.clock.scale > 1) {
    // The cluster's time, as its clock (Clock.Now) makes it from ours.
    const tick = () => { $("clock").textContent = "cluster time " + new Date(c.clock.epochMs + (Date.now() - c.clock.anchorMs) * c.clock.scale).toLocaleTimeString() + " · " + c.clock.scale + "×"; };
    tick();
    setInterval(tick, 1000);
  }
  document.title = "kubesim · " + c.name;
  renderTools();
});
connect();
