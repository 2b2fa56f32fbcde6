import { parseArgs, type ParseArgsConfig } from "node:util";

/** A command's options by node:util's parseArgs (an unknown one is an error); each error ends with the usage. */
export function parseOptions<T extends ParseArgsConfig>(config: T, usage: string): ReturnType<typeof parseArgs<T>>["values"] {
  try {
    return parseArgs(config).values;
  } catch (e) {
    throw new Error(`${(e as Error).message}\n${usage}`);
  }
}

/** A whole-number option's value, at least `min`. */
export function wholeNumber(name: string, value: string, usage: string, min = 1): number {
  const n = Number(value);
  if (!(Number.isInteger(n) && n >= min)) throw new Error(`--${name} must be a whole number of at least ${min}\n${usage}`);
  return n;
}
