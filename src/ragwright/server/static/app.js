// ragwright's web page: plain DOM, no build step. Document text is untrusted: it only ever
// reaches the page through textContent and text nodes, never as HTML.
"use strict";

const KEY_STORAGE = "ragwright.apiKey";
const $ = (id) => document.getElementById(id);

// -- API access --------------------------------------------------------------------------

function authHeaders() {
  const key = sessionStorage.getItem(KEY_STORAGE);
  return key ? { Authorization: `Bearer ${key}` } : {};
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function failure(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body.error && body.error.message) message = body.error.message;
  } catch (_) { /* not JSON */ }
  if (response.status === 401) askForKey();
  return new ApiError(response.status, message);
}

async function api(path, options = {}) {
  const headers = { ...authHeaders(), ...(options.headers || {}) };
  const response = await fetch(path, { ...options, headers });
  if (!response.ok) throw await failure(response);
  return response.json();
}

// The collection the page works on: the server's default one unless the picker says
// otherwise; every API path goes through `scoped`.
let defaultCollection = null;

function scoped(path) {
  const chosen = $("collection").value;
  if (!chosen || chosen === defaultCollection) return path;
  return path.replace(/^\/v1\//, `/v1/collections/${encodeURIComponent(chosen)}/`);
}

async function loadCollections() {
  try {
    const { collections, default: fallback } = await api("/v1/collections");
    defaultCollection = fallback;
    const select = $("collection");
    select.replaceChildren(...collections.map((name) => new Option(name, name)));
    select.value = fallback;
    $("collection-picker").hidden = collections.length < 2;
  } catch (_) { /* no key yet: the picker stays hidden */ }
}

$("collection").addEventListener("change", () => {
  $("results").replaceChildren();
  refresh();
});

function postJson(path, body) {
  return api(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

function askForKey() {
  $("key-form").hidden = false;
  $("api-key").focus();
}

$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const key = $("api-key").value.trim();
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
  loadCollections().then(refresh);
loadSync();
});

// -- tabs (WAI-ARIA tabs: arrow keys move between tabs) -----------------------------------

const tabs = [...document.querySelectorAll('[role="tab"]')];

function selectTab(tab) {
  for (const other of tabs) {
    const selected = other === tab;
    other.setAttribute("aria-selected", String(selected));
    other.tabIndex = selected ? 0 : -1;
    $(other.getAttribute("aria-controls")).hidden = !selected;
  }
  tab.focus();
  if (tab.id === "tab-documents") loadDocuments();
  if (tab.id === "tab-stats") loadStats();
  if (tab.id === "tab-entities") $("entity-query").focus();
}

for (const tab of tabs) {
  tab.addEventListener("click", () => selectTab(tab));
  tab.addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (step === undefined) return;
    event.preventDefault();
    selectTab(tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length]);
  });
}

// -- helpers to build DOM from untrusted text --------------------------------------------

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function queryTerms(query) {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) || [];
  return [...new Set(words)];
}

// Appends `text` to `parent`, with words starting with a query term wrapped in <mark>.
function appendHighlighted(parent, text, terms) {
  if (!terms.length) {
    parent.append(text);
    return;
  }
  const escaped = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${escaped.join("|")})[\\p{L}\\p{N}]*`, "giu");
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    parent.append(text.slice(last, match.index));
    parent.append(element("mark", match[0]));
    last = match.index + match[0].length;
  }
  parent.append(text.slice(last));
}

// Markdown as the text a reader sees: no code fences, heading marks, table pipes, emphasis,
// backticks or link targets. (The document viewer shows the stored text as it is.)
const FENCE = /^\s*(```|~~~)/;
const TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

