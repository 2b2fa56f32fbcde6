// The demo page's script (served as /demo/page.js): a model infers in a loop on jitzoo kernels
// while it tunes in its worker, onnxruntime-web runs the same model every few inferences on the
// page's thread for comparison, and four panels draw what happens, live. A decoder generates
// instead (a point a token, tokens/s on the cards), onnxruntime-web driving the same loop every few
// generations. Reads its settings from /demo/config.json; exposes what the charts received as
// globalThis.demo, for tests.

import type { PageSdk } from "../site.js";

type Ort = typeof import("onnxruntime-web");
const { jitzoo, ort } = globalThis as unknown as { jitzoo: PageSdk; ort: Ort };

interface Config { gateway: string; model: string; seq: number; ortEvery: number; fresh: number }

/** One inference: when (s since start), how long (ms), whose. */
interface Point { t: number; ms: number }
/** One kernel swap of one op. */
interface Swap { t: number; op: string; kernelId: string; ms: number; label: string }

/** What the charts have received; tests read it. */
const demo = { jitzoo: [] as Point[], ort: [] as Point[], swaps: [] as Swap[], timed: 0, refused: 0, settled: 0, ops: 0, zooHits: 0, restored: 0, connection: "connecting", frames: 0, generating: false };
(globalThis as unknown as { demo: typeof demo }).demo = demo;

const COLORS = { jitzoo: "#2563eb", ort: "#ea580c", grid: "#e5e7eb", text: "#374151", faint: "#9ca3af" };

function canvas(id: string): CanvasRenderingContext2D {
  const el = document.getElementById(id) as HTMLCanvasElement;
  const scale = devicePixelRatio || 1;
  el.width = el.clientWidth * scale;
  el.height = el.clientHeight * scale;
  const ctx = el.getContext("2d")!;
  ctx.scale(scale, scale);
  return ctx;
}

/** Latency per inference over time: jitzoo's and onnxruntime-web's points, y from 0. */
function drawLatency(ctx: CanvasRenderingContext2D): void {
  const { width: w, height: h } = ctx.canvas.getBoundingClientRect();
  ctx.clearRect(0, 0, w, h);
  const all = [...demo.jitzoo, ...demo.ort];
  if (!all.length) return;
  const tMax = Math.max(...all.map((p) => p.t), 1);
  const yMax = quantile(all.map((p) => p.ms), 0.98) * 1.15;
  const x = (t: number) => 40 + (t / tMax) * (w - 50), y = (ms: number) => h - 20 - (Math.min(ms, yMax) / yMax) * (h - 30);
  ctx.strokeStyle = COLORS.grid;
  ctx.fillStyle = COLORS.faint;
  ctx.font = "11px sans-serif";
  for (let i = 0; i <= 4; i++) {
    const ms = (yMax * i) / 4;
    ctx.beginPath(); ctx.moveTo(40, y(ms)); ctx.lineTo(w - 10, y(ms)); ctx.stroke();
    ctx.fillText(`${ms.toFixed(yMax < 10 ? 1 : 0)} ms`, 2, y(ms) + 4);
  }
  ctx.fillText(`${tMax.toFixed(0)} s`, w - 30, h - 4);
  for (const [points, color] of [[demo.ort, COLORS.ort], [demo.jitzoo, COLORS.jitzoo]] as const) {
    ctx.fillStyle = color;
    for (const p of points) ctx.fillRect(x(p.t) - 1.5, y(p.ms) - 1.5, 3, 3);
  }
  for (const s of demo.swaps.filter((swap) => swap.t > 0)) {
    ctx.strokeStyle = "rgba(37, 99, 235, 0.25)";
    ctx.beginPath(); ctx.moveTo(x(s.t), 10); ctx.lineTo(x(s.t), h - 20); ctx.stroke();
  }
}

