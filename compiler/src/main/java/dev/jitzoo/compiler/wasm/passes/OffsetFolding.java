package dev.jitzoo.compiler.wasm.passes;

import dev.jitzoo.compiler.wasm.Expr;
import dev.jitzoo.compiler.wasm.MemArg;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.Stmt;

/**
 * Offset load/store: {@code load(p + c)} with a constant {@code c >= 0} becomes {@code load(p)} with
 * {@code c} added to the memarg offset, saving the constant and the add on every access. (Wasm adds
 * the offset without wrapping, so this is exact for every address inside memory.)
 */
final class OffsetFolding {

    private OffsetFolding() {
    }

    /** A load's fold; any other expression as it is. */
    static Expr expression(Expr expr) {
        if (expr instanceof Expr.Load load) {
            Folded f = fold(load.address(), load.arg());
            return f == null ? load : new Expr.Load(load.op(), f.base, f.arg);
        }
        return expr;
    }

    /** A store's fold; any other statement as it is. */
    static Stmt statement(Stmt stmt) {
        if (stmt instanceof Stmt.Store store) {
            Folded f = fold(store.address(), store.arg());
            return f == null ? store : new Stmt.Store(store.op(), f.base, store.value(), f.arg);
        }
        return stmt;
    }

    private record Folded(Expr base, MemArg arg) {
    }

    /** The address with every constant term moved into the offset, or null when there is none to move. */
    private static Folded fold(Expr address, MemArg arg) {
        Expr base = address;
        long offset = arg.offset();
        while (base instanceof Expr.Apply add && add.op() == Opcode.I32_ADD) {
            Expr left = add.args().get(0), right = add.args().get(1);
            if (right instanceof Expr.I32Const c && c.value() >= 0 && offset + c.value() <= 0xFFFF_FFFFL) {
                offset += c.value();
                base = left;
            } else if (left instanceof Expr.I32Const c && c.value() >= 0 && offset + c.value() <= 0xFFFF_FFFFL) {
                offset += c.value();
                base = right;
            } else {
                break;
            }
        }
        return base == address ? null : new Folded(base, new MemArg(arg.alignLog2(), offset));
    }
}
