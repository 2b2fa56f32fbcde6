package dev.jitzoo.compiler.wasm;

import java.util.List;

/**
 * A statement of the Wasm expression IR: leaves the stack as it found it. Walks dispatch through
 * {@link Visitor}: a new statement kind is a compile error in every walk until it handles it.
 */
public sealed interface Stmt {

    <R> R accept(Visitor<R> visitor);

    /** One method per statement kind. */
    interface Visitor<R> {
        R localSet(LocalSet s);

        R store(Store s);

        R drop(Drop s);

        R block(Block s);

        R loop(Loop s);

        R ifElse(If s);

        R branch(Branch s);
    }

    record LocalSet(int local, Expr value) implements Stmt {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.localSet(this);
        }
    }

    /** A store of {@code value} to {@code address + arg.offset()}. */
    record Store(Instruction op, Expr address, Expr value, MemArg arg) implements Stmt {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.store(this);
        }
    }

    record Drop(Expr value) implements Stmt {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.drop(this);
        }
    }

    /** {@code block}: a branch to it leaves it. */
    record Block(List<Stmt> body) implements Stmt {
        public Block {
            body = List.copyOf(body);
        }

        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.block(this);
        }
    }

    /** {@code loop}: a branch to it starts it again. */
    record Loop(List<Stmt> body) implements Stmt {
        public Loop {
            body = List.copyOf(body);
        }

        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.loop(this);
        }
    }

    record If(Expr condition, List<Stmt> then, List<Stmt> otherwise) implements Stmt {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.ifElse(this);
        }
    }

    /** {@code br} ({@code condition} null) or {@code br_if} to the construct {@code depth} levels out. */
    record Branch(int depth, Expr condition) implements Stmt {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.branch(this);
        }
    }
}