/** Each op's kernel over time: a lane per op, a mark at each swap with how much faster it was. */
function drawTimeline(ctx: CanvasRenderingContext2D, ops: string[]): void {
  const { width: w, height: h } = ctx.canvas.getBoundingClientRect();
  ctx.clearRect(0, 0, w, h);
  const tMax = Math.max(demo.jitzoo.at(-1)?.t ?? 1, 1);
  const lane = Math.min(26, (h - 10) / Math.max(ops.length, 1));
  const x = (t: number) => 190 + (t / tMax) * (w - 200);
  ctx.font = "11px sans-serif";
  ops.forEach((op, i) => {
    const y = 8 + i * lane;
    ctx.fillStyle = COLORS.text;
    ctx.fillText(op.length > 30 ? `${op.slice(0, 29)}…` : op, 2, y + lane / 2 + 4);
    ctx.fillStyle = COLORS.grid;
    ctx.fillRect(190, y + 2, w - 200, lane - 4);
    const swaps = demo.swaps.filter((s) => s.op === op);
    swaps.forEach((s, k) => {
      const end = swaps[k + 1]?.t ?? tMax;
      ctx.fillStyle = `hsl(${(k * 67 + 210) % 360}, 70%, ${70 - Math.min(k, 5) * 5}%)`;
      ctx.fillRect(x(s.t), y + 2, Math.max(2, x(end) - x(s.t)), lane - 4);
      ctx.fillStyle = COLORS.text;
      ctx.fillText(s.label, x(s.t) + 2, y + lane / 2 + 4);
    });
  });
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

const median = (xs: number[]) => (xs.length ? quantile(xs, 0.5) : NaN);

function setText(id: string, text: string): void {
  document.getElementById(id)!.textContent = text;
}

async function main(): Promise<void> {
  const config = (await (await fetch("/demo/config.json")).json()) as Config;
  const bytes = new Uint8Array(await (await fetch(`/models/${config.model}`)).arrayBuffer());
  setText("model", `${config.model}, sequence length ${config.seq}`);
  const model = await jitzoo.loadModel(bytes, { gateway: config.gateway });
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
  const feeds = jitzoo.feedsFor(model, config.seq);
  const ortFeeds = toOrt(feeds);
  let layout: ReturnType<typeof jitzoo.decoderLayout> | undefined;
  try {
    layout = jitzoo.decoderLayout(jitzoo.decodeModel(bytes));
  } catch {
    layout = undefined; // not a decoder: it infers
  }
  demo.generating = layout !== undefined;
  const start = performance.now();
  const now = () => (performance.now() - start) / 1000;
  model.on("connection", (e) => { demo.connection = e.state; });
  model.on("kernel-timed", () => { demo.timed++; });
  model.on("kernel-refused", () => { demo.refused++; });
  model.on("op-settled", () => { demo.settled++; });
  model.on("new-best", (e) => demo.swaps.push({ t: now(), op: e.op, kernelId: e.kernelId, ms: e.ms, label: `×${(e.replacedMs / e.ms).toFixed(2)}` }));
  const latency = canvas("latency"), timeline = canvas("timeline");
  let ops: string[] = [];
  const draw = () => {
    demo.frames++;
    drawLatency(latency);
    drawTimeline(timeline, ops);
    const recent = demo.jitzoo.slice(-20).map((p) => p.ms), ortRecent = demo.ort.slice(-(layout ? 20 : 5)).map((p) => p.ms);
    const figure = (ms: number) => (layout ? `${(1000 / ms).toFixed(1)} tokens/s` : `${ms.toFixed(1)} ms`);
    setText("now", figure(median(recent)));
    setText("ort", figure(median(ortRecent)));
    setText("speedup", `${(median(ortRecent) / median(recent)).toFixed(2)}×`);
    setText("zoo", `${demo.zooHits} of ${demo.ops} ops from the zoo, ${demo.restored} kept on this device`);
    setText("tuning", `${demo.settled} of ${demo.ops} ops settled · ${demo.timed} kernels timed · ${demo.refused} refused · ${demo.swaps.filter((s) => s.t > 0).length} swaps · gateway ${demo.connection}`);
  };
  setInterval(draw, 500);
  if (layout) return generate(config, layout, (i) => { if (i === 0) ops = firstOps(model); }, now, model, session);
  for (let i = 0; ; i++) {
    const t0 = performance.now();
    await model.run(feeds);
    demo.jitzoo.push({ t: now(), ms: performance.now() - t0 });
    if (i === 0) ops = firstOps(model);
    if (i % config.ortEvery === 0) {
      const t1 = performance.now();
      await session.run(ortFeeds);
      demo.ort.push({ t: now(), ms: performance.now() - t1 });
    }
    await new Promise((r) => setTimeout(r, 0)); // the page paints between inferences
  }
}

/**
 * The ops of the first run, as the charts' lanes, each starting on its first kernel (a decoder's:
 * those on generated kernels, not the attention over each past length, met once).
 */
function firstOps(model: Model): string[] {
  const stats = model.stats();
  if (demo.generating) stats.ops = stats.ops.filter((o) => o.source !== "reference");
  demo.ops = stats.ops.length;
  demo.zooHits = stats.ops.filter((o) => o.fromZoo).length;
  demo.restored = stats.ops.filter((o) => o.restored).length;
  for (const o of stats.ops) {
    demo.swaps.unshift({ t: 0, op: o.key, kernelId: o.kernelId, ms: o.ms, label: o.restored ? "kept" : o.fromZoo ? "zoo" : "first" });
  }
  return stats.ops.map((o) => o.key);
}

type Model = Awaited<ReturnType<typeof jitzoo.loadModel>>;

/** Feeds as onnxruntime-web's tensors (float32 or int64, as the SDK holds them). */
const toOrt = (feeds: Record<string, { data: unknown; dims: readonly number[] }>) => Object.fromEntries(Object.entries(feeds).map(([name, t]) => {
  const data = t.data as Float32Array | BigInt64Array;
  return [name, new ort.Tensor(data instanceof Float32Array ? "float32" : "int64", data, [...t.dims])];
}));

/**
 * A decoder's loop: it generates `fresh` tokens after a prompt of `seq`, over and over, a point a
 * generation (its decode milliseconds a token, as the generation measured them where it ran); every
 * `ortEvery` generations onnxruntime-web drives the same loop.
 */
async function generate(config: Config, layout: ReturnType<typeof jitzoo.decoderLayout>, first: (i: number) => void, now: () => number,
  m: Model, session: import("onnxruntime-web").InferenceSession): Promise<void> {
  setText("now-label", "jitzoo, decode (last 20 generations)");
  setText("latency-title", "Decode time per token, a point a generation");
  setText("ort-label", "onnxruntime-web (wasm, 1 thread), decode");
  const prompt = Array.from({ length: config.seq }, (_, i) => (i * 37 + 11) % layout.vocab);
  const ortStep = async (feeds: Record<string, { data: unknown; dims: readonly number[] }>) => {
    const out = await session.run(toOrt(feeds));
    return Object.fromEntries(Object.entries(out).map(([name, v]) => [name, { type: "float32" as const, dims: [...v.dims], data: v.data as Float32Array }]));
  };
  // the decode steps' milliseconds a token (the prompt's step is the prefill)
  const point = (r: { decodeMs: number; tokens: number[] }) => ({ t: now(), ms: r.decodeMs / Math.max(1, r.tokens.length - 1) });
  for (let i = 0; ; i++) {
    demo.jitzoo.push(point(await m.generate(prompt, { maxNewTokens: config.fresh })));
    first(i);
    if (i % config.ortEvery === 0) demo.ort.push(point(await jitzoo.generateTokens(layout, ortStep, prompt, { maxNewTokens: config.fresh })));
    await new Promise((r) => setTimeout(r, 0)); // the page paints between generations
  }
}

main().catch((e: Error) => {
  setText("tuning", `error: ${e.message}`);
  console.error(e);
});
