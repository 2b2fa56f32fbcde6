// The zoo's dashboard in headless Chromium against the suite: after a device kind tunes the
// skeleton op, every chart draws data from the analytics API, and the kind's elections list
// the kernel the zoo elected.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { tune } from "../../src/tuner.js";
import { WORKLOADS } from "../../src/workloads.js";
import { awaitElected, GATEWAY, ZOO, ZOO_ADMIN } from "./support.js";

const CHROMIUM = process.env.JITZOO_CHROMIUM ?? "/usr/bin/chromium";

interface Drawn { kinds: number; coverage: number; volume: number; winRates: number; elections: number; refreshes: number }

describe.skipIf(!GATEWAY || !existsSync(CHROMIUM))("the zoo's dashboard", () => {
  it("draws device kinds, coverage, volume and win rates, and lists a kind's elections", async () => {
    const fingerprint = `e2e-dashboard-${randomUUID()}`;
    await tune(GATEWAY!, WORKLOADS.skeleton, { fingerprint });
    const elected = await awaitElected(fingerprint);

    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--no-first-run"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${ZOO}/dashboard/?token=${encodeURIComponent(ZOO_ADMIN)}`); // the link sets the admin cookie
      await page.waitForFunction(() => {
        const d = (globalThis as unknown as { dashboard?: { drawn: Drawn } }).dashboard?.drawn;
        return !!d && d.refreshes >= 1 && d.kinds > 0 && d.coverage > 0 && d.volume > 0 && d.winRates > 0;
      }, null, { timeout: 30_000 });
      await page.selectOption("#kind", fingerprint);
      await page.waitForFunction((kernelId) => document.getElementById("elections")!.textContent!.includes(kernelId),
        String(elected.kernelId), { timeout: 10_000 });
      expect(errors).toEqual([]);
      expect(await page.textContent("#status")).toMatch(/device kinds, \d+ ops; updated/);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