function plainText(markdown) {
  return markdown
    .split("\n")
    .filter((line) => !FENCE.test(line) && !TABLE_RULE.test(line))
    .map((line) => {
      const text = line.replace(/^\s{0,3}#{1,6}\s+/, "").replace(/^\s*>\s?/, "");
      if (!/^\s*\|/.test(text)) return text;
      const cells = text.trim().replace(/^\|/, "").replace(/\|$/, "").split("|");
      return cells.map((cell) => cell.trim()).join(" · ");
    })
    .join("\n")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/(\*\*|__)(.+?)\1/g, "$2")
    .replace(/(^|[^\w*])\*([^*\s][^*]*)\*/g, "$1$2")
    .replace(/`([^`]*)`/g, "$1");
}

function snippet(text, limit = 400) {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

// -- search ------------------------------------------------------------------------------

$("search-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const query = form.query.value;
  const body = { query, mode: form.mode.value, top_k: 10 };
  if (form.filter.value.trim()) body.filter = form.filter.value.trim();
  const results = $("results");
  results.replaceChildren();
  $("search-route").textContent = "";
  $("search-status").textContent = "Searching…";
  try {
    const found = await postJson(scoped("/v1/search"), body);
    $("search-route").textContent = routeText(found.route);
    const terms = queryTerms(query);
    for (const hit of found.hits) results.append(resultItem(hit, terms));
    const count = found.hits.length;
    $("search-status").textContent = count ? `${count} result${count === 1 ? "" : "s"}` : "No results.";
  } catch (error) {
    $("search-status").textContent = `Error: ${error.message}`;
  }
});

// Three decimals, or three digits for the tiny BM25 scores of a small collection.
function formatScore(score) {
  return score === 0 || Math.abs(score) >= 0.001 ? score.toFixed(3) : score.toExponential(2);
}

function resultItem(hit, terms) {
  const item = element("li", undefined, "result");
  const head = element("div", undefined, "result-head");
  const open = element("button", hit.source, "link source");
  open.type = "button";
  open.addEventListener("click", () =>
    openDocument(hit.document_id, hit.char_start, hit.char_end, open));
  head.append(open);
  if (hit.breadcrumb) head.append(element("span", hit.breadcrumb, "breadcrumb"));
  head.append(element("span", `score ${formatScore(hit.score)} (${hit.scale})`, "score"));
  const text = element("p", undefined, "snippet");
  appendHighlighted(text, snippet(plainText(hit.text)), terms);
  item.append(head, text);
  return item;
}

// -- ask (server-sent events over a streamed fetch) --------------------------------------

$("ask-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const body = { question: form.question.value, stream: true };
  if (form.filter.value.trim()) body.filter = form.filter.value.trim();
  if (form.engine.value) body.engine = form.engine.value;
  body.mode = form.mode.value;
  const answer = $("answer");
  answer.replaceChildren();
  $("citations").replaceChildren();
  $("answer-meta").textContent = "";
  $("answer-notes").replaceChildren();
  answer.setAttribute("aria-busy", "true");
  $("ask-status").textContent = "Answering…";
  try {
    const response = await fetch(scoped("/v1/ask"), {
      method: "POST",
      headers: { ...authHeaders(), "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw await failure(response);
    for await (const [name, data] of serverSentEvents(response)) {
      if (name === "delta") answer.append(data.text);
      else if (name === "answer") {
        showAnswer(data);
        showAnswerReport(data);
      } else if (name === "error") throw new ApiError(data.error.status, data.error.message);
      else if (name === "done") $("ask-status").textContent = "";
    }
  } catch (error) {
    $("ask-status").textContent = `Error: ${error.message}`;
  } finally {
    answer.setAttribute("aria-busy", "false");
  }
});

async function* serverSentEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      yield [name, JSON.parse(data.join("\n"))];
    }
  }
}

// The final answer replaces the streamed text: the same text, with [n] markers as links.
function showAnswer(data) {
  const answer = $("answer");
  const byNumber = new Map(data.citations.map((c) => [c.number, c]));
  answer.replaceChildren();
  let last = 0;
  for (const match of data.answer.matchAll(/\[(\d+)\]/g)) {
    const citation = byNumber.get(Number(match[1]));
    if (!citation) continue;
    answer.append(data.answer.slice(last, match.index));
    answer.append(citationLink(citation, match[0]));
    last = match.index + match[0].length;
  }
  answer.append(data.answer.slice(last));
  const list = $("citations");
  for (const citation of data.citations) {
    const item = element("li");
    item.append(citationLink(citation, `[${citation.number}]`), " ");
    item.append(element("span", citation.source, "source"), " ");
    item.append(element("q", citation.quote));
    list.append(item);
  }
}

// Which engine answered, what its LLM calls cost, and what the citation checks found.
function showAnswerReport(data) {
  const parts = [`Engine: ${data.engine}`];
  if (data.model) parts.push(`model ${data.model}`);
  const usage = data.usage;
  if (usage.calls || usage.cached_calls) {
    const cached = usage.cached_calls ? ` (${usage.cached_calls} cached)` : "";
    parts.push(`${usage.calls} LLM call${usage.calls === 1 ? "" : "s"}${cached}`);
    parts.push(`${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion tokens`);
  }
  if (data.cost !== null) parts.push(`estimated cost ${data.cost.toFixed(6)}`);
  $("answer-meta").textContent = parts.join(" · ");
  const notes = [...data.warnings];
  // the route is news only when the planner chose it (mode auto)
  if (data.route && data.route.planner !== "request") notes.unshift(routeText(data.route));
  if (data.removed_citations.length) {
    const markers = data.removed_citations.map((n) => `[${n}]`).join(", ");
    notes.push(`Removed citation markers naming no source: ${markers}`);
  }
  for (const sentence of data.unsupported) notes.push(`Cites no source: ${sentence}`);
  $("answer-notes").replaceChildren(...notes.map((note) => element("li", note)));
}

function citationLink(citation, label) {
  const link = element("a", label, "citation");
  link.href = `#cite-${citation.number}`;
  link.dataset.citation = String(citation.number);
  link.setAttribute("aria-label", `Source ${citation.number}: ${citation.source}`);
  link.addEventListener("click", (event) => {
    event.preventDefault();
    openDocument(citation.document_id, citation.char_start, citation.char_end, link);
  });
  return link;
}

