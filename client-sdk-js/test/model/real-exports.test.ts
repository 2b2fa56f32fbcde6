// Every real export in ../shared/models/real-exports/tiny (25 files: text and vision encoders and
// decoders, both torch exporters, int8 / 4-bit / fp16) loads and matches onnxruntime-web on the
// same file and feeds. No gateway here: every op runs its reference kernel (the e2e stage runs
// them on jitzoo kernels from a private stack).
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { loadModel } from "../../src/model/model.js";
import { allowed, distance, formOf, fp32Sibling, nameOf, ortLevel, ortRun, realExports, realFeeds } from "../support/real-exports.js";

const files = realExports("tiny");
const lines: string[] = [];

describe.skipIf(files.length === 0)("real exports: every file loads and matches onnxruntime-web", () => {
  afterAll(() => console.log(`real exports (max |jitzoo − onnxruntime-web| / allowed; int8, 4-bit, fp16: each runtime's distance from the fp32 file):\n  ${lines.join("\n  ")}`));

  it.each(files.map((f) => [nameOf(f), f]))("%s", async (name, file) => {
    const bytes = readFileSync(file);
    const model = await loadModel(bytes, { worker: false, store: null });
    const feeds = realFeeds(model.inputs);
    const ours = await model.run(feeds);
    const form = formOf(file);
    const theirs = await ortRun(bytes, feeds, ortLevel(form));
    const reference = form === "fp32" ? undefined : await ortRun(readFileSync(fp32Sibling(file)), feeds);
    expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
    for (const [output, expected] of Object.entries(theirs)) {
      const { worst, largest } = distance(ours[output].data as Float32Array, expected);
      let line = `${name} ${output}: ${worst.toExponential(2)} / ${allowed(form, largest).toExponential(2)}`;
      if (reference) {
        line += ` (from fp32: jitzoo ${distance(ours[output].data as Float32Array, reference[output]).worst.toExponential(2)}, `
          + `onnxruntime-web ${distance(expected, reference[output]).worst.toExponential(2)})`;
      }
      lines.push(line);
      expect(worst, `${name} ${output}`).toBeLessThanOrEqual(allowed(form, largest));
    }
  });
});
