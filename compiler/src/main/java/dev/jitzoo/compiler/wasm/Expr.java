package dev.jitzoo.compiler.wasm;

import java.util.List;

/**
 * An expression of the Wasm expression IR: a tree whose post-order walk is the instruction
 * sequence that pushes its value. Records, so equal trees are equal objects (the load-to-variable
 * pass finds repeated loads that way). Walks dispatch through {@link Visitor}: a new node kind is
 * a compile error in every walk until it handles it.
 */
public sealed interface Expr {

    <R> R accept(Visitor<R> visitor);

    /** One method per node kind. */
    interface Visitor<R> {
        R i32Const(I32Const e);

        R f32Const(F32Const e);

        R f32x4Const(F32x4Const e);

        R localGet(LocalGet e);

        R localTee(LocalTee e);

        R apply(Apply e);

        R lane(Lane e);

        R load(Load e);
    }

    record I32Const(int value) implements Expr {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.i32Const(this);
        }
    }

    record F32Const(float value) implements Expr {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.f32Const(this);
        }
    }

    /** {@code v128.const} with four equal f32 lanes. */
    record F32x4Const(float lane) implements Expr {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.f32x4Const(this);
        }
    }

    record LocalGet(int local) implements Expr {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.localGet(this);
        }
    }

    /** Stores {@code value} in a local and leaves it on the stack. */
    record LocalTee(int local, Expr value) implements Expr {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.localTee(this);
        }
    }

    /** An instruction without immediates applied to its operands, first pushed first. */
    record Apply(Instruction op, List<Expr> args) implements Expr {

        public Apply {
            args = List.copyOf(args);
            if (args.size() != op.pops() || !op.pushes()) {
                throw new IllegalArgumentException(op + " takes " + op.pops() + " operand(s), got " + args.size());
            }
        }

        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.apply(this);
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

        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.lane(this);
        }
    }

    /** A load from {@code address + arg.offset()}. */
    record Load(Instruction op, Expr address, MemArg arg) implements Expr {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.load(this);
        }
    }
}
