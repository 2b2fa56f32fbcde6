// The three browser engines, driven alike: Chromium (V8) over the DevTools protocol
// (playwright-core), Firefox (SpiderMonkey) over WebDriver BiDi (puppeteer-core), WebKitGTK
// (JavaScriptCore, Safari's engine) over WebDriver (selenium-webdriver and WebKitWebDriver, its
// MiniBrowser on a virtual display when none is set). Each is Debian's build. A page of any of
// them runs a function with an argument and gives back its result (JSON-like values only).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";
import { Builder } from "selenium-webdriver";
import { chromiumPath } from "./site.js";

export type EngineName = "chromium" | "firefox" | "webkit";
export const ENGINES: readonly EngineName[] = ["chromium", "firefox", "webkit"];

const FIREFOX = process.env.JITZOO_FIREFOX ?? "/usr/bin/firefox-esr";
const WEBKIT_DRIVER = process.env.JITZOO_WEBKIT_DRIVER ?? "/usr/bin/WebKitWebDriver";
/** Debian's multiarch folder of this machine's libraries. */
const MULTIARCH = process.arch === "arm64" ? "aarch64-linux-gnu" : "x86_64-linux-gnu";
const MINIBROWSER = process.env.JITZOO_MINIBROWSER ?? `/usr/lib/${MULTIARCH}/webkit2gtk-4.1/MiniBrowser`;
const XVFB = "/usr/bin/Xvfb";

/** What each engine needs here, by path, and the Debian package that has it. */
const NEEDS: Record<EngineName, [path: string, pkg: string][]> = {
  chromium: [[chromiumPath(), "chromium"]],
  firefox: [[FIREFOX, "firefox-esr"]],
  webkit: [[WEBKIT_DRIVER, "webkit2gtk-driver"], [MINIBROWSER, "webkit2gtk-driver"], ...(process.env.DISPLAY ? [] : [[XVFB, "xvfb"] as [string, string]])],
};

/** Why `engine` cannot run here (what is missing), or undefined when it can. */
export function engineMissing(engine: EngineName): string | undefined {
  const missing = NEEDS[engine].filter(([path]) => !existsSync(path));
  return missing.length ? `${engine}: ${missing.map(([path, pkg]) => `${path} (Debian's ${pkg})`).join(", ")} not found` : undefined;
}

/** A page in one engine. */
export interface EnginePage {
  /** Goes to `url`. */
  goto(url: string): Promise<void>;
  /** Runs `fn(arg)` in the page; resolves to what it returns (awaited), which must be JSON-like. */
  evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
  /** Resolves once `fn()` is true in the page, polling; rejects after `timeoutMs`. */
  waitFor(fn: () => boolean, timeoutMs?: number): Promise<void>;
}

export interface EngineBrowser {
  /** The browser's name and version, as its driver reports it. */
  readonly version: string;
  /** A new page; the pages of one browser share its storage (IndexedDB: a later page finds what an earlier one kept). */
  newPage(): Promise<EnginePage>;
  close(): Promise<void>;
}

/** Starts `engine` headless; throws with what is missing when it cannot run here. */
export async function launchEngine(engine: EngineName): Promise<EngineBrowser> {
  const missing = engineMissing(engine);
  if (missing) throw new Error(missing);
  if (engine === "chromium") return launchChromium();
  if (engine === "firefox") return launchFirefox();
  return launchWebKit();
}

/** A page's console errors, on stderr (WebKit's driver reports none). */
const say = (engine: EngineName, text: string) => process.stderr.write(`${engine}: ${text}\n`);

async function poll(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check());) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function launchChromium(): Promise<EngineBrowser> {
  const browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ["--no-sandbox", "--no-first-run"] });
  const context = await browser.newContext();
  return {
    version: `chromium ${browser.version()}`,
    async newPage() {
      const page = await context.newPage();
      page.on("console", (m) => { if (m.type() === "error") say("chromium", m.text()); });
      return {
        goto: async (url) => { await page.goto(url); },
        evaluate: (fn, arg) => page.evaluate(fn as never, arg) as never,
        waitFor: async (fn, timeoutMs = 30_000) => { await page.waitForFunction(fn, null, { timeout: timeoutMs }); },
      };
    },
    close: () => browser.close(),
  };
}

