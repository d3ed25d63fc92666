// serve --ui: the run's conversations and calls, polled from /ui/api while the run goes on.
// Everything a client sent is put on the page as text (textContent), never as markup.
"use strict";

const POLL_MS = 1000;
const state = { last: 0, calls: new Map(), conversations: new Map(), batches: [], refusals: [], live: true, opened: [],
  progress: [] };
// A room (serve --room-token): the token comes in the page's address (?token=) and goes with every request.
// ?room: the room view, for a projector: each attendee's figures and progress, large.
const QUERY = new URLSearchParams(location.search);
const TOKEN = QUERY.get("token");
const ROOM = QUERY.has("room");
const REFUSALS_SHOWN = 50;
// The per-block figure is the emulator's count of the block's own bytes: the same bytes, the same figure
// in every call. The regions are placed by the call's billed usage, so a boundary can fall inside a block.
const TOKENS_COLUMN = "tokens: the emulator's count of the block's bytes (the same bytes, the same figure in every " +
  "call; behind the proxy an estimate, the upstream's tokenizer differs); the call's own figures above are billed";

const $ = (id) => document.getElementById(id);
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") node.className = value;
    else if (key === "data") for (const [k, v] of Object.entries(value)) node.dataset[k] = v;
    else if (key === "on") for (const [k, v] of Object.entries(value)) node.addEventListener(k, v);
    else node[key] = value;
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}
const svg = (tag, attrs) => {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};
const count = (n) => Number(n).toLocaleString("en-US");
const dollars = (x) => (x === null || x === undefined ? "$?" : "$" + x.toFixed(x < 0.01 ? 5 : 4));
const percent = (x) => Math.round(100 * x) + "%";

// The page saved as one file (view --html, or the download): what it would ask serve for is inside it.
const SAVED = document.getElementById("run-data");
const saved = SAVED ? JSON.parse(SAVED.textContent) : null;
const unpacked = (v) => v === null || typeof v !== "object" ? v : Array.isArray(v) ? v.map(unpacked)
  : Object.keys(v).length === 1 && Number.isInteger(v.$s) ? unpacked(saved.shared[v.$s])
  : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unpacked(x)]));

async function getJSON(path) {
  if (saved) {
    const found = path.startsWith("/ui/api/calls") ? saved.calls : saved.paths[path];
    if (found === undefined) throw new Error(`${path.replace("/ui/api/", "")}: not in this file (it holds each call ` +
      "and each next to the call it continues; view RUN serves every pair)");
    return unpacked(found);
  }
  const answer = await fetch(path, { cache: "no-store", headers: TOKEN ? { "x-room-token": TOKEN } : {} });
  if (!answer.ok) throw new Error(`${path}: HTTP ${answer.status}`);
  return answer.json();
}

// -- the run: totals, the cost over time, the conversations and their timelines ---------------------

async function poll() {
  try {
    const data = await getJSON(`/ui/api/calls?after=${state.last}`);
    state.live = data.live;
    $("source").textContent = data.source;
    document.title = `serve: ${data.source}`;
    $("status").textContent = data.live ? "live" : "a log";
    $("status").className = "status" + (data.live ? " live" : "");
    if (data.skipped.length) {
      $("skipped").hidden = false;
      $("skipped").textContent = `left out of the log: ${data.skipped.join("; ")}`;
    }
    for (const c of data.conversations) state.conversations.set(c.id, c);
    state.progress = data.progress || [];
    state.batches = data.batches;
    for (const call of data.calls) {
      state.calls.set(call.n, call);
      state.last = Math.max(state.last, call.n);
    }
    for (const refusal of data.refusals) {
      state.refusals.push(refusal);
      state.last = Math.max(state.last, refusal.n);
    }
    render(data.calls);
    drawRefusals();
    drawRoom();
    if (!document.body.dataset.ready) {
      document.body.dataset.ready = "1";
      openFromHash();
    }
  } catch (error) {
    $("status").textContent = "no answer from serve (stopped?)";
    $("status").className = "status lost";
  }
  if (state.live) setTimeout(poll, POLL_MS);
}

