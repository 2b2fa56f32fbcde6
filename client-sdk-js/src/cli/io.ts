import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs, type ParseArgsConfig } from "node:util";

/** Where a CLI writes: stdout lines, stderr lines, and its environment. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
}

/**
 * A CLI's options (its config names a `help` flag), or how it exits without running: 2 with the
 * error and the usage on stderr, 0 with the usage on stdout for --help.
 */
export function parseCli<T extends ParseArgsConfig>(config: T, usage: string, io: CliIo): ReturnType<typeof parseArgs<T>>["values"] | number {
  let values: ReturnType<typeof parseArgs<T>>["values"];
  try {
    values = parseArgs(config).values;
  } catch (e) {
    io.err(`${(e as Error).message}\n${usage}`);
    return 2;
  }
  if ((values as { help?: boolean }).help) {
    io.out(usage);
    return 0;
  }
  return values;
}

/** The gateway the CLIs talk to when neither --url nor $JITZOO_GATEWAY_URL says. */
export const DEFAULT_URL = "ws://127.0.0.1:8080/v1/session";

/** Runs `main` with the process's arguments and streams when the module at `moduleUrl` is the script node was started with. */
export async function runWhenInvoked(moduleUrl: string, main: (argv: string[], io: CliIo) => Promise<number>): Promise<void> {
  let invoked = false;
  try {
    invoked = !!process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(moduleUrl);
  } catch {
    invoked = false;
  }
  if (!invoked) return;
  const code = await main(process.argv.slice(2), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
    env: process.env,
  });
  // kernel threads parked in a wait would hold the exit until their wait times out (seconds):
  // leave once what was printed is written
  await Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((resolve) => s.write("", () => resolve()))));
  process.exit(code);
}