// The search mode that ran and why (the planner's reason for mode auto).
function routeText(route) {
  return route ? `Route: ${route.mode} (${route.reason})` : "";
}

// -- the document viewer: the source text with the cited span highlighted -----------------

async function openDocument(documentId, start, end, opener) {
  const viewer = $("viewer");
  const text = $("viewer-text");
  try {
    const doc = await api(scoped(`/v1/documents/${encodeURIComponent(documentId)}`));
    $("viewer-title").textContent = doc.source;
    $("viewer-span").textContent = `Characters ${start}–${end}`;
    const mark = element("mark", doc.content.slice(start, end), "cited");
    mark.id = "cited-span";
    mark.tabIndex = -1;
    text.replaceChildren(doc.content.slice(0, start), mark, doc.content.slice(end));
    viewer.returnFocus = opener;
    if (!viewer.open) viewer.showModal();
    mark.scrollIntoView({ block: "center" });
    mark.focus({ preventScroll: true });
  } catch (error) {
    $("ask-status").textContent = `Error: ${error.message}`;
  }
}

$("viewer-close").addEventListener("click", () => $("viewer").close());
$("viewer").addEventListener("close", () => {
  const opener = $("viewer").returnFocus;
  if (opener) opener.focus();
});

// -- the entity view: a neighbourhood drawn as SVG, the chunks naming the entity ---------

const SVG = "http://www.w3.org/2000/svg";

function svgElement(tag, attributes) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

// The entity in the middle, its neighbours on a circle around it (heaviest first, from the
// top, clockwise); every edge among them, thicker for heavier ones.
function layout(nodes, width, height) {
  const places = new Map();
  const radius = Math.min(width, height) / 2 - 60;
  const ring = nodes.slice(1);
  places.set(nodes[0].key, { x: width / 2, y: height / 2 });
  ring.forEach((node, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(ring.length, 1);
    places.set(node.key, {
      x: width / 2 + radius * Math.cos(angle),
      y: height / 2 + radius * Math.sin(angle),
    });
  });
  return places;
}

