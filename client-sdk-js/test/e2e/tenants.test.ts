// Tenants through the suite: a key made with `./jitzoo tenant create` opens sessions from its
// tenant's page origins; a wrong key, and the right key from another page, are refused with their
// Error frame and close code, through the SDK's client as through a raw connection.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/client.js";
import { GatewayError } from "../../src/errors.js";
import { ErrorCode } from "../../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, OpKind } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { GATEWAY, hello, RawSession, ROOT } from "./support.js";

const SITE = "https://app.e2e.example";

/** `./jitzoo tenant ARGS --json`, parsed (run aside: a first call may build the CLI). */
async function tenant(...args: string[]): Promise<unknown> {
  const { stdout } = await promisify(execFile)(join(ROOT, "jitzoo"), ["tenant", ...args, "--json"], { encoding: "utf8", timeout: 600_000 });
  return JSON.parse(stdout);
}

describe.skipIf(!GATEWAY)("tenants", () => {
  it("a key works from its tenant's origins only, and a wrong key not at all", async () => {
    const name = `e2e-${randomUUID().slice(0, 8)}`;
    const made = await tenant("create", name, "--origin", SITE, "--sessions-per-minute", "50") as Record<string, unknown>;
    expect(made).toMatchObject({ tenant: name, origins: [SITE], sessions_per_minute: 50, reports_per_minute: 20000 });
    const key = made.api_key as string;
    expect(key).toMatch(/^jz_[A-Za-z0-9_-]{32}$/);
    const listed = await tenant("list") as { tenant: string; keys: { prefix: string }[] }[];
    expect(listed.find((t) => t.tenant === name)?.keys.map((k) => k.prefix)).toEqual([key.slice(0, 7)]);

    const served = new RawSession(`${GATEWAY}?key=${key}`, { Origin: SITE });
    await served.send(hello(`tenant-${randomUUID()}`, [4, 4, 4]));
    expect((await served.next("welcome")).sessionId).not.toBe("");
    served.close();

    const foreign = new RawSession(`${GATEWAY}?key=${key}`, { Origin: "https://elsewhere.example" });
    expect(await foreign.next("error")).toMatchObject({ code: ErrorCode.FORBIDDEN_ORIGIN });
    expect((await foreign.closed).code).toBe(1008);

    const client = createClient(GATEWAY!, { apiKey: `jz_${"x".repeat(32)}` });
    const closed = client.once("close");
    const answer = client.next("welcome").catch((e) => e);
    client.send({ frame: { case: "hello", value: { protocolVersion: 1, backend: Backend.WASM, credits: 1, device: { fingerprint: "e2e-tenants" },
      ops: [{ kind: OpKind.MATMUL, shape: [4, 4, 4] }] } } });
    const refused = await answer;
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ gatewayCode: ErrorCode.UNAUTHORIZED });
    expect((await closed).closeCode).toBe(1008);

    const removed = await tenant("remove", name);
    expect(removed).toMatchObject({ tenant: name, removed: true });
  });
});