async function launchFirefox(): Promise<EngineBrowser> {
  // a call into the page waits as long as the test does (a tuning run is minutes on a slow machine)
  const browser = await puppeteer.launch({ browser: "firefox", executablePath: FIREFOX, headless: true, protocolTimeout: 600_000 });
  const version = await browser.version();
  return {
    version: version.replace("/", " "),
    async newPage() {
      const page = await browser.newPage();
      page.on("console", (m) => { if (m.type() === "error") say("firefox", m.text()); });
      page.on("pageerror", (e) => say("firefox", String(e)));
      return {
        goto: async (url) => { await page.goto(url); },
        evaluate: (fn, arg) => page.evaluate(fn as never, arg) as never,
        waitFor: async (fn, timeoutMs = 30_000) => { await page.waitForFunction(fn, { timeout: timeoutMs }); },
      };
    },
    close: () => browser.close(),
  };
}

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().once("error", reject).listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** An X display of its own (Xvfb picks a free number and writes it to fd 3). */
async function virtualDisplay(): Promise<{ display: string; stop(): void }> {
  const xvfb: ChildProcess = spawn(XVFB, ["-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp"], { stdio: ["ignore", "ignore", "ignore", "pipe"] });
  const display = await new Promise<string>((resolve, reject) => {
    let out = "";
    xvfb.stdio[3]!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(`:${out.trim()}`);
    });
    xvfb.once("exit", (code) => reject(new Error(`Xvfb exited (${code}) before it gave a display`)));
    xvfb.once("error", reject);
  });
  return { display, stop: () => { xvfb.kill(); } };
}

async function launchWebKit(): Promise<EngineBrowser> {
  const screen = process.env.DISPLAY ? undefined : await virtualDisplay();
  const port = await freePort();
  const server = `http://127.0.0.1:${port}`;
  const driverProcess = spawn(WEBKIT_DRIVER, [`--port=${port}`], {
    stdio: "ignore", env: { ...process.env, ...(screen ? { DISPLAY: screen.display } : {}) },
  });
  const stop = () => {
    driverProcess.kill();
    screen?.stop();
  };
  try {
    await poll(() => fetch(`${server}/status`).then((r) => r.ok, () => false), 30_000, "WebKitWebDriver");
    // one MiniBrowser a driver session: every page is a window of it, sharing its storage
    const driver = await new Builder().usingServer(server).withCapabilities({
      browserName: "MiniBrowser", "webkitgtk:browserOptions": { binary: MINIBROWSER, args: ["--automation"] },
    }).build();
    // a script may run as long as the test does (WebDriver's default is 30 s)
    await driver.manage().setTimeouts({ script: 600_000, pageLoad: 60_000 });
    const capabilities = await driver.getCapabilities();
    let pages = 0;
    return {
      version: `webkit ${capabilities.get("browserVersion") ?? "unknown"}`,
      async newPage() {
        // a page's window: the session's first, then new ones (pages are used one at a time, the driver on the latest)
        if (pages++ > 0) await driver.switchTo().newWindow("window");
        return {
          goto: async (url) => { await driver.get(url); },
          // WebDriver's Execute Script awaits a returned promise
          evaluate: (fn, arg) => driver.executeScript(`return (${fn.toString()})(arguments[0]);`, arg) as never,
          waitFor: (fn, timeoutMs = 30_000) => poll(async () => (await driver.executeScript(`return !!(${fn.toString()})();`)) === true,
            timeoutMs, "a page condition"),
        };
      },
      close: async () => {
        await driver.quit().catch(() => undefined);
        stop();
      },
    };
  } catch (e) {
    stop();
    throw e;
  }
}