function drawNeighbourhood(data) {
  const svg = $("entity-graph");
  const title = $("entity-graph-title");
  title.textContent = `${data.entity.name} and ${data.nodes.length - 1} related entities`;
  svg.replaceChildren(title);
  const places = layout(data.nodes, 640, 420);
  const heaviest = Math.max(...data.edges.map((e) => e.weight), 1);
  const edges = svgElement("g", { class: "edges" });
  for (const edge of data.edges) {
    const [a, b] = [places.get(edge.source), places.get(edge.target)];
    const central = edge.source === data.entity.key || edge.target === data.entity.key;
    const line = svgElement("line", {
      x1: a.x, y1: a.y, x2: b.x, y2: b.y,
      "stroke-width": (1 + (4 * edge.weight) / heaviest).toFixed(2),
      class: central ? "edge central" : "edge",
    });
    line.append(svgElement("title", {}));
    line.firstChild.textContent = `weight ${edge.weight}`;
    edges.append(line);
  }
  svg.append(edges);
  const mostMentioned = Math.max(...data.nodes.map((n) => n.mentions), 1);
  data.nodes.forEach((node, i) => {
    const place = places.get(node.key);
    const group = svgElement("g", {
      class: i === 0 ? "node center" : "node",
      tabindex: 0,
      role: "button",
      "data-key": node.key,
      transform: `translate(${place.x.toFixed(1)},${place.y.toFixed(1)})`,
    });
    group.setAttribute("aria-label", `${node.name}, ${node.mentions} mentions`);
    const r = 8 + 14 * Math.sqrt(node.mentions / mostMentioned);
    group.append(svgElement("circle", { r: r.toFixed(1) }));
    const label = svgElement("text", { y: (r + 14).toFixed(1), "text-anchor": "middle" });
    label.textContent = node.name;
    group.append(label);
    const open = () => showEntity(node.key);
    group.addEventListener("click", open);
    group.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        open();
      }
    });
    svg.append(group);
  });
  svg.removeAttribute("hidden"); // an SVG element has no hidden property
}

function showSites(entity) {
  $("entity-name").textContent = entity.name;
  const aliases = entity.aliases.map((a) => `${a.text} (${a.mentions})`).join(", ");
  $("entity-meta").textContent =
    `${entity.label || "entity"} · ${entity.mentions} mention${entity.mentions === 1 ? "" : "s"}` +
    (aliases ? ` · also written ${aliases}` : "");
  const list = $("entity-sites");
  list.replaceChildren();
  for (const site of entity.sites) {
    const item = element("li", undefined, "site");
    const open = element("button", `${site.source} · chunk ${site.chunk_index}`, "link source");
    open.type = "button";
    open.dataset.chunk = site.chunk_id;
    open.addEventListener("click", () =>
      openDocument(site.document_id, site.document_start, site.document_end, open));
    item.append(open, " ", element("q", site.text));
    list.append(item);
  }
}

// The entity's community beside its neighbourhood: its members on a circle (the entity
// highlighted, those also among the neighbours marked), its report's title, and on demand
// the report's points, each opening its document at the cited span.
const MAX_MEMBERS = 24;

