// The fabcorr fabric map: draws the layout fabcorr computed, then colours it with each
// interval's state (utilisation, hotspots, who sends). Data comes embedded (an offline
// map) or from the API (api/v1/map/layout once, api/v1/map/state every interval).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const map = document.getElementById("map");
const panel = document.getElementById("panel");
const filter = document.getElementById("filter");
const embedded = document.getElementById("map-data");

let layout = null;
let state = null;
let selected = null; // cable key or "hosts:LEAF"
const cables = new Map(); // cable key -> {cable, line}
const groups = new Map(); // "hosts:LEAF" -> {line, members: [cable]}
const keyOf = new Map(); // either end ("switch:port") -> cable key
let view = null; // the viewBox: [x, y, w, h]
let lines = null; // the cables' layer
let dots = null; // the boxes' layer
const EXPAND_BELOW = 900; // zoomed in to a view narrower than this, collapsed hosts expand
const GRID = [8, 7]; // expanded hosts: NICs per row, spacing

function node(name, attrs, parent, text) {
  const found = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) found.setAttribute(k, v);
  if (text !== undefined) found.textContent = text;
  if (parent) parent.appendChild(found);
  return found;
}

function html(tag, text, parent, cls) {
  const found = document.createElement(tag);
  if (text !== undefined) found.textContent = text;
  if (cls) found.className = cls;
  if (parent) parent.appendChild(found);
  return found;
}

function colour(u) {
  if (u === null || u === undefined) return "#d5dbe1";
  return layout.bands.find(([bound]) => bound === null || u <= bound)[1];
}

function pct(x) { return x === null || x === undefined ? "–" : `${Math.round(x * 100)}%`; }

function when(t) {
  return t === null || t === undefined ? "now" : new Date(t * 1000).toISOString().slice(11, 19);
}

function draw() {
  const boxes = new Map(layout.boxes.map((b) => [b.id, b]));
  map.replaceChildren();
  // a fabric much wider than the canvas starts on its left part, zoomed out 1.6 times
  const canvas = map.getBoundingClientRect();
  const aspect = canvas.height ? canvas.width / canvas.height : 2;
  view = [0, 0, Math.min(layout.width, layout.height * aspect * 1.6), layout.height];
  setView();
  const under = node("g", {class: "rails"}, map);
  const leafY = (layout.boxes.find((b) => b.row === "leaf") || {y: 0}).y;
  for (const [rail, x0, x1] of layout.rails) {
    if (!rail) continue;
    const g = node("g", {class: "rail"}, under);
    node("line", {x1: x0 + 4, x2: x1 - 4, y1: leafY + 26, y2: leafY + 26}, g);
    node("text", {x: (x0 + x1) / 2, y: leafY + 40}, g, `rail ${rail}`);
  }
  lines = node("g", {class: "cables"}, map);
  for (const cable of layout.cables) {
    keyOf.set(cable.a, cable.a);
    keyOf.set(cable.b, cable.a);
    const from = boxes.get(cable.from);
    const to = boxes.get(cable.to);
    if (layout.collapsed && cable.tier === "host") {
      if (!groups.has(cable.to)) {
        const line = node("line", {class: "cable group-cable", "data-group": cable.to,
          x1: from.x, y1: from.y, x2: to.x, y2: to.y, stroke: colour(null), "stroke-width": 3},
        lines);
        groups.set(cable.to, {line, members: [], from, to, expanded: false});
      }
      groups.get(cable.to).members.push(cable);
      cables.set(cable.a, {cable, line: null});
      continue;
    }
    const down = from.y < to.y ? 1 : -1; // from the facing edges of the two boxes
    const line = node("line", {class: "cable", "data-link": cable.a, "data-peer": cable.b,
      "data-tier": cable.tier, "data-status": cable.status, x1: from.x, y1: from.y + 12 * down,
      x2: to.x, y2: to.y - (cable.tier === "host" ? 5 : 12) * down, stroke: colour(null),
      "stroke-width": 2}, lines);
    line.setAttribute("data-cable", cable.a);
    cables.set(cable.a, {cable, line});
  }
  dots = node("g", {class: "boxes"}, map);
  for (const box of layout.boxes) {
    if (box.row === "hosts" && !layout.collapsed) {
      const g = node("g", {class: "host", "data-host": box.id}, dots);
      node("circle", {cx: box.x, cy: box.y, r: 5}, g);
      node("text", {x: box.x, y: box.y + 9, transform: `rotate(60 ${box.x} ${box.y + 9})`},
        g, box.label);
    } else if (box.row === "hosts") {
      const g = node("g", {class: "group", "data-group": box.id}, dots);
      node("rect", {x: box.x - 26, y: box.y - 10, width: 52, height: 20, rx: 4}, g);
      node("text", {x: box.x, y: box.y}, g, box.label);
    } else {
      const g = node("g", {class: "switch", "data-switch": box.label, "data-role": box.row},
        dots);
      const w = Math.max(56, box.label.length * 7.2 + 12);
      node("rect", {x: box.x - w / 2, y: box.y - 12, width: w, height: 24, rx: 5}, g);
      node("text", {x: box.x, y: box.y}, g, box.label);
    }
  }
  const marks = node("g", {class: "hotmarks", id: "hotmarks"}, map);
  marks.setAttribute("pointer-events", "none");
  filter.replaceChildren(new Option("everyone", ""));
  for (const [kind, names] of [["tenant", layout.tenants], ["job", layout.jobs]]) {
    const group = document.createElement("optgroup");
    group.label = `${kind}s`;
    for (const name of names) group.appendChild(new Option(name, `${kind}s:${name}`));
    filter.appendChild(group);
  }
}

