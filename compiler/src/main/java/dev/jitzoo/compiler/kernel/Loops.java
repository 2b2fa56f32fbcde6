package dev.jitzoo.compiler.kernel;

import static dev.jitzoo.compiler.kernel.MatMulPlan.FLOAT_BYTES;
import static dev.jitzoo.compiler.kernel.MatMulPlan.LANES;

import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.Instruction;
import dev.jitzoo.compiler.wasm.MemArg;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;

/** Loop and pointer idioms every kernel uses, emitted through a {@link FunctionBuilder}. */
final class Loops {

    private Loops() {
    }

    /**
     * Emits {@code body} to run {@code trips} times, counting down in {@code counter}. A fixed count
     * of 0 emits nothing and 1 emits the body inline (so a body must not read the counter); a
     * run-time count of 0 skips the loop.
     */
    static void repeat(FunctionBuilder f, Trips trips, int counter, Runnable body) {
        if (trips instanceof Trips.Fixed fixed) {
            if (fixed.count() <= 0) {
                return;
            }
            if (fixed.count() == 1) {
                body.run();
                return;
            }
            f.i32Const(fixed.count()).localSet(counter);
            countDown(f, counter, body);
        } else if (trips instanceof Trips.InLocal inLocal) {
            f.block();
            f.localGet(inLocal.local()).localTee(counter).op(Opcode.I32_EQZ).brIf(0);
            countDown(f, counter, body);
            f.end();
        } else {
            throw new IllegalStateException("unknown trip count " + trips);
        }
    }

    /** A do-while on a counter known to be positive: the branch back is the only test per trip. */
    private static void countDown(FunctionBuilder f, int counter, Runnable body) {
        f.loop();
        body.run();
        f.localGet(counter).i32Const(1).op(Opcode.I32_SUB).localTee(counter).brIf(0);
        f.end();
    }

    /** {@code local += delta}; nothing for 0. */
    static void add(FunctionBuilder f, int local, int delta) {
        if (delta != 0) {
            f.localGet(local).i32Const(delta).op(Opcode.I32_ADD).localSet(local);
        }
    }

    /** {@code to = from + delta}. */
    static void copyPlus(FunctionBuilder f, int from, int delta, int to) {
        f.localGet(from);
        if (delta != 0) {
            f.i32Const(delta).op(Opcode.I32_ADD);
        }
        f.localSet(to);
    }

    /** Pushes {@code pointer + offset} (the pointer alone for 0). */
    static void address(FunctionBuilder f, int pointer, long offset) {
        f.localGet(pointer);
        offset(f, offset);
    }

    /** Adds a constant to the address on the stack (nothing for 0). */
    static void offset(FunctionBuilder f, long offset) {
        if (offset != 0) {
            f.i32Const(Math.toIntExact(offset)).op(Opcode.I32_ADD);
        }
    }

    /** Pushes the value {@code load} reads at {@code pointer + offset}. */
    static void load(FunctionBuilder f, int pointer, long offset, Instruction load, MemArg arg) {
        address(f, pointer, offset);
        f.memory(load, arg);
    }

    /**
     * {@code count} floats from {@code from} (each {@code stride} floats after the last) to
     * {@code to + at} floats: a v128 at a time where the stride is 1, then single floats.
     */
    static void copyFloats(FunctionBuilder f, int from, int stride, int to, int at, int count) {
        int t = 0;
        if (stride == 1) {
            for (; t + LANES <= count; t += LANES) {
                address(f, to, (long) (at + t) * FLOAT_BYTES);
                load(f, from, (long) t * FLOAT_BYTES, SimdOpcode.V128_LOAD, MemArg.floatAt(0));
                f.memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
            }
        }
        for (; t < count; t++) {
            address(f, to, (long) (at + t) * FLOAT_BYTES);
            load(f, from, (long) t * stride * FLOAT_BYTES, Opcode.F32_LOAD, MemArg.floatAt(0));
            f.memory(Opcode.F32_STORE, MemArg.floatAt(0));
        }
    }

    /** {@code count} zeros at {@code to + at} floats: a v128 at a time, then single floats. */
    static void zeroFloats(FunctionBuilder f, int to, int at, int count) {
        int t = 0;
        for (; t + LANES <= count; t += LANES) {
            address(f, to, (long) (at + t) * FLOAT_BYTES);
            f.f32x4Const(0f).memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
        }
        for (; t < count; t++) {
            address(f, to, (long) (at + t) * FLOAT_BYTES);
            f.f32Const(0f).memory(Opcode.F32_STORE, MemArg.floatAt(0));
        }
    }

    static void set(FunctionBuilder f, int local, int value) {
        f.i32Const(value).localSet(local);
    }

    /** {@code to = min(limit, local)} for non-negative values. */
    static void minOf(FunctionBuilder f, int limit, int local, int to) {
        // select keeps its first operand when the condition is true: limit if limit < local
        f.i32Const(limit).localGet(local).i32Const(limit).localGet(local).op(Opcode.I32_LT_U)
                .op(Opcode.SELECT).localSet(to);
    }
}