function drawCommunity(data) {
  const section = $("entity-community");
  const community = data.community;
  $("community-report").replaceChildren();
  $("community-report").hidden = true;
  if (!community) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  section.dataset.community = community.id;
  $("community-title").textContent = `${community.id}: ${community.title || "(no report yet)"}`;
  const shown = community.members.slice(0, MAX_MEMBERS);
  $("community-meta").textContent =
    `level ${community.level} · ${community.size} member${community.size === 1 ? "" : "s"}` +
    (community.members.length > shown.length ? ` · the first ${shown.length} drawn` : "") +
    (community.dirty ? " · changed since it was built" : "");
  const svg = $("community-graph");
  svg.replaceChildren($("community-graph-title") || svgElement("title", {}));
  const near = new Set(data.nodes.map((n) => n.key));
  const [width, height] = [640, 300];
  const radius = Math.min(width, height) / 2 - 40;
  shown.forEach((key, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(shown.length, 1);
    const [x, y] = shown.length === 1 ? [width / 2, height / 2]
      : [width / 2 + radius * 1.6 * Math.cos(angle), height / 2 + radius * Math.sin(angle)];
    const kind = key === data.entity.key ? "center" : near.has(key) ? "near" : "member";
    const group = svgElement("g", {
      class: `node ${kind}`, tabindex: 0, role: "button", "data-key": key,
      transform: `translate(${x.toFixed(1)},${y.toFixed(1)})`,
    });
    group.setAttribute("aria-label", `${key}, member of community ${community.id}`);
    group.append(svgElement("circle", { r: kind === "center" ? 12 : 8 }));
    const label = svgElement("text", { y: 22, "text-anchor": "middle" });
    label.textContent = key;
    group.append(label);
    const open = () => showEntity(key);
    group.addEventListener("click", open);
    group.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        open();
      }
    });
    svg.append(group);
  });
}

async function showCommunityReport() {
  const id = $("entity-community").dataset.community;
  const list = $("community-report");
  try {
    const data = await api(scoped(`/v1/graph/communities/${encodeURIComponent(id)}`));
    list.replaceChildren();
    for (const citation of data.citations) {
      const item = element("li", undefined, "site");
      const open = element("button", `[${citation.number}] ${citation.source}`, "link source");
      open.type = "button";
      open.dataset.chunk = citation.chunk_id;
      open.addEventListener("click", () =>
        openDocument(citation.document_id, citation.char_start, citation.char_end, open));
      item.append(open, " ", element("q", citation.quote));
      list.append(item);
    }
    list.hidden = false;
  } catch (error) {
    $("entity-status").textContent = `Error: ${error.message}`;
  }
}

$("community-open").addEventListener("click", showCommunityReport);

async function showEntity(name) {
  const status = $("entity-status");
  status.textContent = "Loading…";
  try {
    const data = await api(scoped(`/v1/graph/neighbourhood/${encodeURIComponent(name)}?limit=12`));
    drawNeighbourhood(data);
    drawCommunity(data);
    showSites(data.entity);
    $("entity-query").value = data.entity.name;
    status.textContent = "";
  } catch (error) {
    status.textContent = error.status === 404 ? `No entity “${name}” in the graph.` : `Error: ${error.message}`;
  }
}

// -- the whole graph: every community as a circle of its entities, with pan and zoom ------

const WHOLE = { width: 1000, height: 700 };
let wholeView = { x: 0, y: 0, w: WHOLE.width, h: WHOLE.height };

function setWholeView(view) {
  wholeView = view;
  $("whole-graph-svg").setAttribute(
    "viewBox", [view.x, view.y, view.w, view.h].map((n) => n.toFixed(1)).join(" "));
}

// Zoom by `factor` (above 1: closer) keeping the point (px, py) of the drawing where it is.
function zoomWhole(factor, px = wholeView.x + wholeView.w / 2, py = wholeView.y + wholeView.h / 2) {
  const w = Math.min(Math.max(wholeView.w / factor, 50), WHOLE.width * 8);
  const h = (w * WHOLE.height) / WHOLE.width;
  setWholeView({
    x: px - ((px - wholeView.x) * w) / wholeView.w,
    y: py - ((py - wholeView.y) * h) / wholeView.h,
    w, h,
  });
}

// The drawing's coordinates of a pointer event.
function wholePoint(event) {
  const box = $("whole-graph-svg").getBoundingClientRect();
  return {
    x: wholeView.x + ((event.clientX - box.left) / box.width) * wholeView.w,
    y: wholeView.y + ((event.clientY - box.top) / box.height) * wholeView.h,
  };
}

