// (f) Dynamic shapes through the gateway: a PlanRequest is answered by the space service's uKernel
// set and a plan for every extent; a request it cannot serve is refused with the reason and the
// connection goes on; too many requests end the connection.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { OpKind } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { GATEWAY, hello, planRequest, RawSession } from "./support.js";

describe.skipIf(!GATEWAY)("uKernel plans for a MatMul whose M varies", () => {
  it("answers a PlanRequest before Hello with the uKernel set and a plan covering every extent, then serves the session", async () => {
    const s = new RawSession();
    await s.send(planRequest(1, 256));
    const plan = await s.next("dynamicPlan");
    expect([plan.lo, plan.hi, plan.op?.shape]).toEqual([1, 256, [256, 768, 768]]);
    const rows = plan.kernels.map((k) => k.rows);
    expect(rows.length).toBeGreaterThan(0);
    expect(plan.plans.map((p) => p.extent)).toEqual(Array.from({ length: 256 }, (_, i) => i + 1));
    for (const p of plan.plans) {
      const covered = p.pieces.reduce((sum, piece) => sum + piece.rows * piece.count, 0);
      expect(p.pieces.every((piece) => rows.includes(piece.rows))).toBe(true);
      expect(covered).toBe(p.paddedExtent);
      expect(covered).toBeGreaterThanOrEqual(p.extent);
    }
    await s.send(hello(`e2e-plans-${randomUUID()}`, [rows[0], 768, 768]));
    expect((await s.next("welcome")).initial).toHaveLength(1);
    s.close();
  });

  it("refuses what it cannot plan with the reason, and the connection goes on", async () => {
    const s = new RawSession();
    await s.send(planRequest(0, 64));
    expect(await s.next("error")).toMatchObject({ code: ErrorCode.INVALID_PLAN_REQUEST, message: expect.stringMatching(/1 <= lo <= hi/) });
    await s.send(planRequest(1, 64, 768, 768, OpKind.SOFTMAX));
    expect(await s.next("error")).toMatchObject({ code: ErrorCode.INVALID_PLAN_REQUEST, message: expect.stringMatching(/MatMuls only/) });
    await s.send(planRequest(1, 64, 768, 768));
    expect((await s.next("dynamicPlan")).plans).toHaveLength(64);
    s.close();
  });

  it("welcomes other sessions while a plan over 1..4096 rows is composed: no client stalls the space", async () => {
    const planner = new RawSession();
    await planner.send(planRequest(1, 4096, 768, 768));
    const welcomed: number[] = [];
    let planned = 0;
    const plan = planner.next("dynamicPlan", 120_000).then((p) => { planned = performance.now(); return p; });
    const start = performance.now();
    await Promise.all(Array.from({ length: 8 }, async (_, i) => {
      const s = new RawSession();
      await s.send(hello(`e2e-plan-load-${randomUUID()}`, [64 + 8 * i, 256, 96]));
      await s.next("welcome");
      welcomed.push(performance.now());
      s.close();
    }));
    expect((await plan).plans).toHaveLength(4096);
    // the space composes the plan off its event loop: every Welcome (each needing the space's Compose) came first
    expect(Math.max(...welcomed)).toBeLessThan(planned);
    expect(welcomed.length).toBe(8);
    expect(start).toBeLessThan(planned);
    planner.close();
  });

  it("ends a connection that sends more PlanRequests than allowed with 1008", async () => {
    const s = new RawSession();
    for (let i = 0; i < 17; i++) await s.send(planRequest(1, 8, 16, 16));
    const closed = await s.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).toMatch(/PlanRequests/);
  });
});