function render(fresh) {
  const all = [...state.calls.values()];
  const billed = all.filter((c) => c.status < 400 && c.error === null);
  const batches = state.batches;
  // what was billed: the calls, and each batch's results once (at the batch price), as serve's summary counts them
  const spent = [...billed, ...batches];
  const prompt = spent.reduce((s, c) => s + c.input + c.write + c.read, 0);
  const read = spent.reduce((s, c) => s + c.read, 0);
  const cost = spent.reduce((s, c) => s + (c.cost || 0), 0);
  const plain = spent.reduce((s, c) => s + (c.plain || 0), 0);
  const results = batches.reduce((s, b) => s + b.results, 0);
  $("totals").textContent = all.length || batches.length
    ? `${count(all.length)} calls in ${state.conversations.size} conversation${state.conversations.size === 1 ? "" : "s"}, ` +
      `${count(all.length - billed.length)} refused, ${count(all.filter((c) => c.miss).length)} missed the cache · ` +
      (batches.length ? `${count(batches.length)} batch${batches.length === 1 ? "" : "es"} of ${count(results)} results · ` : "") +
      `cache-read share ${prompt ? (100 * read / prompt).toFixed(1) : 0}% of ${count(prompt)} prompt tokens · ` +
      `cost ${dollars(cost)} (without caching ${dollars(plain)})`
    : "waiting for the first call";
  drawCost(spent);
  drawBatches(batches);
  for (const call of fresh) addBar(call);
  for (const [id, c] of state.conversations) {
    const box = conversationBox(id);
    box.querySelector(".stats").textContent =
      `${count(c.calls)} call${c.calls === 1 ? "" : "s"} · read ${c.prompt ? percent(c.read / c.prompt) : "0%"} · ${dollars(c.cost)}` +
      (c.refused ? ` · ${c.refused} refused` : "") + (c.misses ? ` · ${c.misses} missed` : "");
  }
}

function conversationBox(id) {
  let box = document.querySelector(`.conversation[data-id="${id}"]`);
  if (box) return box;
  const c = state.conversations.get(id);
  const who = c && c.attendee ? ` (${c.attendee})` : "";
  box = el("div", { class: "conversation", data: { id } },
    el("h2", { textContent: `conversation ${id}${who}: ` }, el("span", { class: "note", textContent: c ? c.label : "" })),
    el("p", { class: "stats" }),
    el("div", { class: "timeline", role: "list" }));
  box.querySelector(".timeline").style.setProperty("--max", "1");
  (c && c.attendee ? attendeeBox(c.attendee) : $("conversations")).append(box);
  return box;
}

// Conversations grouped by attendee (serve names each by metadata.user_id, an --attendee label, or a
// short hash of its key): a heading with the attendee's calls, cache-read share, misses and spend.
function attendeeBox(name) {
  for (const box of document.querySelectorAll(".attendee")) if (box.dataset.name === name) return box;
  const box = el("section", { class: "attendee", data: { name } },
    el("h2", { class: "who", textContent: name }), el("p", { class: "stats attendee-stats" }));
  $("conversations").append(box);
  return box;
}

function attendees() {
  const by = new Map();
  for (const c of state.conversations.values()) {
    if (!c.attendee) continue;
    const a = by.get(c.attendee) || { name: c.attendee, calls: 0, refused: 0, misses: 0, prompt: 0, read: 0, cost: 0 };
    for (const k of ["calls", "refused", "misses", "prompt", "read", "cost"]) a[k] += c[k] || 0;
    by.set(c.attendee, a);
  }
  return [...by.values()];
}

const share = (a) => (a.prompt ? percent(a.read / a.prompt) : "0%");

function drawRoom() {
  const everyone = attendees();
  for (const a of everyone) {
    attendeeBox(a.name).querySelector(".attendee-stats").textContent =
      `${count(a.calls)} call${a.calls === 1 ? "" : "s"} · read ${share(a)} · ${count(a.misses)} missed · ${dollars(a.cost)}`;
  }
  const room = $("room");
  if (!ROOM && !state.progress.length) return;
  room.hidden = false;
  document.body.classList.toggle("room-view", ROOM);
  const rows = $("room-attendees");
  rows.replaceChildren(...everyone.map((a) => el("tr", { data: { name: a.name } },
    el("th", { textContent: a.name }), el("td", { textContent: count(a.calls) }), el("td", { textContent: share(a) }),
    el("td", { textContent: count(a.misses) }), el("td", { textContent: dollars(a.cost) }))));
  const chapters = [...new Set(state.progress.flatMap((p) => Object.keys(p.chapters)))].sort();
  $("progress-head").replaceChildren(el("th", { textContent: "attendee" }),
    ...chapters.map((ch) => el("th", { textContent: `ch${ch}` })), el("th", { textContent: "first failing test" }));
  $("progress-rows").replaceChildren(...state.progress.map((p) => el("tr", { data: { name: p.attendee } },
    el("th", { textContent: p.attendee }),
    ...chapters.map((ch) => {
      const c = p.chapters[ch];
      return el("td", { class: c && c.passed === c.total ? "done" : "", textContent: c ? `${c.passed}/${c.total}` : "" });
    }),
    el("td", { class: "failing", textContent: p.failing || "" }))));
}