async function showWholeGraph() {
  const section = $("whole-graph");
  try {
    const data = await api(scoped("/v1/graph/communities?level=0"));
    drawWholeGraph(data.communities);
    section.hidden = false;
  } catch (error) {
    section.hidden = true;
    $("entity-status").textContent = error.status === 409
      ? "No communities yet: run ragwright graph communities --rebuild."
      : `Error: ${error.message}`;
  }
}

// Communities on a grid, largest first, each its members on a ring inside its circle.
function drawWholeGraph(communities) {
  const svg = $("whole-graph-svg");
  svg.replaceChildren($("whole-graph-title"));
  const sorted = [...communities].sort((a, b) => b.size - a.size);
  const columns = Math.max(1, Math.ceil(Math.sqrt(sorted.length * 1.4)));
  const rows = Math.max(1, Math.ceil(sorted.length / columns));
  const cell = Math.min(WHOLE.width / columns, WHOLE.height / rows);
  const entities = sorted.reduce((n, c) => n + Math.min(c.members.length, MAX_MEMBERS), 0);
  $("whole-graph-meta").textContent =
    `${sorted.length} communit${sorted.length === 1 ? "y" : "ies"} · ${entities} entities drawn` +
    " (at most " + MAX_MEMBERS + " per community)";
  sorted.forEach((community, i) => {
    // the grid centred in the drawing
    const cx = (WHOLE.width - columns * cell) / 2 + (i % columns) * cell + cell / 2;
    const cy = (WHOLE.height - rows * cell) / 2 + Math.floor(i / columns) * cell + cell / 2;
    const radius = cell / 2 - 8;
    const group = svgElement("g", { class: "community", "data-community": community.id });
    group.append(svgElement("circle", { cx, cy, r: radius }));
    const heading = svgElement("text", { x: cx, y: cy - radius + 18, "text-anchor": "middle" });
    heading.textContent = `${community.id}: ${community.title || "(no report yet)"}`.slice(0, 40);
    group.append(heading);
    const shown = community.members.slice(0, MAX_MEMBERS);
    shown.forEach((key, j) => {
      const angle = -Math.PI / 2 + (2 * Math.PI * j) / Math.max(shown.length, 1);
      const ring = shown.length === 1 ? 0 : radius * 0.6;
      const x = cx + ring * Math.cos(angle);
      const y = cy + 10 + ring * Math.sin(angle);
      const node = svgElement("g", {
        class: "node member", tabindex: 0, role: "button", "data-key": key,
        transform: `translate(${x.toFixed(1)},${y.toFixed(1)})`,
      });
      node.setAttribute("aria-label", `${key}, member of community ${community.id}`);
      node.append(svgElement("circle", { r: 6 }));
      const label = svgElement("text", { y: 18, "text-anchor": "middle" });
      label.textContent = key;
      node.append(label);
      const open = () => showEntity(key);
      node.addEventListener("click", open);
      node.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          open();
        }
      });
      group.append(node);
    });
    svg.append(group);
  });
  setWholeView({ x: 0, y: 0, w: WHOLE.width, h: WHOLE.height });
}

$("whole-graph-open").addEventListener("click", showWholeGraph);
$("zoom-in").addEventListener("click", () => zoomWhole(1.25));
$("zoom-out").addEventListener("click", () => zoomWhole(0.8));
$("zoom-reset").addEventListener("click", () =>
  setWholeView({ x: 0, y: 0, w: WHOLE.width, h: WHOLE.height }));
$("whole-graph-svg").addEventListener("wheel", (event) => {
  event.preventDefault();
  const at = wholePoint(event);
  zoomWhole(event.deltaY < 0 ? 1.15 : 1 / 1.15, at.x, at.y);
}, { passive: false });
let dragFrom = null;
$("whole-graph-svg").addEventListener("pointerdown", (event) => {
  if (event.target.closest(".node")) return; // a name is clicked, not dragged
  dragFrom = { point: wholePoint(event), view: { ...wholeView } };
  $("whole-graph-svg").setPointerCapture(event.pointerId);
});
$("whole-graph-svg").addEventListener("pointermove", (event) => {
  if (!dragFrom) return;
  const box = $("whole-graph-svg").getBoundingClientRect();
  const start = dragFrom.view;
  const x0 = start.x + ((event.clientX - box.left) / box.width) * start.w;
  const y0 = start.y + ((event.clientY - box.top) / box.height) * start.h;
  setWholeView({ ...start, x: start.x - (x0 - dragFrom.point.x), y: start.y - (y0 - dragFrom.point.y) });
});
for (const done of ["pointerup", "pointercancel"]) {
  $("whole-graph-svg").addEventListener(done, () => { dragFrom = null; });
}

