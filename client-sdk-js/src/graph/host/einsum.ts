import type { OnnxNode } from "../onnx.js";
import { rowStarts, sizeOf, stridesOf, type HostTensor, type TensorData } from "../tensor.js";
import { fail, output, same, str, type HostOp } from "./op.js";

/**
 * Einsum as a chain of batched matrix products: the operands are contracted left to right, each
 * pair copied (through strides, so diagonals and broadcasting cost nothing extra) into
 * `[batch, M, K] × [batch, K, N]` and multiplied in plain loops; a label is summed away as soon
 * as no later operand and not the output needs it.
 */

/** Labels are letters' char codes; axis i of the (right-aligned, broadcast) ellipsis is `ELLIPSIS + i`. */
const ELLIPSIS = 1000;

interface Equation {
  /** Each operand's label per axis (a label twice for a diagonal). */
  readonly inputs: number[][];
  readonly output: number[];
  /** Each label's size, broadcast over the operands. */
  readonly sizes: Map<number, number>;
}

const LETTERS = /^[A-Za-z]*$/;

/** The equation's labels for operands of these shapes (an ellipsis spans the axes its letters leave). */
function parse(node: OnnxNode, shapes: readonly (readonly number[])[]): Equation {
  const equation = str(node, "equation", "").replace(/\s/g, "");
  const [lhs, rhs, ...extra] = equation.split("->");
  const terms = lhs.split(",");
  if (extra.length || terms.length !== shapes.length) fail(node, `equation ${equation} does not fit ${shapes.length} operands`);
  const ellipsisIn = (i: number) => (terms[i].includes("...") ? shapes[i].length - terms[i].replace("...", "").length : 0);
  const ellipsisRank = Math.max(0, ...terms.map((_, i) => ellipsisIn(i)));
  const labelsOf = (term: string, ellipsis: number): number[] => {
    const parts = term.split("...");
    const [before, after = ""] = parts;
    if (parts.length > 2 || !LETTERS.test(before) || !LETTERS.test(after)) fail(node, `equation ${equation}: term "${term}" is not letters around one "..."`);
    const broadcast = Array.from({ length: ellipsis }, (_, i) => ELLIPSIS + ellipsisRank - ellipsis + i);
    return [...[...before].map((c) => c.charCodeAt(0)), ...broadcast, ...[...after].map((c) => c.charCodeAt(0))];
  };
  const inputs = terms.map((t, i) => {
    const labels = labelsOf(t, ellipsisIn(i));
    if (labels.length !== shapes[i].length) fail(node, `equation ${equation}: term "${t}" does not fit operand ${i} of shape [${shapes[i]}]`);
    return labels;
  });
  const sizes = new Map<number, number>();
  inputs.forEach((labels, i) => labels.forEach((l, a) => {
    const size = shapes[i][a], known = sizes.get(l);
    if (known !== undefined && known !== 1 && size !== 1 && size !== known) fail(node, `equation ${equation}: ${labelName(l)} is ${known} and ${size}`);
    if (known === undefined || known === 1) sizes.set(l, size);
  }));
  // implicit output: the ellipsis, then the letters used once, in alphabetical order
  const counts = new Map<number, number>();
  for (const l of inputs.flat()) counts.set(l, (counts.get(l) ?? 0) + 1);
  const output = rhs !== undefined ? labelsOf(rhs, rhs.includes("...") ? ellipsisRank : 0)
    : [...Array.from({ length: ellipsisRank }, (_, i) => ELLIPSIS + i), ...[...counts].filter(([l, n]) => l < ELLIPSIS && n === 1).map(([l]) => l).sort((a, b) => a - b)];
  output.forEach((l, i) => {
    if (!sizes.has(l) || output.indexOf(l) !== i) fail(node, `equation ${equation}: output ${labelName(l)} must appear once, and in an operand`);
  });
  return { inputs, output, sizes };
}

const labelName = (l: number) => (l >= ELLIPSIS ? `ellipsis axis ${l - ELLIPSIS}` : `label ${String.fromCharCode(l)}`);

/** Elements read through one stride per label: summed over a diagonal's axes, 0 along broadcast ones and labels it lacks. */
interface Operand {
  readonly data: TensorData;
  readonly labels: readonly number[];
  readonly strides: readonly number[];
}

