package dev.jitzoo.compiler.wasm.passes;

import dev.jitzoo.compiler.wasm.Expr;
import dev.jitzoo.compiler.wasm.Stmt;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Bottom-up rewriting of expression trees, the shape of the local passes. A node is rebuilt only
 * when one of its children changed, so a pass that changes little allocates little (generation
 * runs in microseconds: the passes are most of it).
 */
final class Trees {

    private Trees() {
    }

    /**
     * Rewrites every expression of {@code body}, children before parents, then every statement
     * (after its expressions and nested bodies) with {@code statements}. Returns {@code body}
     * itself when nothing changed.
     */
    static List<Stmt> rewrite(List<Stmt> body, UnaryOperator<Expr> expressions, UnaryOperator<Stmt> statements) {
        return new Statements(new BottomUp(expressions), statements).all(body);
    }

    /** Rewrites an expression's children, then the expression itself, with {@code f}. */
    static Expr rewrite(Expr expr, UnaryOperator<Expr> f) {
        return new BottomUp(f).child(expr);
    }

    /** {@code f} applied to each element; the list itself when no element changed. */
    static <T> List<T> map(List<T> list, UnaryOperator<T> f) {
        List<T> out = null;
        for (int i = 0; i < list.size(); i++) {
            T element = list.get(i);
            T rewritten = f.apply(element);
            if (rewritten != element && out == null) {
                out = new ArrayList<>(list);
            }
            if (out != null) {
                out.set(i, rewritten);
            }
        }
        return out == null ? list : out;
    }

    /**
     * A rewrite of expressions: leaves (constants, local.get) stay as they are; a node with children
     * is rebuilt from the rewrites of its children ({@link #child}) when one of them changed. A new
     * leaf kind is a compile error here, a new inner kind here too.
     */
    abstract static class Rebuild implements Expr.Visitor<Expr> {

        /** The rewrite of one child. */
        abstract Expr child(Expr e);

        @Override
        public Expr i32Const(Expr.I32Const e) {
            return e;
        }

        @Override
        public Expr f32Const(Expr.F32Const e) {
            return e;
        }

        @Override
        public Expr f32x4Const(Expr.F32x4Const e) {
            return e;
        }

        @Override
        public Expr localGet(Expr.LocalGet e) {
            return e;
        }

        @Override
        public Expr localTee(Expr.LocalTee tee) {
            Expr value = child(tee.value());
            return value == tee.value() ? tee : new Expr.LocalTee(tee.local(), value);
        }

        @Override
        public Expr apply(Expr.Apply apply) {
            List<Expr> args = map(apply.args(), this::child);
            return args == apply.args() ? apply : new Expr.Apply(apply.op(), args);
        }

        @Override
        public Expr lane(Expr.Lane lane) {
            List<Expr> args = map(lane.args(), this::child);
            return args == lane.args() ? lane : new Expr.Lane(lane.op(), lane.lane(), args);
        }

        @Override
        public Expr load(Expr.Load load) {
            Expr address = child(load.address());
            return address == load.address() ? load : new Expr.Load(load.op(), address, load.arg());
        }
    }

    /** Children first, then {@code f} on the node they make. */
    private static final class BottomUp extends Rebuild {
        private final UnaryOperator<Expr> f;

        BottomUp(UnaryOperator<Expr> f) {
            this.f = f;
        }

        @Override
        Expr child(Expr e) {
            return f.apply(e.accept(this));
        }
    }

    /**
     * A rewrite of statements: each is rebuilt from the rewrites of its expressions ({@link #expr})
     * and nested bodies ({@link #body}) when one of them changed. A new statement kind is a compile
     * error here.
     */
    abstract static class RebuildStatements implements Stmt.Visitor<Stmt> {

        /** The rewrite of one of a statement's expressions. */
        abstract Expr expr(Expr e);

        /** The rewrite of a nested body (a block's, a loop's, a branch of an if). */
        abstract List<Stmt> body(List<Stmt> statements);

        @Override
        public Stmt localSet(Stmt.LocalSet set) {
            Expr value = expr(set.value());
            return value == set.value() ? set : new Stmt.LocalSet(set.local(), value);
        }

        @Override
        public Stmt store(Stmt.Store store) {
            Expr address = expr(store.address());
            Expr value = expr(store.value());
            return address == store.address() && value == store.value() ? store
                    : new Stmt.Store(store.op(), address, value, store.arg());
        }

        @Override
        public Stmt drop(Stmt.Drop drop) {
            Expr value = expr(drop.value());
            return value == drop.value() ? drop : new Stmt.Drop(value);
        }

        @Override
        public Stmt block(Stmt.Block block) {
            List<Stmt> body = body(block.body());
            return body == block.body() ? block : new Stmt.Block(body);
        }

        @Override
        public Stmt loop(Stmt.Loop loop) {
            List<Stmt> body = body(loop.body());
            return body == loop.body() ? loop : new Stmt.Loop(body);
        }

        @Override
        public Stmt ifElse(Stmt.If branch) {
            Expr condition = expr(branch.condition());
            List<Stmt> then = body(branch.then());
            List<Stmt> otherwise = body(branch.otherwise());
            return condition == branch.condition() && then == branch.then() && otherwise == branch.otherwise() ? branch
                    : new Stmt.If(condition, then, otherwise);
        }

        @Override
        public Stmt branch(Stmt.Branch branch) {
            if (branch.condition() == null) {
                return branch;
            }
            Expr condition = expr(branch.condition());
            return condition == branch.condition() ? branch : new Stmt.Branch(branch.depth(), condition);
        }
    }

    /** Statements rebuilt from their rewritten expressions and bodies, then passed to {@code after}. */
    private static final class Statements extends RebuildStatements {
        private final BottomUp expressions;
        private final UnaryOperator<Stmt> after;

        Statements(BottomUp expressions, UnaryOperator<Stmt> after) {
            this.expressions = expressions;
            this.after = after;
        }

        List<Stmt> all(List<Stmt> body) {
            return map(body, s -> after.apply(s.accept(this)));
        }

        @Override
        Expr expr(Expr e) {
            return expressions.child(e);
        }

        @Override
        List<Stmt> body(List<Stmt> statements) {
            return all(statements);
        }
    }
}