$("entity-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const name = $("entity-query").value.trim();
  if (name) showEntity(name);
});

let suggestionTimer = null;
$("entity-query").addEventListener("input", () => {
  clearTimeout(suggestionTimer);
  const text = $("entity-query").value.trim();
  if (!text) return;
  suggestionTimer = setTimeout(async () => {
    try {
      const found = await api(scoped(`/v1/graph/entities?q=${encodeURIComponent(text)}&limit=10`));
      $("entity-suggestions").replaceChildren(...found.entities.map((e) => new Option(e.name)));
    } catch (_) { /* no graph yet: no suggestions */ }
  }, 200);
});

// -- upload with progress ----------------------------------------------------------------

$("upload-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const files = $("upload-files").files;
  if (!files.length) return;
  const data = new FormData();
  for (const file of files) data.append("files", file, file.name);
  const progress = $("upload-progress");
  const status = $("upload-status");
  progress.hidden = false;
  progress.value = 0;
  status.textContent = "Uploading…";
  const request = new XMLHttpRequest();
  request.open("POST", scoped("/v1/documents"));
  for (const [name, value] of Object.entries(authHeaders())) request.setRequestHeader(name, value);
  request.responseType = "json";
  request.upload.addEventListener("progress", (e) => {
    if (e.lengthComputable) progress.value = Math.round((100 * e.loaded) / e.total);
  });
  request.upload.addEventListener("load", () => {
    progress.value = 100;
    status.textContent = "Uploaded; ingesting…";
  });
  request.addEventListener("load", () => {
    const body = request.response || {};
    if (request.status === 401) askForKey();
    if (request.status >= 400 && !body.documents) {
      status.textContent = `Error: ${(body.error && body.error.message) || request.status}`;
      return;
    }
    // A failed file is in both lists: say once that it failed, and why.
    const reasons = new Map((body.failed || []).map((f) => [f.source, f.reason]));
    const parts = body.documents.map((d) =>
      reasons.has(d.source) ? `${d.source} failed: ${reasons.get(d.source)}` : `${d.source}: ${d.status}`);
    for (const [source, reason] of reasons) {
      if (!body.documents.some((d) => d.source === source)) parts.push(`${source} failed: ${reason}`);
    }
    status.textContent = parts.join("; ");
    $("upload-form").reset();
    loadDocuments();
  });
  request.addEventListener("error", () => { status.textContent = "Error: the upload failed."; });
  request.send(data);
});

// -- documents and statistics -------------------------------------------------------------

async function loadDocuments() {
  try {
    const { documents } = await api(scoped("/v1/documents"));
    const rows = documents.map((d) => {
      const row = element("tr");
      const view = element("button", d.source, "link source");
      view.type = "button";
      view.addEventListener("click", () => openDocument(d.id, 0, 0, view));
      const remove = element("button", "Delete", "secondary");
      remove.type = "button";
      remove.setAttribute("aria-label", `Delete ${d.source}`);
      remove.addEventListener("click", () => deleteDocument(d));
      const cells = [view, String(d.chunks), d.characters.toLocaleString(), remove];
      for (const cell of cells) {
        const td = element("td");
        td.append(cell);
        row.append(td);
      }
      return row;
    });
    $("documents").replaceChildren(...rows);
  } catch (error) {
    $("upload-status").textContent = `Error: ${error.message}`;
  }
}

