#!/usr/bin/env node
// `generate`: token ids after a prompt on a decoder file, on the suite's kernels (tuned while it
// generates) or, with --offline, on the SDK's generic and reference kernels. Tokenizers are out of scope: ids in, ids out.
import "../node-platform.js";
import { readFileSync } from "node:fs";
import { withKvCache } from "../graph/kv-cache.js";
import { parseModel } from "../graph/onnx.js";
import { loadModel } from "../load.js";
import type { GenerateOptions, GenerateResult } from "../model/generate.js";
import type { Model } from "../model/model.js";
import { DEFAULT_URL, parseCli, runWhenInvoked, type CliIo } from "./io.js";

const USAGE = `usage: generate --model FILE.onnx --prompt-ids 1,2,3 [--max-new 64] [--stop 2,50256] [--temperature T] [--top-k K] [--top-p P]
                [--seed S] [--threads N] [--url ws://HOST:PORT/v1/session] [--key K] [--fingerprint F] [--offline] [--plain] [--json]
  --model        a decoder as exported: input_ids, attention_mask and past_key_values.N.* fed from present.N.*, or a plain
                 one (input_ids, attention_mask), around which a KV cache is built (withKvCache)
  --prompt-ids   the prompt's token ids, comma-separated
  --max-new      new tokens at most (default 64)
  --stop         token ids that end the generation
  --temperature  0 (the default) is greedy; above 0 samples, with --top-k, --top-p and --seed
  --offline      no gateway: the SDK's generic and reference kernels (correct, untuned)
  --plain        a plain decoder is fed the whole sequence each step (no KV cache built)
  --json         end stdout with one line of JSON
each new token id is printed on stdout as it is picked; prefill time and decode speed on stderr
exit codes: 0 done, 1 the gateway failed, 2 bad usage or a model that cannot generate`;

/** Comma-separated integers, or undefined when any is not one. */
function ids(text: string): number[] | undefined {
  const list = text.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  return list.length && list.every((n) => Number.isInteger(n)) ? list : undefined;
}

/** The file as given, or a plain decoder with a KV cache built around it (unless `plain`, or where none can be: the reason on stderr). */
function decoderBytes(bytes: Uint8Array, plain: boolean, io: CliIo): Uint8Array {
  const graph = parseModel(bytes).graph; // the input names alone: no tensor decoded
  const weights = new Set(graph?.initializer.map((t) => t.name));
  const inputs = (graph?.input ?? []).map((i) => i.name).filter((name) => !weights.has(name));
  if (plain || !inputs.includes("input_ids") || inputs.some((i) => i.startsWith("past_key_values."))) return bytes;
  try {
    const cached = withKvCache(bytes);
    io.err("a plain decoder: built a KV cache around it (one new token a step)");
    return cached;
  } catch (e) {
    io.err(`a plain decoder fed the whole sequence each step: ${(e as Error).message}`);
    return bytes;
  }
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  const args = parseCli({
    args: argv,
    options: {
      model: { type: "string" },
      "prompt-ids": { type: "string" },
      "max-new": { type: "string", default: "64" },
      stop: { type: "string" },
      temperature: { type: "string" },
      "top-k": { type: "string" },
      "top-p": { type: "string" },
      seed: { type: "string" },
      threads: { type: "string" },
      url: { type: "string" },
      key: { type: "string" },
      fingerprint: { type: "string" },
      offline: { type: "boolean", default: false },
      plain: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  }, USAGE, io);
  if (typeof args === "number") return args;
  const prompt = args["prompt-ids"] === undefined ? undefined : ids(args["prompt-ids"]);
  const stop = args.stop === undefined ? [] : ids(args.stop);
  if (!args.model || !prompt || !stop) {
    io.err(`${!args.model ? "--model is required" : !prompt ? "--prompt-ids must be comma-separated token ids" : "--stop must be comma-separated token ids"}\n${USAGE}`);
    return 2;
  }
  const numbers: Record<string, number | undefined> = Object.fromEntries(
    (["max-new", "temperature", "top-k", "top-p", "seed", "threads"] as const).map((k) => [k, args[k] === undefined ? undefined : Number(args[k])]));
  const bad = Object.entries(numbers).find(([, v]) => v !== undefined && !Number.isFinite(v));
  if (bad) {
    io.err(`--${bad[0]} must be a number\n${USAGE}`);
    return 2;
  }
  const url = args.url ?? io.env.JITZOO_GATEWAY_URL ?? DEFAULT_URL;
  let model: Model;
  try {
    model = await loadModel(decoderBytes(readFileSync(args.model), args.plain, io), {
      ...(args.offline ? {} : { gateway: url, client: { apiKey: args.key ?? io.env.JITZOO_API_KEY } }),
      fingerprint: args.fingerprint, threads: numbers.threads, worker: false, log: io.err,
    });
  } catch (e) {
    io.err(`${args.model}: ${(e as Error).message}`);
    return (e as Error).name === "ModelError" || (e as NodeJS.ErrnoException).code === "ENOENT" ? 2 : 1;
  }
  const options: GenerateOptions = {
    maxNewTokens: numbers["max-new"], stop, temperature: numbers.temperature, topK: numbers["top-k"], topP: numbers["top-p"], seed: numbers.seed,
    onToken: (token) => io.out(String(token)),
  };
  io.err(`generating after ${prompt.length} prompt tokens${args.offline ? " on the SDK's generic and reference kernels" : ` against ${url}`}`);
  let result: GenerateResult;
  try {
    result = await model.generate(prompt, options);
  } catch (e) {
    io.err(`generate failed: ${(e as Error).message}`);
    return (e as Error).name === "ModelError" ? 2 : 1;
  } finally {
    await model.close();
  }
  const stats = model.stats();
  stats.notes.forEach((n) => io.err(`note: ${n}`));
  io.err(`${result.tokens.length} tokens (${result.finish}): prefill ${result.prefillMs.toFixed(1)} ms, `
    + `decode ${Number.isNaN(result.decodeTokensPerSecond) ? "-" : result.decodeTokensPerSecond.toFixed(1)} tokens/s, ${stats.threads} thread${stats.threads > 1 ? "s" : ""}`);
  if (args.json) {
    io.out(JSON.stringify({
      tokens: result.tokens, finish: result.finish, prefill_ms: result.prefillMs, decode_ms: result.decodeMs,
      decode_tokens_per_s: Number.isNaN(result.decodeTokensPerSecond) ? null : result.decodeTokensPerSecond, threads: stats.threads, notes: stats.notes,
    }));
  }
  return 0;
}

await runWhenInvoked(import.meta.url, main);
