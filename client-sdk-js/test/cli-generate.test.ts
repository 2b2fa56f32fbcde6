// The generate CLI: a decoder file's new token ids on stdout as they come, a JSON line at the end,
// bad usage and a model that cannot generate refused with exit code 2.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../src/cli/generate.js";
import type { CliIo } from "../src/cli/io.js";
import { REAL_EXPORTS, realExports } from "./support/real-exports.js";

function io(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, env: {}, out: (l) => stdout.push(...l.split("\n")), err: (l) => stderr.push(...l.split("\n")) };
}

const tiny = (name: string) => join(REAL_EXPORTS, "tiny", `${name}.onnx`);

describe.skipIf(realExports("tiny").length === 0)("generate CLI", () => {
  it("prints each new token id as it is picked, then one JSON line; seeded sampling repeats", async () => {
    const args = ["--model", tiny("llama_kv"), "--prompt-ids", "5,17,250", "--max-new", "6", "--temperature", "1", "--seed", "4", "--offline", "--json"];
    const first = io(), second = io();
    expect(await main(args, first)).toBe(0);
    expect(await main(args, second)).toBe(0);
    const json = JSON.parse(first.stdout.at(-1)!);
    expect(first.stdout.slice(0, -1)).toEqual(json.tokens.map(String));
    expect(json).toMatchObject({ finish: "length", threads: expect.any(Number) });
    expect(json.tokens).toHaveLength(6);
    expect(json.decode_tokens_per_s).toBeGreaterThan(0);
    expect(second.stdout.at(-1)).toContain(JSON.stringify(json.tokens));
    expect(first.stderr.join("\n")).toMatch(/6 tokens \(length\): prefill [\d.]+ ms, decode [\d.]+ tokens\/s, \d threads?/);
  });

  it("builds a KV cache around a plain decoder (the same tokens as the whole sequence each step, with --plain)", async () => {
    const cached = io(), plain = io();
    const args = ["--model", tiny("gpt2"), "--prompt-ids", "5,17,250", "--max-new", "5", "--offline", "--json"];
    expect(await main(args, cached)).toBe(0);
    expect(await main([...args, "--plain"], plain)).toBe(0);
    expect(cached.stderr).toContain("a plain decoder: built a KV cache around it (one new token a step)");
    expect(plain.stderr.join("\n")).not.toMatch(/KV cache/);
    expect(JSON.parse(cached.stdout.at(-1)!).tokens).toEqual(JSON.parse(plain.stdout.at(-1)!).tokens);
  });

  it("refuses bad usage and a model that cannot generate with exit code 2", async () => {
    const run = io();
    expect(await main(["--model", tiny("gpt2_kv"), "--prompt-ids", "1,x"], run)).toBe(2);
    expect(run.stderr[0]).toBe("--prompt-ids must be comma-separated token ids");
    expect(await main(["--prompt-ids", "1"], io())).toBe(2);
    expect(await main(["--model", tiny("gpt2_kv"), "--prompt-ids", "1", "--top-p", "lots"], io())).toBe(2);
    const vocab = io();
    expect(await main(["--model", tiny("gpt2_kv"), "--prompt-ids", "1", "--stop", "9999", "--offline"], vocab)).toBe(2);
    expect(vocab.stderr.at(-1)).toBe("generate failed: stop token 9999 is not a token id of this model (0 to 511)");
    const encoder = io();
    expect(await main(["--model", tiny("vit"), "--prompt-ids", "1", "--offline"], encoder)).toBe(2);
    expect(encoder.stderr.at(-1)).toMatch(/needs an input_ids input/);
  });
});