async function deleteDocument(doc) {
  if (!confirm(`Delete ${doc.source} from the index?`)) return;
  try {
    await api(scoped(`/v1/documents/${encodeURIComponent(doc.id)}`), { method: "DELETE" });
    $("upload-status").textContent = `Deleted ${doc.source}.`;
    loadDocuments();
  } catch (error) {
    $("upload-status").textContent = `Error: ${error.message}`;
  }
}

async function loadStats() {
  try {
    const stats = await api(scoped("/v1/stats"));
    const space = stats.embedding_space;
    const rows = [
      ["Documents", stats.documents.toLocaleString()],
      ["Chunks", stats.chunks.toLocaleString()],
      ["Characters", stats.characters.toLocaleString()],
      ["Database size", stats.database_bytes === null
        ? "(not shown to this key)"
        : `${(stats.database_bytes / 1048576).toFixed(2)} MB`],
      ["Embedder", stats.embedder || "(none yet)"],
      ["Embedding space", space ? `${space.model}, ${space.dimension} dimensions` : "(none yet)"],
      ["Chunking", describeChunking(stats.chunking)],
      ["Answer engine", describeAnswers(stats.answers)],
    ];
    $("ask-engine").options[0].textContent = `Server default (${stats.answers.default_engine})`;
    $("stats").replaceChildren(...rows.flatMap(([k, v]) => [element("dt", k), element("dd", v)]));
  } catch (error) {
    $("stats").replaceChildren(element("dd", `Error: ${error.message}`));
  }
}

// "recursive (size 1200, overlap 150)", or the name alone when every option is at its default.
function describeChunking(chunking) {
  const options = Object.entries(chunking.options || {}).map(([k, v]) => `${k.replace(/_/g, " ")} ${v}`);
  return options.length ? `${chunking.name} (${options.join(", ")})` : chunking.name;
}

function describeAnswers(answers) {
  return answers.model ? `${answers.default_engine} (LLM: ${answers.model})` : answers.default_engine;
}

// One sync source's part of the status line: last run, cursor age, failed (pending) items.
function sourceStatus(source) {
  if (!source.last_run) return `${source.name}: never synced`;
  const when = new Date(source.last_run).toLocaleTimeString();
  const age = source.cursor_age_seconds;
  const cursor = age === null ? "" : `, cursor ${Math.round(age / 60)} min old`;
  const failed = source.failed ? ` · ${source.failed} failed (pending)` : "";
  return `${source.name}: ${source.items} items, last run ${when}${cursor}${failed}`;
}

// The status line of the folder watch (a server started with --watch) and of the configured
// sync sources; hidden when there are neither.
async function loadSync() {
  try {
    const sync = await api("/v1/sync");
    const sources = sync.sources || [];
    if (!sync.watching.length && !sources.length) return;
    const parts = sources.map(sourceStatus);
    const notes = sources.flatMap((s) => s.failures.map((f) => `${s.name}: ${f.source}: ${f.reason}`));
    if (sync.watching.length) {
      const when = sync.last_sync ? new Date(sync.last_sync).toLocaleTimeString() : "not yet";
      const failing = sync.failures.length ? ` · ${sync.failures.length} failing` : "";
      const error = sync.error ? ` · error: ${sync.error}` : "";
      parts.unshift(`Synced ${when} · ${sync.pending} pending${failing}${error}`);
      notes.unshift(...sync.failures.map((f) => `${f.source}: ${f.reason}`));
    }
    $("sync-status").textContent = parts.join(" · ");
    $("sync-status").title = notes.join("\n");
    $("sync-status").hidden = false;
    setTimeout(loadSync, 5000);
  } catch (_) {
    $("sync-status").hidden = true;
  }
}

// The key field shows itself when the server refuses a request without a key.
function refresh() {
  loadStats();
  if (!$("panel-documents").hidden) loadDocuments();
}

if (sessionStorage.getItem(KEY_STORAGE)) $("api-key").value = sessionStorage.getItem(KEY_STORAGE);
loadCollections().then(refresh);
loadSync();
