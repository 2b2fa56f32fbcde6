// The stack ./jitzoo started, from Node: a part stopped by its pid, and `./jitzoo up` to start
// what is not running. The drill and the end-to-end tests use them.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export type Part = "gateway" | "zoo" | "space" | "codegen" | "mongo" | "redis" | "kafka";

/** Stops a part of the stack in `home` (JITZOO_HOME) with `signal`; resolves once its process is gone. */
export async function stopPart(home: string, part: Part, signal: NodeJS.Signals, timeoutMs = 60_000): Promise<void> {
  const pid = Number(readFileSync(join(home, `run/${part}.pid`), "utf8"));
  process.kill(pid, signal);
  for (const deadline = Date.now() + timeoutMs; alive(pid); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > deadline) throw new Error(`${part} (pid ${pid}) still runs ${timeoutMs / 1000} s after ${signal}`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `./jitzoo up` from the repository at `root`: starts what is not running; resolves when all is ready. */
export function up(root: string, timeoutMs = 300_000): Promise<void> {
  const child = spawn(join(root, "jitzoo"), ["up"], { stdio: ["ignore", "ignore", "pipe"], timeout: timeoutMs });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done, fail) => child.on("close", (code) => (code === 0 ? done() : fail(new Error(`./jitzoo up failed: ${stderr}`)))));
}
