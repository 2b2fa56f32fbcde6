// Recorded WGSL sessions, for the WebGPU bench on a machine without the suite (a GPU lent where no
// Java, Kafka or MongoDB runs): `record` asks a running gateway, for a given adapter profile, for
// every op's Welcome kernel and every offer of its session; `serveRecording` is an in-process
// gateway that answers a Hello for those ops with them, credit by credit, and acknowledges reports
// (stored nowhere). The kernels are the suite's own; only the zoo and the network are left out.
import { create, fromBinary, fromJson, toBinary, toJson, type JsonValue } from "@bufbuild/protobuf";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { createClient, ClientFrameSchema, ErrorCode, ProtocolVersion, ServerFrameSchema, SessionLimit, type KernelOffer, Backend, DeviceProfileSchema, KernelArtifactSchema, OpSpecSchema, type DeviceProfile, type KernelArtifact, type OpSpec, opKey } from "@jitzoo/client/internal";


/** What `record` writes: per op, its Welcome kernel and its offers, in order (artifacts as protobuf JSON). */
export interface Recording {
  format: 1;
  device: JsonValue;
  ops: { op: JsonValue; initial: JsonValue; offers: JsonValue[] }[];
}

/** Records the WGSL sessions of `ops` for `device` from the gateway at `url`. */
export async function record(url: string, device: DeviceProfile, ops: readonly OpSpec[], log: (line: string) => void): Promise<Recording> {
  const recorded: Recording = { format: 1, device: toJson(DeviceProfileSchema, device), ops: [] };
  for (let i = 0; i < ops.length; i += SessionLimit.OPS_PER_HELLO) {
    const group = ops.slice(i, i + SessionLimit.OPS_PER_HELLO);
    const client = createClient(url);
    const offers = new Map<string, KernelOffer[]>(group.map((op) => [opKey(op), []]));
    client.on("offer", (o) => offers.get(opKey(o.artifact!.ref!.op!))?.push(o));
    const done = client.next("offersDone");
    await client.ready();
    const welcomed = client.next("welcome");
    client.send({ frame: { case: "hello", value: { protocolVersion: ProtocolVersion.CURRENT, device, backend: Backend.WGSL, ops: [...group], credits: 100_000 } } });
    const welcome = await welcomed;
    await done;
    client.close();
    group.forEach((op, j) => {
      const list = offers.get(opKey(op))!;
      log(`  ${opKey(op)}: the Welcome's kernel and ${list.length} offers`);
      recorded.ops.push({
        op: toJson(OpSpecSchema, op), initial: toJson(KernelArtifactSchema, welcome.initial[j].artifact!),
        offers: list.map((o) => toJson(KernelArtifactSchema, o.artifact!)),
      });
    });
  }
  return recorded;
}

/** An in-process gateway serving a recording; `url` is its session endpoint. */
export async function serveRecording(recording: Recording): Promise<{ url: string; close: () => Promise<void> }> {
  if (recording.format !== 1) throw new Error(`a recording of format ${String(recording.format)}: only 1 is read`);
  const byOp = new Map(recording.ops.map((r) => [opKey(fromJson(OpSpecSchema, r.op)), {
    initial: fromJson(KernelArtifactSchema, r.initial), offers: r.offers.map((a) => fromJson(KernelArtifactSchema, a)),
  }]));
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  let sessions = 0;
  server.on("connection", (socket) => {
    const send = (frame: Parameters<typeof create<typeof ServerFrameSchema>>[1]) => socket.send(toBinary(ServerFrameSchema, create(ServerFrameSchema, frame)));
    let queue: KernelArtifact[] = [];
    let credits = 0;
    const pump = () => {
      for (; credits > 0 && queue.length; credits--) send({ frame: { case: "offer", value: { artifact: queue.shift()!, rank: 0, fromZoo: false } } });
      if (!queue.length) send({ frame: { case: "offersDone", value: {} } });
    };
    socket.on("message", (data) => {
      const f = fromBinary(ClientFrameSchema, new Uint8Array(data as Buffer)).frame;
      if (f.case === "hello") {
        const known = f.value.ops.map((op) => byOp.get(opKey(op)));
        const missing = f.value.ops.filter((_, i) => !known[i]).map(opKey);
        if (missing.length) {
          send({ frame: { case: "error", value: { code: ErrorCode.INVALID_HELLO, message: `not in the recording: ${missing.join(", ")}` } } });
          socket.close(1008, "ops not recorded");
          return;
        }
        send({ frame: { case: "welcome", value: { sessionId: `replay-${++sessions}`, initial: known.map((k) => ({ artifact: k!.initial, fromZoo: false })) } } });
        // round-robin over the ops, as the gateway offers them
        const lists = known.map((k) => [...k!.offers]);
        queue = [];
        for (let r = 0; lists.some((l) => l.length > r); r++) for (const l of lists) if (l[r]) queue.push(l[r]);
        credits = f.value.credits;
        pump();
      } else if (f.case === "credit") {
        credits += f.value.credits;
        if (queue.length) pump();
      } else if (f.case === "report") {
        send({ frame: { case: "reportAck", value: { op: f.value.op } } });
      }
    });
  });
  const port = (server.address() as AddressInfo).port;
  return { url: `ws://127.0.0.1:${port}/v1/session`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
