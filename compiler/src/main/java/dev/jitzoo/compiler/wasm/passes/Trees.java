package dev.jitzoo.compiler.wasm.passes;

import dev.jitzoo.compiler.wasm.Expr;
import dev.jitzoo.compiler.wasm.Stmt;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/** Bottom-up rewriting of expression trees, the shape of the two local passes. */
final class Trees {

    private Trees() {
    }

    /**
     * Rewrites every expression of {@code body}, children before parents, then every statement
     * (after its expressions and nested bodies) with {@code statements}.
     */
    static List<Stmt> rewrite(List<Stmt> body, UnaryOperator<Expr> expressions, UnaryOperator<Stmt> statements) {
        List<Stmt> out = new ArrayList<>(body.size());
        for (Stmt statement : body) {
            out.add(statements.apply(rewrite(statement, expressions, statements)));
        }
        return out;
    }

    private static Stmt rewrite(Stmt statement, UnaryOperator<Expr> expressions, UnaryOperator<Stmt> statements) {
        return statement.accept(new Stmt.Visitor<Stmt>() {
            @Override
            public Stmt localSet(Stmt.LocalSet set) {
                return new Stmt.LocalSet(set.local(), rewrite(set.value(), expressions));
            }

            @Override
            public Stmt store(Stmt.Store store) {
                return new Stmt.Store(store.op(), rewrite(store.address(), expressions), rewrite(store.value(), expressions),
                        store.arg());
            }

            @Override
            public Stmt drop(Stmt.Drop drop) {
                return new Stmt.Drop(rewrite(drop.value(), expressions));
            }

            @Override
            public Stmt block(Stmt.Block block) {
                return new Stmt.Block(rewrite(block.body(), expressions, statements));
            }

            @Override
            public Stmt loop(Stmt.Loop loop) {
                return new Stmt.Loop(rewrite(loop.body(), expressions, statements));
            }

            @Override
            public Stmt ifElse(Stmt.If branch) {
                return new Stmt.If(rewrite(branch.condition(), expressions),
                        rewrite(branch.then(), expressions, statements), rewrite(branch.otherwise(), expressions, statements));
            }

            @Override
            public Stmt branch(Stmt.Branch branch) {
                return branch.condition() == null ? branch : new Stmt.Branch(branch.depth(), rewrite(branch.condition(), expressions));
            }
        });
    }

    /** Rewrites an expression's children, then the expression itself, with {@code f}. */
    static Expr rewrite(Expr expr, UnaryOperator<Expr> f) {
        return f.apply(expr.accept(new Rebuild() {
            @Override
            public Expr localTee(Expr.LocalTee tee) {
                return new Expr.LocalTee(tee.local(), rewrite(tee.value(), f));
            }

            @Override
            public Expr apply(Expr.Apply apply) {
                return new Expr.Apply(apply.op(), rewriteAll(apply.args(), f));
            }

            @Override
            public Expr lane(Expr.Lane lane) {
                return new Expr.Lane(lane.op(), lane.lane(), rewriteAll(lane.args(), f));
            }

            @Override
            public Expr load(Expr.Load load) {
                return new Expr.Load(load.op(), rewrite(load.address(), f), load.arg());
            }
        }));
    }

    /**
     * A rewrite of expressions: leaves (constants, local.get) stay as they are, each walk rebuilds
     * the nodes with children. A new leaf kind is a compile error here, a new inner kind in every walk.
     */
    abstract static class Rebuild implements Expr.Visitor<Expr> {
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
    }

    private static List<Expr> rewriteAll(List<Expr> exprs, UnaryOperator<Expr> f) {
        List<Expr> out = new ArrayList<>(exprs.size());
        for (Expr e : exprs) {
            out.add(rewrite(e, f));
        }
        return out;
    }
}
