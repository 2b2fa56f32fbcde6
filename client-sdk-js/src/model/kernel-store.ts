/**
 * Each op's best kernel kept on the device, per device kind, so a reloaded page runs its first
 * inference on the kernels it tuned before any network answer comes. In browsers: IndexedDB
 * (database `jitzoo`, store `kernels`). Entries are checked on the way in and out: one that is
 * corrupted, of another format, or filed under another device kind or op is ignored (and replaced
 * when the op settles again).
 */
export interface StoredKernel {
  /** The entry's layout; only 1 is read. */
  format: 1;
  /** The device kind it was tuned on. */
  fingerprint: string;
  /** The op's key (`opKey`). */
  op: string;
  kernelId: string;
  /** The Wasm module (a Wasm kernel). */
  wasm?: Uint8Array;
  /** The WGSL source (a WebGPU kernel; the browser's shader cache keeps what it compiled from it). */
  wgsl?: string;
  /** Its ABI metadata, as the artifact carried it. */
  metadataJson: string;
  /** Its bench latency when it was kept, milliseconds. */
  ms: number;
  /** When it was kept (ms since the epoch). */
  savedAt: number;
}

/** Where kernels are kept. */
export interface KernelStore {
  get(fingerprint: string, op: string): Promise<StoredKernel | undefined>;
  put(entry: StoredKernel): Promise<void>;
  /** Every well-formed entry of a device kind (a WebGPU model builds their pipelines while it loads). */
  list?(fingerprint: string): Promise<StoredKernel[]>;
}

/** The entry, if `value` is a well-formed one for this device kind and op. */
export function checkedEntry(value: unknown, fingerprint: string, op: string): StoredKernel | undefined {
  const e = value as Partial<StoredKernel> | undefined;
  if (!e || e.format !== 1 || e.fingerprint !== fingerprint || e.op !== op) return undefined;
  if (typeof e.kernelId !== "string" || !e.kernelId || typeof e.metadataJson !== "string") return undefined;
  const wasm = e.wasm instanceof Uint8Array && typeof WebAssembly === "object" && WebAssembly.validate(e.wasm as Uint8Array<ArrayBuffer>);
  if (!wasm && !(typeof e.wgsl === "string" && e.wgsl.length > 0 && e.wasm === undefined)) return undefined;
  if (typeof e.ms !== "number" || typeof e.savedAt !== "number") return undefined;
  return e as StoredKernel;
}

const keyOf = (fingerprint: string, op: string) => `${fingerprint}|${op}`;

/** Kernels in memory: for tests, and for hosts without IndexedDB that still want a store. */
export class MemoryKernelStore implements KernelStore {
  readonly entries = new Map<string, unknown>();

  async get(fingerprint: string, op: string): Promise<StoredKernel | undefined> {
    return checkedEntry(this.entries.get(keyOf(fingerprint, op)), fingerprint, op);
  }

  async put(entry: StoredKernel): Promise<void> {
    this.entries.set(keyOf(entry.fingerprint, entry.op), entry);
  }

  async list(fingerprint: string): Promise<StoredKernel[]> {
    return [...this.entries.values()].map((e) => e as Partial<StoredKernel>)
      .flatMap((e) => checkedEntry(e, fingerprint, e.op ?? "") ?? []);
  }
}

/** IndexedDB's store, or undefined where the host has no IndexedDB (Node). */
export function indexedDbKernelStore(database = "jitzoo"): KernelStore | undefined {
  const idb = (globalThis as { indexedDB?: IDBFactory }).indexedDB;
  if (!idb) return undefined;
  let opened: Promise<IDBDatabase> | undefined;
  const db = () => (opened ??= new Promise<IDBDatabase>((resolve, reject) => {
    const request = idb.open(database, 1);
    request.onupgradeneeded = () => request.result.createObjectStore("kernels");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  }));
  const call = <T>(mode: IDBTransactionMode, act: (store: IDBObjectStore) => IDBRequest<T>) => db().then((d) =>
    new Promise<T>((resolve, reject) => {
      const request = act(d.transaction("kernels", mode).objectStore("kernels"));
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    }));
  return {
    async get(fingerprint, op) {
      try {
        return checkedEntry(await call("readonly", (s) => s.get(keyOf(fingerprint, op))), fingerprint, op);
      } catch {
        return undefined; // a store that cannot be read is a cold start, not a failure
      }
    },
    async put(entry) {
      await call("readwrite", (s) => s.put(entry, keyOf(entry.fingerprint, entry.op)));
    },
    async list(fingerprint) {
      try {
        const range = IDBKeyRange.bound(keyOf(fingerprint, ""), keyOf(fingerprint, "\uffff"));
        const all = await call<unknown[]>("readonly", (s) => s.getAll(range));
        return all.map((e) => e as Partial<StoredKernel>).flatMap((e) => checkedEntry(e, fingerprint, e.op ?? "") ?? []);
      } catch {
        return [];
      }
    },
  };
}
