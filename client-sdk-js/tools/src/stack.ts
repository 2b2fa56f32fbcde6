// The stack ./jitzoo started, from Node: a part stopped by its pid, and `./jitzoo up` to start
// what is not running; or a pod `podman kube play` runs, killed and started again as a kubelet
// would. The drill and the end-to-end tests use them.
import { execFileSync, spawn } from "node:child_process";
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

/**
 * Kills a pod podman runs (SIGKILL, as a node failing or the OOM killer would), starts it again as a
 * kubelet restarts a pod's containers, and resolves once its readiness probe (`readyUrl`) answers 200.
 */
export async function killPod(pod: string, readyUrl: string, timeoutMs = 180_000): Promise<void> {
  const states = () => execFileSync("podman", ["pod", "inspect", pod, "--format", "{{range .Containers}}{{.State}} {{end}}"],
    { encoding: "utf8" }).trim().split(/\s+/);
  execFileSync("podman", ["pod", "kill", "--signal", "KILL", pod], { stdio: "ignore" });
  // the kill is sent, not awaited: a start before every container is gone finds some still stopping, and they stop after it
  for (const deadline = Date.now() + 30_000; !states().every((s) => s === "exited"); await new Promise((r) => setTimeout(r, 100))) {
    if (Date.now() > deadline) throw new Error(`pod ${pod}'s containers still ${states().join(", ")} 30 s after SIGKILL`);
  }
  execFileSync("podman", ["pod", "start", pod], { stdio: "ignore" });
  for (const deadline = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 250))) {
    try {
      if ((await fetch(readyUrl, { signal: AbortSignal.timeout(2_000) })).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`pod ${pod} not ready (${readyUrl}) ${timeoutMs / 1000} s after its restart`);
  }
}
