package dev.jitzoo.codegen.wasm;

import java.util.List;

/** A statement of the Wasm expression IR: leaves the stack as it found it. */
public sealed interface Stmt {

    record LocalSet(int local, Expr value) implements Stmt {
    }

    /** A store of {@code value} to {@code address + arg.offset()}. */
    record Store(Instruction op, Expr address, Expr value, MemArg arg) implements Stmt {
    }

    record Drop(Expr value) implements Stmt {
    }

    /** {@code block} (a branch to it leaves it) or {@code loop} (a branch to it starts it again). */
    record Block(boolean loop, List<Stmt> body) implements Stmt {
    }

    record If(Expr condition, List<Stmt> then, List<Stmt> otherwise) implements Stmt {
    }

    /** {@code br} ({@code condition} null) or {@code br_if} to the construct {@code depth} levels out. */
    record Branch(int depth, Expr condition) implements Stmt {
    }
}