function addBar(call) {
  const box = conversationBox(call.conversation);
  const line = box.querySelector(".timeline");
  const prompt = call.input + call.write + call.read;
  const refused = call.status >= 400 || call.error !== null;
  const max = Math.max(Number(line.style.getPropertyValue("--max")) || 1, prompt);
  line.style.setProperty("--max", String(max));
  const bar = el("span", { class: "bar" });
  bar.style.setProperty("--p", String(Math.max(prompt, 1)));
  for (const [name, value] of [["read", call.read], ["write", call.write], ["uncached", call.input]]) {
    const part = el("span", { class: name });
    part.style.flexGrow = String(value);
    bar.append(part);
  }
  const summary = refused ? `refused: ${call.error}` :
    `read ${percent(call.share)} ${dollars(call.cost)}` + (call.miss ? ` · miss: ${call.miss}` : "");
  const button = el("button", {
    class: "call" + (refused ? " refused" : "") + (call.miss ? " miss" : ""), type: "button", data: { n: call.n },
    title: `#${call.n} ${call.model} ${call.status} · ${summary}`, ariaLabel: `call ${call.n}: ${summary}`,
    on: { click: (event) => choose(call.n, event.shiftKey || event.ctrlKey || event.metaKey) },
  }, bar);
  button.setAttribute("role", "listitem");
  line.append(button);
}

// A request the HTTP server refused itself (past its deadline or size cap, not a path, a foreign Host,
// not HTTP it can read) reached neither the API nor a conversation: listed apart, the latest last.
function drawRefusals() {
  const box = $("refusals"), all = state.refusals;
  box.hidden = !all.length;
  if (!all.length) return;
  const shown = all.slice(-REFUSALS_SHOWN);
  box.querySelector("summary").textContent = `${count(all.length)} request${all.length === 1 ? "" : "s"} refused by ` +
    `the server before serve read ${all.length === 1 ? "it" : "them"} (not calls)` +
    (shown.length < all.length ? `; the latest ${shown.length}:` : "");
  box.querySelector("ul").replaceChildren(...shown.map((r) => el("li", { data: { n: r.n } },
    el("code", { textContent: `#${r.n} ${r.method} ${r.path} ${r.status}` }), ` ${r.error}`)));
}

// A Message Batch is not a call: one entry each, its results' count and cost at the batch price.
function drawBatches(batches) {
  const section = $("batches");
  section.hidden = !batches.length;
  section.replaceChildren(...batches.map((b) => el("div", { class: "batch", data: { id: b.id } },
    el("h2", { textContent: `batch ${b.id}` }),
    el("p", { class: "stats", textContent: `${count(b.results)} result${b.results === 1 ? "" : "s"}: ${b.tally} · in ${count(b.input)} write ` +
      `${count(b.write)} read ${count(b.read)} out ${count(b.output)} · read ` +
      `${percent(b.input + b.write + b.read ? b.read / (b.input + b.write + b.read) : 0)} · ${dollars(b.cost)} at the ` +
      `batch price (50%) · results first read as #${b.n}` }))));
}

function drawCost(billed) {  // the calls answered and the batches, each at the time it was answered
  const chart = $("cost-chart");
  chart.replaceChildren();
  const points = [...billed].sort((a, b) => a.n - b.n);
  if (!points.length) return;
  const start = points[0].at, span = Math.max(points[points.length - 1].at - start, 1e-3);
  let spent = 0, plain = 0;
  const a = [], b = [];
  for (const c of points) {
    spent += c.cost || 0; plain += c.plain || 0;
    a.push([c.at - start, spent]); b.push([c.at - start, plain]);
  }
  const top = Math.max(plain, spent, 1e-9);
  const line = (series, cls) => chart.append(svg("polyline", {
    class: cls, points: series.map(([t, y]) => `${(600 * t / span).toFixed(2)},${(118 - 114 * y / top).toFixed(2)}`).join(" "),
  }));
  for (const y of [4, 61, 118]) chart.append(svg("line", { class: "axis", x1: 0, x2: 600, y1: y, y2: y }));
  line(a, "spent");
  line(b, "plain");  // drawn last, dashed over the solid one: seen even where caching saved nothing
  // the axis values beside the chart (text inside a stretched SVG would stretch with it)
  const seconds = (t) => (span < 120 ? t.toFixed(1) + " s" : (t / 60).toFixed(1) + " min");
  $("cost-axis").replaceChildren(el("span", { textContent: `$0 at 0 s` }),
    el("span", { textContent: `${dollars(top / 2)} (middle line)` }),
    el("span", { textContent: `top line ${dollars(top)} · ${seconds(span)} at the right edge` }));
  $("cost-caption").textContent = `the run's cost over ${seconds(span)}: ` +
    `${dollars(spent)} spent (solid), ${dollars(plain)} without caching (dashed)` +
    (plain <= spent ? "; the two lines coincide: caching saved nothing" : "");
}

