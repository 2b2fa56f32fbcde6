// (zoo faults) While devices report through the gateway: MongoDB stopped, then Redis stopped, then
// the zoo killed with kill -9, each for a while and started again. Afterwards every report the
// gateway acknowledged is stored, once; Resolve answered throughout both storage outages (from the
// cache while MongoDB was down, from MongoDB while Redis was down), and sessions went on while
// Redis was down (codegen compiles without its cache).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { awaitElected, GATEWAY, hello, RawSession, report, startMissingParts, stopPart, ZOO, zooFetch } from "./support.js";

const SHAPE = [16, 32, 8];
const PHASES = ["before", "mongo down", "redis down", "zoo killed", "after"] as const;
type Phase = (typeof PHASES)[number];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the drill saw in each phase. */
type Seen = { sessions: number; acked: number; sessionsFailed: number; resolved: number; resolveFailed: number };

/** Waits until the zoo's readiness (which asks MongoDB; Redis is a cache it does without) is up again. */
async function zooReady(timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ;) {
    const status = await fetch(`${ZOO}/q/health/ready`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status, () => 0);
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`the zoo was not ready within ${timeoutMs / 1000} s after MongoDB came back`);
    await sleep(200);
  }
}

describe.skipIf(!GATEWAY || !process.env.JITZOO_HOME)("the zoo through storage faults and a crash", () => {
  it("stores every acknowledged report and answers Resolve through MongoDB and Redis outages", async () => {
    const run = randomUUID().slice(0, 8);
    const kinds = [0, 1, 2].map((i) => `drill-${run}-${i}`);
    const seen = Object.fromEntries(PHASES.map((p) => [p, { sessions: 0, acked: 0, sessionsFailed: 0, resolved: 0, resolveFailed: 0 }])) as Record<Phase, Seen>;
    let phase: Phase = "before";
    let stopping = false;
    const acked = new Map<string, Set<string>>(kinds.map((k) => [k, new Set()]));

    /** One device's session: Hello, the Welcome's kernel timed and reported, the ReportAck. */
    async function session(kind: string): Promise<void> {
      const at = phase;
      seen[at].sessions++;
      const s = new RawSession();
      try {
        await s.send(hello(kind, SHAPE));
        const welcome = await s.next("welcome", 15_000);
        await s.send(report(welcome.initial[0].artifact!.ref!.kernelId, SHAPE));
        await s.next("reportAck", 15_000);
        acked.get(kind)!.add(welcome.sessionId);
        seen[at].acked++;
      } catch {
        seen[at].sessionsFailed++;
        await sleep(200);
      } finally {
        s.close();
      }
    }

    // a kind elected before the drill, for the Resolve probe
    const probed = `drill-${run}-probe`;
    await session(probed);
    await awaitElected(probed, SHAPE);
    const best = `/api/v1/best?fingerprint=${probed}&backend=wasm&op=matmul&shape=${SHAPE.join(",")}`;

    const devices = kinds.map(async (kind) => {
      while (!stopping) await session(kind);
    });
    const failures: string[] = []; // each Resolve that failed, but those while the zoo was down
    let straddled = 0; // Resolves under way as the phase changed
    const now = (): Phase => phase; // read afresh after each await (the drill moves it on meanwhile)
    const probe = (async () => {
      while (!stopping) {
        const at = now();
        const started = Date.now();
        let failure = "";
        try {
          const response = await zooFetch(best, { signal: AbortSignal.timeout(2_000) });
          if (response.status !== 200) failure = `HTTP ${response.status}: ${await response.text()}`;
        } catch (e) {
          failure = String((e as Error).cause ?? e);
        }
        // a Resolve under way when the phase changed counts in neither: one the zoo's kill cut off is not the Redis outage's
        const after = now();
        if (after !== at) {
          straddled++;
          if (failure) failures.push(`${at} → ${after}: ${failure} (${Date.now() - started} ms)`);
        } else if (failure) {
          seen[at].resolveFailed++;
          if (at !== "zoo killed") failures.push(`${at}: ${failure} (${Date.now() - started} ms)`);
        } else {
          seen[at].resolved++;
        }
        await sleep(100);
      }
    })();

    await sleep(4_000);
    phase = "mongo down";
    await stopPart("mongo", "SIGTERM");
    await sleep(8_000);
    await startMissingParts();
    await zooReady(); // each outage starts from a zoo that reaches its store again (its MongoDB client reconnects on its own time)
    phase = "redis down";
    await stopPart("redis", "SIGTERM");
    await sleep(8_000);
    await startMissingParts();
    phase = "zoo killed";
    await stopPart("zoo", "SIGKILL");
    await startMissingParts();
    phase = "after";
    await sleep(5_000);
    stopping = true;
    await Promise.all([...devices, probe]);

    // every acknowledged session's report is stored, once
    const stored = new Map<string, string[]>();
    for (const deadline = Date.now() + 90_000; ;) {
      for (const kind of kinds) {
        const rows = await (await zooFetch(`/api/v1/export/measurements?format=jsonl&fingerprint=${kind}`)).text();
        stored.set(kind, rows.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l).sessionId as string));
      }
      const missing = kinds.flatMap((k) => [...acked.get(k)!].filter((id) => !stored.get(k)!.includes(id)));
      if (missing.length === 0 || Date.now() > deadline) break;
      await sleep(1_000);
    }
    console.log(`zoo fault drill: ${JSON.stringify(seen)}`);
    console.log(`Resolves across a phase change: ${straddled}; failed Resolves but those while the zoo was down: ${failures.join("; ") || "none"}`);
    for (const kind of kinds) {
      const ids = stored.get(kind)!;
      expect(new Set(ids).size, `${kind}: a report stored twice`).toBe(ids.length);
      expect([...acked.get(kind)!].filter((id) => !ids.includes(id)), `${kind}: acknowledged but not stored`).toEqual([]);
    }
    for (const p of ["mongo down", "redis down"] as const) {
      expect(seen[p].resolveFailed, `Resolve failed while ${p}`).toBe(0);
      expect(seen[p].resolved).toBeGreaterThan(10);
    }
    expect(seen["mongo down"].acked, "the gateway acknowledges reports while MongoDB is down").toBeGreaterThan(0);
    // Redis is only a cache (codegen's kernels, the zoo's elections) and the gateway's resume tokens: sessions go on
    expect(seen["redis down"].sessionsFailed, "sessions failed while Redis was down").toBe(0);
    expect(seen["redis down"].acked).toBeGreaterThan(0);
    expect(seen.after.acked, "reports are acknowledged after the zoo's restart").toBeGreaterThan(0);
  }, 300_000);
});
