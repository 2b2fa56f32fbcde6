package dev.jitzoo.codegen.wasm.passes;

import dev.jitzoo.codegen.wasm.Expr;
import dev.jitzoo.codegen.wasm.Stmt;
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
        if (statement instanceof Stmt.LocalSet set) {
            return new Stmt.LocalSet(set.local(), rewrite(set.value(), expressions));
        } else if (statement instanceof Stmt.Store store) {
            return new Stmt.Store(store.op(), rewrite(store.address(), expressions), rewrite(store.value(), expressions),
                    store.arg());
        } else if (statement instanceof Stmt.Drop drop) {
            return new Stmt.Drop(rewrite(drop.value(), expressions));
        } else if (statement instanceof Stmt.Block block) {
            return new Stmt.Block(block.loop(), rewrite(block.body(), expressions, statements));
        } else if (statement instanceof Stmt.If branch) {
            return new Stmt.If(rewrite(branch.condition(), expressions),
                    rewrite(branch.then(), expressions, statements), rewrite(branch.otherwise(), expressions, statements));
        } else if (statement instanceof Stmt.Branch branch) {
            return branch.condition() == null ? branch : new Stmt.Branch(branch.depth(), rewrite(branch.condition(), expressions));
        }
        throw new IllegalStateException("unknown statement " + statement);
    }

    static Expr rewrite(Expr expr, UnaryOperator<Expr> f) {
        Expr rebuilt = expr;
        if (expr instanceof Expr.LocalTee tee) {
            rebuilt = new Expr.LocalTee(tee.local(), rewrite(tee.value(), f));
        } else if (expr instanceof Expr.Apply apply) {
            rebuilt = new Expr.Apply(apply.op(), rewriteAll(apply.args(), f));
        } else if (expr instanceof Expr.Lane lane) {
            rebuilt = new Expr.Lane(lane.op(), lane.lane(), rewriteAll(lane.args(), f));
        } else if (expr instanceof Expr.Load load) {
            rebuilt = new Expr.Load(load.op(), rewrite(load.address(), f), load.arg());
        }
        return f.apply(rebuilt);
    }

    private static List<Expr> rewriteAll(List<Expr> exprs, UnaryOperator<Expr> f) {
        List<Expr> out = new ArrayList<>(exprs.size());
        for (Expr e : exprs) {
            out.add(rewrite(e, f));
        }
        return out;
    }
}
