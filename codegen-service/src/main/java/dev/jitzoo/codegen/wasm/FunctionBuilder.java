package dev.jitzoo.codegen.wasm;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds one function body: declares locals and appends instructions. Memory accesses take a
 * constant byte offset (the memarg offset), so address arithmetic stays out of inner loops.
 */
public final class FunctionBuilder {

    /** Alignment hint (log2 bytes) for every access: 4-byte aligned, which float operands always are. */
    private static final int ALIGN_4 = 2;

    private final int paramCount;
    private final List<ValType> locals = new ArrayList<>();
    private final ByteWriter code = new ByteWriter();

    public FunctionBuilder(int paramCount) {
        this.paramCount = paramCount;
    }

    /** Declares a local and returns its index. */
    public int local(ValType type) {
        locals.add(type);
        return paramCount + locals.size() - 1;
    }

    public FunctionBuilder op(Opcode opcode) {
        code.u8(opcode.code);
        return this;
    }

    public FunctionBuilder simd(SimdOpcode opcode) {
        code.u8(Opcode.SIMD_PREFIX.code).varU32(opcode.code);
        return this;
    }

    public FunctionBuilder get(int local) {
        op(Opcode.LOCAL_GET).code.varU32(local);
        return this;
    }

    public FunctionBuilder set(int local) {
        op(Opcode.LOCAL_SET).code.varU32(local);
        return this;
    }

    public FunctionBuilder i32(int value) {
        op(Opcode.I32_CONST).code.varS32(value);
        return this;
    }

    public FunctionBuilder f32(float value) {
        op(Opcode.F32_CONST).code.f32(value);
        return this;
    }

    /** v128.const of four zero floats. */
    public FunctionBuilder v128Zero() {
        simd(SimdOpcode.V128_CONST);
        for (int i = 0; i < 16; i++) {
            code.u8(0);
        }
        return this;
    }

    /** {@code local += delta}, for pointer locals. */
    public FunctionBuilder addTo(int local, int delta) {
        if (delta != 0) {
            get(local).i32(delta).op(Opcode.I32_ADD).set(local);
        }
        return this;
    }

    public FunctionBuilder memory(Opcode opcode, int offset) {
        op(opcode).code.varU32(ALIGN_4).varU32(offset);
        return this;
    }

    public FunctionBuilder memory(SimdOpcode opcode, int offset) {
        simd(opcode).code.varU32(ALIGN_4).varU32(offset);
        return this;
    }

    /**
     * A loop that runs {@code trips} times (a constant: shapes are baked in). The counter lives in
     * {@code counter}; {@code body} emits one iteration. Nothing is emitted for zero trips.
     */
    public FunctionBuilder repeat(int trips, int counter, Runnable body) {
        if (trips <= 0) {
            return this;
        }
        if (trips == 1) {
            body.run();
            return this;
        }
        i32(trips).set(counter);
        op(Opcode.LOOP).code.u8(0x40);
        body.run();
        get(counter).i32(1).op(Opcode.I32_SUB).op(Opcode.LOCAL_TEE).code.varU32(counter);
        op(Opcode.BR_IF).code.varU32(0);
        op(Opcode.END);
        return this;
    }

    /** The encoded body: local declarations (run-length grouped), code, end. */
    public ByteWriter encode() {
        ByteWriter body = new ByteWriter();
        List<int[]> groups = new ArrayList<>();
        for (ValType type : locals) {
            if (!groups.isEmpty() && groups.get(groups.size() - 1)[1] == type.code) {
                groups.get(groups.size() - 1)[0]++;
            } else {
                groups.add(new int[] {1, type.code});
            }
        }
        body.varU32(groups.size());
        for (int[] group : groups) {
            body.varU32(group[0]).u8(group[1]);
        }
        body.bytes(code.toByteArray());
        body.u8(Opcode.END.code);
        return body;
    }
}