// One listener each for the whole map (thousands of cables): a click selects the cable or
// the collapsed hosts under the pointer, hovering names the cable in the header. (No
// <title> per cable: they make every restyle of the cables tens of times slower.)
function listen() {
  map.addEventListener("click", (event) => {
    const target = event.target.closest("[data-cable], [data-group]");
    if (target) select(target.dataset.cable || target.dataset.group);
  });
  map.addEventListener("mouseover", (event) => {
    const key = event.target.dataset && event.target.dataset.cable;
    const found = key && state && cables.get(key);
    document.getElementById("hover").textContent = found ?
      `${found.cable.a} ⇄ ${found.cable.b}: ${pct(busier(key).utilization)}` : "";
  });
}

function setView() {
  map.setAttribute("viewBox", view.join(" "));
  if (layout.collapsed && view[2] < EXPAND_BELOW) expandVisible();
}

// Zoomed in far enough, the collapsed hosts of the leaves in view are drawn NIC by NIC,
// in a grid where their box was, each with its own cable.
function expandVisible() {
  let expanded = false;
  for (const [id, group] of groups) {
    const {from, to} = group;
    if (group.expanded || to.x < view[0] || to.x > view[0] + view[2]) continue;
    group.expanded = expanded = true;
    group.line.setAttribute("visibility", "hidden");
    map.querySelector(`.group[data-group="${id}"]`).setAttribute("visibility", "hidden");
    const [per, gap] = GRID;
    group.members.forEach((cable, k) => {
      const x = to.x + ((k % per) - (per - 1) / 2) * gap;
      const y = to.y - 10 + Math.floor(k / per) * gap;
      const line = node("line", {class: "cable", "data-link": cable.a, "data-peer": cable.b,
        "data-tier": cable.tier, "data-status": cable.status, x1: from.x, y1: from.y + 12,
        x2: x, y2: y, stroke: colour(null), "stroke-width": 1}, lines);
      line.setAttribute("data-cable", cable.a);
      const dot = node("g", {class: "host", "data-host": cable.b}, dots);
      node("circle", {cx: x, cy: y, r: 2.5}, dot);
      cables.get(cable.a).line = line;
    });
  }
  if (expanded && state) update();
}

function hotspotOf(link) { return (state.hotspots || []).find((h) => h.link === link); }

function busier(key) {
  const found = state.cables[key];
  if (!found) return {from: key, utilization: null};
  const hot = found.directions.find((d) => hotspotOf(d.from));
  if (hot) return hot;
  return found.directions.reduce((a, b) => ((b.utilization || 0) > (a.utilization || 0) ? b : a));
}

