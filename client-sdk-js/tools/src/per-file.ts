// What the per-file benches share (bench-exports, bench-generate): each measurement in a fresh
// process of the bench's own script (onnxruntime-web fixes its threads once per process), and a
// table of one column per file, a row per figure.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { wholeNumber } from "./args.js";

/** The options every per-file bench takes (parseArgs configs), beside its own. */
export const FILE_BENCH_OPTIONS = {
  json: { type: "boolean", default: false },
  models: { type: "string", default: join(process.cwd(), "../shared/models/real-exports/bench") },
  threads: { type: "string", default: "1,2" },
} as const;

/** What those options say, and the gateway: $JITZOO_GATEWAY_URL (the private stack's), else the local one. */
export function fileBenchOptions(v: { json: boolean; models: string; threads: string }, usage: string): { dir: string; threads: number[]; json: boolean; url: string } {
  return {
    dir: v.models, threads: v.threads.split(",").map((t) => wholeNumber("threads", t, usage)), json: v.json,
    url: process.env.JITZOO_GATEWAY_URL ?? "ws://127.0.0.1:8080/v1/session",
  };
}

/**
 * Runs `script` again in a fresh Node process (relaxed SIMD on, and `--expose-gc`) with `args`;
 * its last stdout line is the JSON result. Stderr passes through (its progress lines).
 */
export function inChild(script: string, args: string[]): Record<string, unknown> {
  const result = spawnSync(process.execPath, ["--expose-gc", "--experimental-wasm-relaxed-simd", script, ...args],
    { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 1 << 26 });
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed (exit ${result.status})`);
  return JSON.parse(result.stdout.trim().split("\n").at(-1)!);
}

/** A file's row of a per-file bench: `model`, then its figures, `runs` (one per thread count) or `error`. */
export type FileRow = Record<string, unknown>;

/**
 * A table with a column per file: `rows(add, at)` adds each labelled row, `at(file, threads)`
 * giving a file's run at that thread count; a file that failed shows "-" and its error below.
 */
export function fileTable(files: readonly FileRow[], rows: (add: (label: string, cell: (f: FileRow) => string) => void,
  at: (f: FileRow, threads: number) => FileRow) => void, failed = "failed"): string {
  const lines: string[][] = [["", ...files.map((f) => String(f.model))]];
  const add = (label: string, cell: (f: FileRow) => string) => lines.push([label, ...files.map((f) => (f.error ? "-" : cell(f)))]);
  rows(add, (f, t) => (f.runs as FileRow[]).find((r) => r.threads === t)!);
  for (const f of files) if (f.error) lines.push([`${f.model}: ${failed}`, String(f.error)]);
  const widths = lines[0].map((_, c) => Math.max(...lines.map((l) => (l[c] ?? "").length)));
  return lines.map((l) => l.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("   ")).join("\n");
}
