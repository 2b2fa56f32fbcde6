import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../src/client.js";
import { ConnectError, ConnectionClosed, GatewayError } from "../src/errors.js";
import { ErrorCode } from "../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, OpKind } from "../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { FakeGateway } from "./support/fake-gateway.js";
import { naiveMatmulArtifact } from "./support/wasm.js";

const OP = { kind: OpKind.MATMUL, shape: [2, 2, 2] };
const hello = (fingerprint: string) => ({
  frame: { case: "hello" as const, value: { protocolVersion: 1, backend: Backend.WASM, credits: 1, device: { fingerprint }, ops: [OP] } },
});

let gateway: FakeGateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
});

async function start(): Promise<FakeGateway> {
  gateway = await FakeGateway.start({
    initial: () => ({ artifact: naiveMatmulArtifact("kinit", [2, 2, 2]), fromZoo: false }),
    offers: [naiveMatmulArtifact("k1", [2, 2, 2]), naiveMatmulArtifact("k2", [2, 2, 2])],
  });
  return gateway;
}

describe("createClient", () => {
  it("connects lazily, and ready() resolves again at once", async () => {
    const g = await start();
    const client = createClient(g.url);
    expect(client.state).toBe("idle");
    await client.ready();
    expect(client.state).toBe("open");
    await client.ready();
    client.close();
    expect((await client.once("close")).closeCode).toBe(1000);
    expect(client.state).toBe("closed");
  });

  it("delivers frames as events; on() returns a cancel function", async () => {
    const g = await start();
    const client = createClient(g.url);
    const offers: string[] = [];
    const cancel = client.on("offer", (o) => offers.push(o.artifact!.ref!.kernelId));
    const welcomed = client.next("welcome");
    const offered = client.once("offer"); // the offer may arrive in the same tick as the Welcome
    client.send(hello("fp"));
    const welcome = await welcomed;
    expect(welcome.initial[0].artifact?.ref?.kernelId).toBe("kinit");
    await offered;
    expect(offers).toEqual(["k1"]);
    cancel();
    const done = client.once("offersDone");
    client.send({ frame: { case: "credit", value: { credits: 1 } } });
    expect((await done).offersSent).toBe(2);
    expect(offers).toEqual(["k1"]);
    client.close();
  });

  it("turns Error frames and the close that follows into Error objects", async () => {
    const g = await start();
    const client = createClient(g.url);
    const welcomed = client.next("welcome");
    const closed = client.once("close");
    client.send(hello(""));
    const error = await welcomed.catch((e) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: "gateway_refused", gatewayCode: ErrorCode.INVALID_HELLO, detail: "device.fingerprint is required" });
    expect(error.message).toContain("INVALID_HELLO");
    expect(await closed).toMatchObject({ closeCode: 1008, reason: "device.fingerprint is required" });
    await expect(client.once("welcome")).rejects.toBeInstanceOf(ConnectionClosed);
    expect(() => client.send(hello("fp"))).toThrow(ConnectionClosed);
  });

  it("tells a gateway's Goaway before the close that follows it", async () => {
    const g = await start();
    const client = createClient(g.url);
    await client.ready();
    const goaway = client.once("goaway");
    const closed = client.once("close");
    g.drain("gateway shutting down: resume the session on another");
    expect((await goaway).reason).toBe("gateway shutting down: resume the session on another");
    expect((await closed).closeCode).toBe(1001);
  });

  it("sends the API key as the URL's key parameter, and names the address without it", async () => {
    const g = await start();
    const client = createClient(`${g.url}?key=old`, { apiKey: "jz_secret+/=" });
    await client.ready();
    expect(g.requested).toEqual(["/v1/session?key=jz_secret%2B%2F%3D"]);
    client.close();
    const unreachable = createClient("ws://127.0.0.1:1/v1/session", { apiKey: "jz_secret" });
    const failure = await unreachable.ready().catch((e) => e);
    expect(failure.message).not.toContain("jz_secret");
  });

  it("says clearly when the gateway cannot be reached", async () => {
    const client = createClient("ws://127.0.0.1:1/v1/session");
    const failure = await client.ready().catch((e) => e);
    expect(failure).toBeInstanceOf(ConnectError);
    expect(failure.message).toContain("cannot connect to ws://127.0.0.1:1/v1/session");
  });
});
