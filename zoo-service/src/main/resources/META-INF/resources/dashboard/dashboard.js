// The zoo's dashboard: draws the analytics API (/api/v1) on canvases, refreshed every 10 s.
// globalThis.dashboard says what each chart last drew, for tests.
"use strict";
const drawn = { kinds: 0, coverage: 0, volume: 0, winRates: 0, elections: 0, refreshes: 0 };
globalThis.dashboard = { drawn };
const COLORS = { bar: "#2563eb", settled: "#16a34a", text: "#374151", grid: "#e5e7eb" };

async function api(path) {
  const response = await fetch(`/api/v1/${path}`);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

function context(id) {
  const canvas = document.getElementById(id);
  const scale = devicePixelRatio || 1;
  canvas.width = canvas.clientWidth * scale;
  canvas.height = canvas.clientHeight * scale;
  const ctx = canvas.getContext("2d");
  ctx.scale(scale, scale);
  ctx.font = "11px system-ui, sans-serif";
  return { ctx, w: canvas.clientWidth, h: canvas.clientHeight };
}

/** Horizontal bars: rows of { label, value, part? } (part: a share drawn in the second color). */
function bars(id, rows) {
  const { ctx, w, h } = context(id);
  const most = Math.max(1, ...rows.map((r) => r.value));
  const lane = Math.min(22, h / Math.max(rows.length, 1));
  rows.forEach((r, i) => {
    const y = i * lane;
    const width = ((w - 200) * r.value) / most;
    ctx.fillStyle = COLORS.bar;
    ctx.fillRect(160, y + 3, width, lane - 6);
    if (r.part) {
      ctx.fillStyle = COLORS.settled;
      ctx.fillRect(160, y + 3, ((w - 200) * r.part) / most, lane - 6);
    }
    ctx.fillStyle = COLORS.text;
    ctx.fillText(r.label.length > 26 ? `${r.label.slice(0, 25)}…` : r.label, 2, y + lane / 2 + 4);
    ctx.fillText(r.note ?? String(r.value), 164 + width, y + lane / 2 + 4);
  });
  return rows.length;
}

function volumeChart(buckets) {
  const { ctx, w, h } = context("volume");
  const hours = 48, now = Date.now(), hourMs = 3_600_000;
  const start = Math.floor((now - hours * hourMs) / hourMs) * hourMs;
  const counts = new Array(hours + 1).fill(0);
  for (const b of buckets) {
    const i = Math.floor((b.fromMs - start) / hourMs);
    if (i >= 0 && i <= hours) counts[i] += b.sessions;
  }
  const most = Math.max(1, ...counts);
  const step = (w - 40) / counts.length;
  ctx.strokeStyle = COLORS.grid;
  ctx.beginPath(); ctx.moveTo(30, h - 16); ctx.lineTo(w, h - 16); ctx.stroke();
  counts.forEach((c, i) => {
    const height = ((h - 30) * c) / most;
    ctx.fillStyle = COLORS.bar;
    ctx.fillRect(30 + i * step, h - 16 - height, Math.max(1, step - 1), height);
  });
  ctx.fillStyle = COLORS.text;
  ctx.fillText(String(most), 2, 12);
  ctx.fillText("48 h ago", 30, h - 2);
  ctx.fillText("now", w - 24, h - 2);
  return buckets.length;
}

function option(select, value, label) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = label;
  select.append(o);
}

async function showWinRates() {
  const opKey = document.getElementById("op").value;
  if (!opKey) return;
  const rates = await api(`win-rates?opKey=${encodeURIComponent(opKey)}`);
  drawn.winRates = bars("winRates", rates.slice(0, 10).map((r) => ({
    label: r.kernelId, value: r.ranked, part: r.first, note: `${(100 * r.rate).toFixed(0)}% first of ${r.ranked}`,
  })));
}

async function showElections() {
  const fingerprint = document.getElementById("kind").value;
  if (!fingerprint) return;
  const elections = await api(`kinds/${encodeURIComponent(fingerprint)}/elections`);
  const body = document.getElementById("elections");
  body.replaceChildren(...elections.map((e) => {
    const row = document.createElement("tr");
    const speedup = (x) => (x == null ? "–" : `${x.toFixed(2)}×`);
    for (const cell of [e.op, e.backend, e.kernelId, e.medianMs.toFixed(3), speedup(e.speedupVsInitial), speedup(e.speedupVsSafeDefault),
      e.reports, e.origins]) {
      const td = document.createElement("td");
      td.textContent = String(cell);
      row.append(td);
    }
    return row;
  }));
  drawn.elections = elections.length;
}

/** Keeps a select's choices, and its choice, across refreshes. */
function fill(select, items) {
  const chosen = select.value;
  select.replaceChildren();
  for (const [value, label] of items) option(select, value, label);
  if (items.some(([value]) => value === chosen)) select.value = chosen;
}

async function refresh() {
  const [kinds, coverage, volume] = await Promise.all([api("kinds?limit=200"), api("coverage"), api("volume?bucket=hour&hours=48")]);
  drawn.kinds = bars("kinds", kinds.slice(0, 10).map((k) => ({ label: k.fingerprint, value: k.sessions, note: `${k.sessions} (${k.origins})` })));
  drawn.coverage = bars("coverage", coverage.slice(0, 10).map((c) => ({
    label: c.opKey, value: c.kinds, part: c.settled, note: `${c.kinds} kinds, ${c.settled} settled`,
  })));
  drawn.volume = volumeChart(volume);
  fill(document.getElementById("op"), coverage.map((c) => [c.opKey, c.opKey]));
  fill(document.getElementById("kind"), kinds.map((k) => [k.fingerprint, `${k.fingerprint} (${k.sessions} sessions)`]));
  await Promise.all([showWinRates(), showElections()]);
  drawn.refreshes++;
  document.getElementById("status").textContent =
    `${kinds.length} device kinds, ${coverage.length} ops; updated ${new Date().toLocaleTimeString()}`;
}

document.getElementById("op").addEventListener("change", () => void showWinRates());
document.getElementById("kind").addEventListener("change", () => void showElections());
const tick = () => refresh().catch((e) => { document.getElementById("status").textContent = `error: ${e.message}`; });
void tick();
setInterval(tick, 10_000);
