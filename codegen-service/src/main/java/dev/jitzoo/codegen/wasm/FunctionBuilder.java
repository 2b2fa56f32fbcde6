package dev.jitzoo.codegen.wasm;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds one function body: declares locals and appends instructions, checking what can be checked
 * cheaply while emitting (balanced control structures, branch depths, local indices, which opcodes
 * take which immediates). Operand-stack types are left to the engine's validator, which the tests run.
 */
public final class FunctionBuilder {

    /** Block type of structured instructions that take and leave nothing on the stack. */
    private static final int EMPTY_BLOCK = 0x40;

    private final FuncType type;
    private final List<ValType> locals = new ArrayList<>();
    private final ByteWriter code = new ByteWriter();
    /** Open block, loop and if constructs; an {@code else} is legal only when the innermost is an if. */
    private final List<Opcode> open = new ArrayList<>();

    public FunctionBuilder(FuncType type) {
        this.type = type;
    }

    public FuncType type() {
        return type;
    }

    /** Declares a local and returns its index (parameters come first). */
    public int local(ValType valType) {
        locals.add(valType);
        return type.params().size() + locals.size() - 1;
    }

    // ---- structured control ----

    public FunctionBuilder block() {
        return open(Opcode.BLOCK);
    }

    public FunctionBuilder loop() {
        return open(Opcode.LOOP);
    }

    /** {@code if} on the i32 on top of the stack. */
    public FunctionBuilder ifThen() {
        return open(Opcode.IF);
    }

    public FunctionBuilder elseBranch() {
        if (open.isEmpty() || open.get(open.size() - 1) != Opcode.IF) {
            throw new IllegalStateException("else outside an if");
        }
        code.u8(Opcode.ELSE.code);
        return this;
    }

    public FunctionBuilder end() {
        if (open.isEmpty()) {
            throw new IllegalStateException("end without an open block, loop or if");
        }
        open.remove(open.size() - 1);
        code.u8(Opcode.END.code);
        return this;
    }

    /** Branch to the construct {@code depth} levels out (0: innermost; a loop's label is its start). */
    public FunctionBuilder br(int depth) {
        return branch(Opcode.BR, depth);
    }

    public FunctionBuilder brIf(int depth) {
        return branch(Opcode.BR_IF, depth);
    }

    // ---- locals and constants ----

    public FunctionBuilder localGet(int local) {
        return withIndex(Opcode.LOCAL_GET, local);
    }

    public FunctionBuilder localSet(int local) {
        return withIndex(Opcode.LOCAL_SET, local);
    }

    public FunctionBuilder localTee(int local) {
        return withIndex(Opcode.LOCAL_TEE, local);
    }

    public FunctionBuilder i32Const(int value) {
        code.u8(Opcode.I32_CONST.code).varS32(value);
        return this;
    }

    public FunctionBuilder f32Const(float value) {
        code.u8(Opcode.F32_CONST.code).f32(value);
        return this;
    }

    /** {@code v128.const} with four equal float lanes. */
    public FunctionBuilder f32x4Const(float lane) {
        simdPrefix(SimdOpcode.V128_CONST);
        for (int i = 0; i < 4; i++) {
            code.f32(lane);
        }
        return this;
    }

    // ---- plain instructions (no immediates) ----

    public FunctionBuilder op(Opcode opcode) {
        if (opcode.accessesMemory() || hasImmediates(opcode)) {
            throw new IllegalArgumentException(opcode + " takes immediates; use its own method");
        }
        code.u8(opcode.code);
        return this;
    }

    public FunctionBuilder simd(SimdOpcode opcode) {
        if (opcode.accessesMemory() || opcode == SimdOpcode.V128_CONST
                || opcode == SimdOpcode.F32X4_EXTRACT_LANE || opcode == SimdOpcode.F32X4_REPLACE_LANE) {
            throw new IllegalArgumentException(opcode + " takes immediates; use its own method");
        }
        simdPrefix(opcode);
        return this;
    }

    public FunctionBuilder f32x4ExtractLane(int lane) {
        checkLane(lane);
        simdPrefix(SimdOpcode.F32X4_EXTRACT_LANE);
        code.u8(lane);
        return this;
    }

    public FunctionBuilder f32x4ReplaceLane(int lane) {
        checkLane(lane);
        simdPrefix(SimdOpcode.F32X4_REPLACE_LANE);
        code.u8(lane);
        return this;
    }

    // ---- memory ----

    /** A core load or store; the address operand (and the value, for stores) are on the stack. */
    public FunctionBuilder memory(Opcode opcode, MemArg arg) {
        if (!opcode.accessesMemory()) {
            throw new IllegalArgumentException(opcode + " does not access memory");
        }
        checkAlignment(arg, opcode.naturalAlignment, opcode);
        code.u8(opcode.code);
        return memArg(arg);
    }

    public FunctionBuilder memory(SimdOpcode opcode, MemArg arg) {
        if (!opcode.accessesMemory()) {
            throw new IllegalArgumentException(opcode + " does not access memory");
        }
        checkAlignment(arg, opcode.naturalAlignment, opcode);
        simdPrefix(opcode);
        return memArg(arg);
    }

    /** Bytes of code emitted so far (without local declarations). */
    public int codeSize() {
        return code.size();
    }

    /** The encoded body: local declarations (runs of one type grouped), the code, the final end. */
    public ByteWriter encode() {
        if (!open.isEmpty()) {
            throw new IllegalStateException(open.size() + " block(s) left open: " + open);
        }
        ByteWriter body = new ByteWriter();
        List<int[]> runs = new ArrayList<>();
        for (ValType local : locals) {
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
        body.bytes(code.toByteArray());
        body.u8(Opcode.END.code);
        return body;
    }

    private FunctionBuilder open(Opcode construct) {
        open.add(construct);
        code.u8(construct.code).u8(EMPTY_BLOCK);
        return this;
    }

    private FunctionBuilder branch(Opcode opcode, int depth) {
        if (depth < 0 || depth >= open.size()) {
            throw new IllegalArgumentException(opcode + " " + depth + " with " + open.size() + " open construct(s)");
        }
        code.u8(opcode.code).varU32(depth);
        return this;
    }

    private FunctionBuilder withIndex(Opcode opcode, int local) {
        checkLocal(local);
        code.u8(opcode.code).varU32(local);
        return this;
    }

    private FunctionBuilder memArg(MemArg arg) {
        code.varU32(arg.alignLog2()).varU32(arg.offset());
        return this;
    }

    private void simdPrefix(SimdOpcode opcode) {
        code.u8(SimdOpcode.PREFIX).varU32(opcode.code);
    }

    private void checkLocal(int local) {
        if (local < 0 || local >= type.params().size() + locals.size()) {
            throw new IllegalArgumentException("no local " + local);
        }
    }

    private static void checkLane(int lane) {
        if (lane < 0 || lane > 3) {
            throw new IllegalArgumentException("f32x4 lane must be 0..3, got " + lane);
        }
    }

    private static void checkAlignment(MemArg arg, int natural, Enum<?> opcode) {
        if (arg.alignLog2() > natural) {
            throw new IllegalArgumentException("alignment 2^" + arg.alignLog2() + " exceeds the natural alignment of " + opcode);
        }
    }

    private static boolean hasImmediates(Opcode opcode) {
        return switch (opcode) {
            case BLOCK, LOOP, IF, ELSE, END, BR, BR_IF, LOCAL_GET, LOCAL_SET, LOCAL_TEE, I32_CONST, F32_CONST -> true;
            default -> false;
        };
    }
}
