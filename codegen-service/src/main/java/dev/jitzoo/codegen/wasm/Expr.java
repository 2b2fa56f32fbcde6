package dev.jitzoo.codegen.wasm;

import java.util.List;

/**
 * An expression of the Wasm expression IR: a tree whose post-order walk is the instruction
 * sequence that pushes its value. Records, so equal trees are equal objects (the load-to-variable
 * pass finds repeated loads that way).
 */
public sealed interface Expr {

    record I32Const(int value) implements Expr {
    }

    record F32Const(float value) implements Expr {
    }

    /** {@code v128.const} with four equal f32 lanes. */
    record F32x4Const(float lane) implements Expr {
    }

    record LocalGet(int local) implements Expr {
    }

    /** Stores {@code value} in a local and leaves it on the stack. */
    record LocalTee(int local, Expr value) implements Expr {
    }

    /** An instruction without immediates applied to its operands, first pushed first. */
    record Apply(Instruction op, List<Expr> args) implements Expr {

        public Apply {
            args = List.copyOf(args);
            if (args.size() != op.pops() || !op.pushes()) {
                throw new IllegalArgumentException(op + " takes " + op.pops() + " operand(s), got " + args.size());
            }
        }
    }

    /** {@code f32x4.extract_lane} (one operand) or {@code f32x4.replace_lane} (vector, then scalar). */
    record Lane(SimdOpcode op, int lane, List<Expr> args) implements Expr {

        public Lane {
            args = List.copyOf(args);
            if (lane < 0 || lane > 3) {
                throw new IllegalArgumentException("f32x4 lane must be 0..3, got " + lane);
            }
        }
    }

    /** A load from {@code address + arg.offset()}. */
    record Load(Instruction op, Expr address, MemArg arg) implements Expr {
    }
}