function update() {
  document.getElementById("interval").textContent = state.start === null ? "waiting for the first interval" :
    `interval ${when(state.start)}–${when(state.start + state.seconds)} UTC (${state.seconds} s)`;
  const hotGroups = new Map();
  const marks = document.getElementById("hotmarks");
  marks.replaceChildren();
  for (const [key, {cable, line}] of cables) {
    const direction = busier(key);
    const hot = hotspotOf(direction.from);
    const group = groups.get(cable.to);
    if (group) {
      group.u = Math.max(group.u || 0, direction.utilization || 0);
      if (hot) hotGroups.set(cable.to, hot);
    }
    if (line === null) continue;
    const thin = group ? 1 : 2; // an expanded host's cable is drawn thinner
    line.setAttribute("data-link", direction.from);
    line.setAttribute("stroke", colour(direction.utilization));
    line.setAttribute("stroke-width", thin + 1.5 * thin * Math.min(1, direction.utilization || 0));
    line.setAttribute("data-utilization", direction.utilization === null ? "" :
      direction.utilization.toFixed(3));
    if (hot) {
      line.setAttribute("data-state", "hot");
      line.setAttribute("data-severity", hot.severity);
      const x = (+line.getAttribute("x1") + +line.getAttribute("x2")) / 2;
      const y = (+line.getAttribute("y1") + +line.getAttribute("y2")) / 2;
      node("text", {class: "hotmark", x, y: y - 6}, marks, `▲ ${direction.from} ${hot.severity}`);
    } else {
      line.removeAttribute("data-state");
      line.removeAttribute("data-severity");
    }
  }
  for (const [id, group] of groups) {
    group.line.setAttribute("stroke", colour(group.u));
    const hot = hotGroups.get(id);
    if (hot) {
      group.line.setAttribute("data-state", "hot");
      group.line.setAttribute("data-severity", hot.severity);
    } else {
      group.line.removeAttribute("data-state");
      group.line.removeAttribute("data-severity");
    }
    group.u = 0;
  }
  applyFilter();
  drawTimeline();
  if (selected) select(selected);
}

function applyFilter() {
  const [group, name] = filter.value.split(/:(.*)/s);
  map.classList.toggle("filtering", Boolean(name));
  for (const [key, {line}] of cables) {
    if (line === null) continue;
    const found = state && state.cables[key];
    const lit = Boolean(name) && Boolean(found) && found.directions.some(
      (d) => d[group].some((share) => share[0] === name && share[1] > 0));
    if (lit) line.setAttribute("data-lit", "1");
    else line.removeAttribute("data-lit");
  }
}

function shareTable(title, shares, parent) {
  html("h3", title, parent);
  if (!shares.length) {
    html("p", "none", parent, "hint");
    return;
  }
  const table = html("table", undefined, parent);
  table.setAttribute("data-table", title);
  const head = html("tr", undefined, table);
  for (const h of ["", "share", "95 % interval", "samples"]) html("th", h, head);
  for (const [name, share, low, high, samples] of shares) {
    const row = html("tr", undefined, table);
    row.setAttribute("data-name", name);
    html("td", name, row);
    html("td", pct(share), row);
    html("td", `${pct(low)}-${pct(high)}`, row);
    html("td", String(samples), row);
  }
}

function select(key) {
  for (const {line} of cables.values()) line && line.classList.remove("selected");
  selected = key;
  panel.replaceChildren();
  if (groups.has(key)) return showGroup(key);
  const {cable, line} = cables.get(key);
  if (line) line.classList.add("selected");
  html("h2", `${cable.a} ⇄ ${cable.b}`, panel);
  const found = state && state.cables[key];
  if (!found) {
    html("p", "No traffic measured on this cable in the last interval.", panel, "hint");
    return;
  }
  for (const d of found.directions) {
    const to = d.from === cable.a ? cable.b : cable.a;
    const section = html("section", undefined, panel);
    section.setAttribute("data-direction", d.from);
    html("h3", `${d.from} → ${to}: ${pct(d.utilization)} busy, ${d.samples} samples`, section);
    const hot = hotspotOf(d.from);
    if (hot) {
      html("p", `HOT (${hot.severity}: ${hot.kinds.join(", ")}) since ${when(hot.start)} UTC`,
        section, "hot");
      shareTable("Culprits", hot.culprits, section);
      shareTable("Culprit jobs", hot.culprit_jobs, section);
      shareTable("Victims", hot.victims, section);
      shareTable("Victim jobs", hot.victim_jobs, section);
      if (hot.noisy_neighbour) html("p", `Noisy neighbour: ${hot.noisy_neighbour}`, section);
    }
    shareTable("Tenants", d.tenants, section);
    shareTable("Jobs", d.jobs, section);
  }
}

