// The loop a pool's helper thread runs (browser Worker or Node worker_threads; the entry files
// thread.ts and node-thread.ts hand it their port). It blocks in Atomics.wait between commands, so
// it takes messages (new kernels) only when the caller sends YIELD: it then returns to the event
// loop, instantiates what was posted, acknowledges in the control block, and waits again.
import {
  ACKS, ARGC, ARGS, CMD, FAILED, KERNEL, PARK, PENDING, RUN, SEQ, STOP, UNITS, WORKERS, YIELD,
  callRange, shareStart, writeError, type FromHelper, type ToHelper,
} from "./control.js";

/** Both ends a helper needs: messages in, messages out. */
export interface HelperPort {
  post(message: FromHelper): void;
  listen(handler: (message: ToHelper) => void): void;
  close(): void;
}

export function serve(port: HelperPort): void {
  let index = 0;
  let control: Int32Array | undefined;
  let spin = 0;
  let seen = 0;
  let stopped = false;
  const kernels = new Map<number, Function>();
  const args = new Int32Array(16);

  // after a dispatch the next one usually follows within microseconds: spin a while before blocking
  let hot = false;
  const loop = () => {
    const ctl = control!;
    for (;;) {
      let spins = 0;
      while (Atomics.load(ctl, SEQ) === seen) {
        if (!hot || ++spins > spin) {
          Atomics.wait(ctl, SEQ, seen);
          spins = 0;
        }
      }
      seen = Atomics.load(ctl, SEQ);
      const command = Atomics.load(ctl, CMD);
      hot = command === RUN;
      if (command === RUN) {
        const workers = ctl[WORKERS];
        if (index < workers) {
          const units = ctl[UNITS];
          const first = shareStart(units, workers, index), end = shareStart(units, workers, index + 1);
          try {
            const argc = ctl[ARGC];
            for (let i = 0; i < argc; i++) args[i] = ctl[ARGS + i];
            const entry = kernels.get(ctl[KERNEL]);
            if (!entry) throw new Error(`kernel ${ctl[KERNEL]} is not loaded in helper ${index}`);
            if (first < end) callRange(entry, args, argc, first, end);
          } catch (e) {
            // the first failure of a run tells; the caller reads it once all are done
            if (Atomics.compareExchange(ctl, FAILED, 0, index) === 0) writeError(ctl, e instanceof Error ? e.message : String(e));
          }
        }
        // every helper acknowledges every run, those with no share too: the caller then knows all have read it
        if (Atomics.sub(ctl, PENDING, 1) === 1) Atomics.notify(ctl, PENDING);
      } else if (command === YIELD) {
        return; // the message handler comes back here once it has taken the new kernels
      } else if (command === PARK) {
        if (Atomics.sub(ctl, PENDING, 1) === 1) Atomics.notify(ctl, PENDING);
      } else if (command === STOP) {
        stopped = true;
        port.close();
        return;
      }
    }
  };

  port.listen((message) => {
    if (stopped) return;
    switch (message.type) {
      case "init":
        ({ index, spin } = message);
        control = new Int32Array(message.control);
        seen = Atomics.load(control, SEQ);
        port.post({ type: "ready", index });
        loop();
        return;
      case "load": {
        const ctl = control!;
        for (const id of message.drop) kernels.delete(id);
        try {
          const k = message.kernel;
          if (k) {
            const entry = new WebAssembly.Instance(k.module, { env: { memory: k.memory } }).exports[k.entry];
            if (typeof entry !== "function") throw new Error(`the kernel exports no function ${k.entry}`);
            kernels.set(k.id, entry);
          }
        } catch (e) {
          if (Atomics.compareExchange(ctl, FAILED, 0, index) === 0) writeError(ctl, e instanceof Error ? e.message : String(e));
        }
        Atomics.add(ctl, ACKS, 1);
        Atomics.notify(ctl, ACKS);
        loop();
        return;
      }
    }
  });
}