// -- a call opened, or two side by side ------------------------------------------------------------

function choose(n, second) {
  if (second && state.opened.length) location.hash = `compare=${state.opened[0]},${n}`;
  else location.hash = `call=${n}`;
}

function openFromHash() {
  const call = location.hash.match(/^#call=(\d+)$/);
  const pair = location.hash.match(/^#compare=(\d+),(\d+)$/);
  const shown = call ? showCall(Number(call[1])) : pair ? showPair(Number(pair[1]), Number(pair[2])) : null;
  shown?.catch((error) => {  // said where the call would show, not lost in the console
    $("opened").hidden = false;
    $("opened").replaceChildren(el("p", { class: "verdict bad", textContent: error.message }));
  });
}
window.addEventListener("hashchange", openFromHash);

function markOpen(numbers) {
  state.opened = numbers;
  for (const b of document.querySelectorAll(".call.open")) b.classList.remove("open");
  for (const n of numbers) document.querySelector(`.call[data-n="${n}"]`)?.classList.add("open");
}

async function showCall(n) {
  const detail = await getJSON(`/ui/api/call/${n}`);
  markOpen([n]);
  const pane = $("opened");
  pane.hidden = false;
  pane.replaceChildren(callView(detail, null, false));
  pane.scrollIntoView({ block: "start" });
}

async function showPair(a, b) {
  const pair = await getJSON(`/ui/api/compare/${a}/${b}`);
  markOpen([pair.a.n, pair.b.n]);
  const pane = $("opened");
  pane.hidden = false;
  const verdict = pair.edit
    ? `#${pair.b.n} is not an append-only extension of #${pair.a.n}: ${pair.edit}`
    : `#${pair.b.n} extends #${pair.a.n} append-only` + (pair.highlight ? "; its first new block is marked" : "");
  pane.replaceChildren(
    el("p", { class: "compared " + (pair.edit ? "edit" : "append"), textContent: verdict }),
    el("div", { class: "pair" }, callView(pair.a, pair.highlight, pair.appended), callView(pair.b, pair.highlight, pair.appended)));
  const marked = pane.querySelectorAll("tr.first-edit");
  (marked[marked.length - 1] || pane).scrollIntoView({ block: "center" });
}

function callView(d, highlight, appended) {
  const refused = d.status >= 400 || d.error !== null;
  const heading = el("h2", { textContent: `#${d.n} · ${d.model} · ${d.status} · conversation ${d.conversation}` });
  if (d.previous !== null) heading.append(el("button", {
    type: "button", textContent: `compare with #${d.previous}, the call it continues`,
    on: { click: () => { location.hash = `compare=${d.previous},${d.n}`; } },
  }));
  const prompt = d.input + d.write + d.read;
  const figures = refused ? `refused, nothing billed` :
    `${count(prompt)} prompt tokens: read ${count(d.read)} (${percent(d.share)}), written ${count(d.write)}, ` +
    `uncached ${count(d.input)}; output ${count(d.output)} · ${dollars(d.cost)} (without caching ${dollars(d.plain)})`;
  const view = el("div", { class: "callview", data: { n: d.n } }, heading, el("p", { class: "figures", textContent: figures }));
  const verdict = (cls, label, text) => view.append(el("p", { class: "verdict " + cls },
    el("span", { class: "label", textContent: label + " " }), text));
  if (refused) verdict("bad", "refused:", d.error);
  if (d.predicted) verdict("", "the emulator predicted:", `read ${count(d.predicted.read)}, written ` +
    `${count(d.predicted.write)}, uncached ${count(d.predicted.input)} (the upstream's figures above)`);
  if (d.prefix) verdict(d.prefix.startsWith("REFUSED") ? "bad" : "", "prefix check:", d.prefix);
  if (d.miss) verdict("miss", "cache miss:", d.miss);
  else if (!refused) verdict("", "cache:", d.previous !== null
    ? `no miss: it read at least what #${d.previous} had cached` : "the first call of its conversation");
  if (d.edit) verdict("bad", "edit:", d.edit);
  if (d.thread) verdict("", "thread:", d.held === null
    ? `${d.thread}: the thread held an earlier part this record does not have (regions estimated over the part sent)`
    : d.thread === "continue" ? `continue: ${d.held} earlier messages (and system, tools) held by the thread, ` +
      `not sent again; billed as if sent` : d.thread);
  if (d.forgotten) verdict("", "prompt forgotten:", `the page keeps ${count(d.forgotten)} bytes of prompts, those ` +
    `of the conversations used most recently; this call's figures stay, its blocks are gone (serve --log keeps them all)`);
  view.append(strip(d.blocks, refused));
  view.append(blocksTable(d.blocks, highlight, appended));
  if (d.answer.length) view.append(el("p", { class: "answer" },
    el("span", { class: "label", textContent: `answer (${d.stop_reason || "?"}): ` }), d.answer.join(" · ")));
  return view;
}

function strip(blocks, refused) {
  const bar = el("div", { class: "strip", title: "the prompt in order, each block as wide as its estimated tokens" });
  for (const b of blocks) {
    if (b.gap) {  // blocks the detail left out: their tokens, region by region, in order
      for (const [region, tokens] of Object.entries(b.regions)) {
        const part = el("span", { class: region.replace("cache ", "") });
        part.style.flexGrow = String(refused ? b.count : tokens);
        bar.append(part);
      }
      continue;
    }
    if (b.tokens > 0 || refused) {
      const part = el("span", { class: refused ? "refused" : b.region.replace("cache ", "") });
      part.style.flexGrow = String(refused ? 1 : b.tokens);
      bar.append(part);
    }
    if (b.breakpoint) bar.append(el("span", { class: "bp", title: `breakpoint at ${b.path}` }));
  }
  return bar;
}

function blocksTable(blocks, highlight, appended) {
  const body = el("tbody");
  for (const b of blocks) {
    if (b.gap) {
      const regions = Object.entries(b.regions).map(([r, t]) => `${count(t)} ${r}`).join(", ");
      body.append(el("tr", { class: "gap" }, el("td", { colSpan: 3, textContent:
        `… ${count(b.count)} blocks not sent to the page, ${b.from} to ${b.to}: ${count(b.tokens)} tokens (${regions})` +
        (b.breakpoints ? `, ${count(b.breakpoints)} ⚑` : "") })));
      continue;
    }
    const region = b.region.replace("cache ", "");
    const where = el("td", { class: "where" }, el("code", { textContent: b.where }));
    if (b.breakpoint) where.append(el("span", { class: "mark", textContent: b.breakpoint === "automatic" ? " ⚑ auto" : " ⚑",
      title: b.breakpoint === "automatic" ? "the breakpoint a top-level cache_control puts on the last cacheable block"
        : "a cache_control breakpoint on this block" }));
    if (b.turn_scoped) where.append(el("span", { class: "badge", textContent: b.region === "cleared" ? "cleared" : "turn-scoped" }));
    if (b.held) where.append(el("span", { class: "badge held", textContent: "held" }));
    const text = b.chars > b.preview.length
      ? el("details", {}, el("summary", { textContent: b.preview }), el("pre", { textContent: b.text +
        (b.chars > b.text.length ? `\n… (${count(b.chars - b.text.length)} more characters)` : "") }))
      : el("span", { textContent: b.preview });
    const row = el("tr", { class: region + (b.path === highlight ? " first-edit" + (appended ? " appended" : "") : ""),
      data: { path: b.path }, title: `${b.region}, ${count(b.tokens)} tokens as the emulator counts these bytes` },
      where, el("td", { class: "tokens", textContent: count(b.tokens) }), el("td", {}, text));
    body.append(row);
  }
  const head = el("thead", {}, el("tr", {}, el("th", { class: "where", textContent: "block" }),
    el("th", { class: "tokens", textContent: "tokens", title: TOKENS_COLUMN }), el("th", { textContent: "content" })));
  return el("table", { class: "blocks" }, el("caption", { class: "note", textContent: TOKENS_COLUMN }), head, body);
}

poll();