function showGroup(key) {
  const {members} = groups.get(key);
  html("h2", `${members.length} host cables below ${key.slice(6)}`, panel);
  html("p", "Click one for who sends on it.", panel, "hint");
  const table = html("table", undefined, panel);
  for (const cable of members) {
    const row = html("tr", undefined, table, "member");
    const direction = busier(cable.a);
    row.setAttribute("data-link", direction.from);
    if (hotspotOf(direction.from)) row.setAttribute("data-state", "hot");
    html("td", `${cable.a} ⇄ ${cable.b}`, row);
    html("td", pct(direction.utilization), row);
    row.addEventListener("click", () => {
      selected = cable.a;
      select(cable.a);
    });
  }
}

function drawTimeline() {
  const strip = document.getElementById("strip");
  strip.replaceChildren();
  const {from, to, bars} = state.timeline;
  const width = strip.clientWidth || 800;
  strip.setAttribute("viewBox", `0 0 ${width} 90`);
  if (from === null) return;
  const left = 150;
  const x = (t) => left + ((t - from) / (to - from)) * (width - left - 10);
  const every = Math.ceil(60 / ((width - left) / ((to - from) / state.seconds))); // label gap
  for (let t = to, n = 0; t >= from - 1e-6; t -= state.seconds, n++) {
    node("line", {class: "tick-line", x1: x(t), x2: x(t), y1: 0, y2: 76}, strip);
    if (n % every === 0) {
      node("text", {class: "tick", x: x(t), y: 88, "text-anchor": "end"}, strip, when(t));
    }
  }
  const links = [...new Set(bars.map((b) => b.link))].slice(0, 6);
  if (!links.length) node("text", {class: "bar-label", x: left, y: 30}, strip,
    "no hotspots in these intervals");
  bars.forEach((bar) => {
    const row = links.indexOf(bar.link);
    if (row < 0) return;
    const y = 4 + row * 12;
    const end = bar.end === null ? to : bar.end;
    const rect = node("rect", {class: "bar", "data-hotspot": bar.link,
      "data-severity": bar.severity, x: x(bar.start), y, height: 9, rx: 2,
      width: Math.max(2, x(end) - x(bar.start))}, strip);
    node("title", {}, rect, `${bar.link} ${bar.severity} ${when(bar.start)}–${when(bar.end)}`);
  });
  links.forEach((link, row) => node("text", {class: "bar-label", x: 4, y: 12 + row * 12}, strip,
    link));
}

function legend() {
  const box = document.getElementById("legend");
  html("span", "busier direction:", box);
  for (const [, fill, text] of layout.bands) {
    const item = html("span", undefined, box);
    const swatch = node("svg", {width: 22, height: 8}, item);
    node("rect", {width: 22, height: 8, rx: 2, fill: fill}, swatch);
    item.append(` ${text}`);
  }
  html("span", "▲ hot", box);
  html("span", "- - one-sided LLDP", box);
}

function zoom() {
  const canvas = document.getElementById("canvas");
  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    const box = map.getBoundingClientRect();
    const f = event.deltaY < 0 ? 0.8 : 1.25;
    const px = view[0] + ((event.clientX - box.left) / box.width) * view[2];
    const py = view[1] + ((event.clientY - box.top) / box.height) * view[3];
    view = [px - (px - view[0]) * f, py - (py - view[1]) * f, view[2] * f, view[3] * f];
    setView();
  }, {passive: false});
  let drag = null;
  canvas.addEventListener("pointerdown", (e) => { drag = [e.clientX, e.clientY]; });
  canvas.addEventListener("pointerup", () => { drag = null; });
  canvas.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const box = map.getBoundingClientRect();
    view[0] -= ((e.clientX - drag[0]) / box.width) * view[2];
    view[1] -= ((e.clientY - drag[1]) / box.height) * view[3];
    drag = [e.clientX, e.clientY];
    setView();
  });
}

async function fetchJson(path) {
  const answer = await fetch(path, {cache: "no-store", credentials: "same-origin"});
  if (!answer.ok) throw new Error(`${path}: ${answer.status}`);
  return answer.json();
}

async function refresh() {
  let wait = 5;
  try {
    state = await fetchJson("api/v1/map/state");
    update();
    wait = state.seconds || wait;
  } catch (error) {
    document.getElementById("interval").textContent = `no answer: ${error.message}`;
  }
  setTimeout(refresh, wait * 1000);
}

async function start() {
  zoom();
  listen();
  filter.addEventListener("change", applyFilter);
  if (embedded) {
    ({layout, state} = JSON.parse(embedded.textContent));
    legend();
    draw();
    update();
  } else {
    layout = await fetchJson("api/v1/map/layout");
    legend();
    draw();
    await refresh();
  }
  document.body.setAttribute("data-ready", "1");
}

start();