function operandOf(x: HostTensor, labels: readonly number[], sizes: Map<number, number>): Operand {
  const own = stridesOf(x.shape);
  const unique = [...new Set(labels)];
  const strideOf = (l: number) => labels.reduce((s, m, a) => s + (m === l && x.shape[a] === sizes.get(l) ? own[a] : 0), 0);
  return { data: x.data, labels: unique, strides: unique.map(strideOf) };
}

/** The scalar 1: what a lone operand contracts with, to sum it over the labels the output lacks. */
const ONE: Operand = { data: Float64Array.of(1), labels: [], strides: [] };

/** An operand's elements laid out row-major over `order` (repeating it along labels it lacks), as doubles. */
function pack(x: Operand, order: readonly number[], sizes: Map<number, number>): Float64Array {
  const shape = order.map((l) => sizes.get(l)!);
  const strides = order.map((l) => { const i = x.labels.indexOf(l); return i < 0 ? 0 : x.strides[i]; });
  const [starts] = rowStarts(shape, [strides]);
  const inner = shape.at(-1) ?? 1, step = strides.at(-1) ?? 0;
  const to = new Float64Array(sizeOf(shape)), from = x.data;
  for (let r = 0, o = 0; r < starts.length; r++) for (let j = 0, s = starts[r]; j < inner; j++, s += step) to[o++] = from[s];
  return to;
}

/** A·B summed over every label not in `keep`, as the batched product `[batch, M, K] × [batch, K, N]`. */
function contract(a: Operand, b: Operand, keep: ReadonlySet<number>, sizes: Map<number, number>): Operand {
  const all = [...new Set([...a.labels, ...b.labels])];
  const batch = all.filter((l) => keep.has(l) && a.labels.includes(l) && b.labels.includes(l));
  const rows = all.filter((l) => keep.has(l) && !b.labels.includes(l));
  const cols = all.filter((l) => keep.has(l) && !a.labels.includes(l));
  const summed = all.filter((l) => !keep.has(l)); // a label only one side has is summed with the other side repeated along it
  const [nb, m, n, k] = [batch, rows, cols, summed].map((ls) => sizeOf(ls.map((l) => sizes.get(l)!)));
  const x = pack(a, [...batch, ...rows, ...summed], sizes), y = pack(b, [...batch, ...summed, ...cols], sizes);
  const z = new Float64Array(nb * m * n);
  for (let t = 0; t < nb; t++) {
    for (let i = 0; i < m; i++) {
      const zo = (t * m + i) * n, xo = (t * m + i) * k;
      for (let p = 0; p < k; p++) {
        const xv = x[xo + p], yo = (t * k + p) * n;
        for (let j = 0; j < n; j++) z[zo + j] += xv * y[yo + j];
      }
    }
  }
  const labels = [...batch, ...rows, ...cols];
  return { data: z, labels, strides: stridesOf(labels.map((l) => sizes.get(l)!)) };
}

/** Einsum (`equation`): any number of operands, diagonals, implicit or explicit output, `...` with broadcasting; doubles throughout. */
export const EINSUM: HostOp = {
  attrs: ["equation"],
  infer(ins, node) {
    const { output: labels, sizes } = parse(node, ins.map((i) => i!.shape));
    return same(ins[0]!.dtype, labels.map((l) => sizes.get(l)!));
  },
  run(ins, node, out) {
    const xs = ins as HostTensor[];
    const eq = parse(node, xs.map((x) => x.shape));
    const [first, ...rest] = xs.map((x, i) => operandOf(x, eq.inputs[i], eq.sizes));
    const others = rest.length ? rest : [ONE];
    // left to right, keeping the labels the output or a later operand still needs
    const result = others.reduce((acc, x, i) =>
      contract(acc, x, new Set([...eq.output, ...others.slice(i + 1).flatMap((o) => o.labels)]), eq.sizes), first);
    const y = output(xs[0].dtype, eq.output.map((l) => eq.sizes.get(l)!), out?.[0]);
    y.data.set(pack(result, eq.output, eq.sizes));
    return [y];
  },
};
