package dev.jitzoo.compiler.wasm;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes a function of the expression IR as a code-section body: each expression in post order,
 * each statement after its operands. With {@code teeSetThenGet}, a {@code local.set x} directly
 * followed by {@code local.get x} is written as one {@code local.tee x} (the store-to-variable half
 * of the load/store-to-variable pass: the value stays on the stack instead of a round trip).
 */
final class BodyEncoder {

    /** Block type of structured instructions that take and leave nothing on the stack. */
    private static final int EMPTY_BLOCK = 0x40;
    private static final int NO_PENDING = -1;

    private final ByteWriter code = new ByteWriter();
    private final boolean teeSetThenGet;
    /** A local.set not yet written, held back to see whether a local.get of the same local follows. */
    private int pendingSet = NO_PENDING;

    private BodyEncoder(boolean teeSetThenGet) {
        this.teeSetThenGet = teeSetThenGet;
    }

    static ByteWriter encode(Function function, boolean teeSetThenGet) {
        BodyEncoder encoder = new BodyEncoder(teeSetThenGet);
        encoder.statements(function.body());
        encoder.flush();
        ByteWriter body = new ByteWriter();
        List<int[]> runs = new ArrayList<>();
        for (ValType local : function.locals()) {
            if (!runs.isEmpty() && runs.get(runs.size() - 1)[1] == local.code) {
                runs.get(runs.size() - 1)[0]++;
            } else {
                runs.add(new int[] {1, local.code});
            }
        }
        body.varU32(runs.size());
        for (int[] run : runs) {
            body.varU32(run[0]).u8(run[1]);
        }
        body.bytes(encoder.code.toByteArray());
        body.u8(Opcode.END.code);
        return body;
    }

    private void statements(List<Stmt> statements) {
        for (Stmt statement : statements) {
            statement.accept(statementVisitor);
        }
    }

    private void expression(Expr expr) {
        expr.accept(expressionVisitor);
    }

    /** Each statement after its operands. */
    private final Stmt.Visitor<Void> statementVisitor = new Stmt.Visitor<>() {
        @Override
        public Void localSet(Stmt.LocalSet set) {
            expression(set.value());
            flush();
            if (teeSetThenGet) {
                pendingSet = set.local();
            } else {
                code.u8(Opcode.LOCAL_SET.code).varU32(set.local());
            }
            return null;
        }

        @Override
        public Void store(Stmt.Store store) {
            expression(store.address());
            expression(store.value());
            memory(store.op(), store.arg());
            return null;
        }

        @Override
        public Void drop(Stmt.Drop drop) {
            expression(drop.value());
            plain(Opcode.DROP);
            return null;
        }

        @Override
        public Void block(Stmt.Block block) {
            structured(Opcode.BLOCK, block.body());
            return null;
        }

        @Override
        public Void loop(Stmt.Loop loop) {
            structured(Opcode.LOOP, loop.body());
            return null;
        }

        @Override
        public Void ifElse(Stmt.If branch) {
            expression(branch.condition());
            flush();
            code.u8(Opcode.IF.code).u8(EMPTY_BLOCK);
            statements(branch.then());
            if (!branch.otherwise().isEmpty()) {
                flush();
                code.u8(Opcode.ELSE.code);
                statements(branch.otherwise());
            }
            end();
            return null;
        }

        @Override
        public Void branch(Stmt.Branch branch) {
            if (branch.condition() != null) {
                expression(branch.condition());
            }
            flush();
            code.u8(branch.condition() == null ? Opcode.BR.code : Opcode.BR_IF.code).varU32(branch.depth());
            return null;
        }
    };

    /** Each expression in post order. */
    private final Expr.Visitor<Void> expressionVisitor = new Expr.Visitor<>() {
        @Override
        public Void i32Const(Expr.I32Const c) {
            flush();
            code.u8(Opcode.I32_CONST.code).varS32(c.value());
            return null;
        }

        @Override
        public Void f32Const(Expr.F32Const c) {
            flush();
            code.u8(Opcode.F32_CONST.code).f32(c.value());
            return null;
        }

        @Override
        public Void f32x4Const(Expr.F32x4Const c) {
            flush();
            SimdOpcode.V128_CONST.writeOpcode(code);
            for (int i = 0; i < 4; i++) {
                code.f32(c.lane());
            }
            return null;
        }

        @Override
        public Void localGet(Expr.LocalGet get) {
            if (pendingSet == get.local()) {
                code.u8(Opcode.LOCAL_TEE.code).varU32(get.local());
                pendingSet = NO_PENDING;
            } else {
                flush();
                code.u8(Opcode.LOCAL_GET.code).varU32(get.local());
            }
            return null;
        }

        @Override
        public Void localTee(Expr.LocalTee tee) {
            expression(tee.value());
            flush();
            code.u8(Opcode.LOCAL_TEE.code).varU32(tee.local());
            return null;
        }

        @Override
        public Void apply(Expr.Apply apply) {
            apply.args().forEach(BodyEncoder.this::expression);
            plain(apply.op());
            return null;
        }

        @Override
        public Void lane(Expr.Lane lane) {
            lane.args().forEach(BodyEncoder.this::expression);
            flush();
            lane.op().writeOpcode(code);
            code.u8(lane.lane());
            return null;
        }

        @Override
        public Void load(Expr.Load load) {
            expression(load.address());
            memory(load.op(), load.arg());
            return null;
        }
    };

    private void structured(Opcode opener, List<Stmt> body) {
        flush();
        code.u8(opener.code).u8(EMPTY_BLOCK);
        statements(body);
        end();
    }

    private void plain(Instruction op) {
        flush();
        op.writeOpcode(code);
    }

    private void memory(Instruction op, MemArg arg) {
        flush();
        op.writeOpcode(code);
        code.varU32(arg.alignLog2()).varU32(arg.offset());
    }

    private void end() {
        flush();
        code.u8(Opcode.END.code);
    }

    private void flush() {
        if (pendingSet != NO_PENDING) {
            code.u8(Opcode.LOCAL_SET.code).varU32(pendingSet);
            pendingSet = NO_PENDING;
        }
    }
}
