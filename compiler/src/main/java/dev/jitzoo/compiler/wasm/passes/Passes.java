package dev.jitzoo.compiler.wasm.passes;

import dev.jitzoo.compiler.wasm.Expr;
import dev.jitzoo.compiler.wasm.Function;
import dev.jitzoo.compiler.wasm.Stmt;
import java.util.Set;
import java.util.function.UnaryOperator;

/** Runs the chosen passes over a function, in the paper's order: offset, combined instruction, load to variable. */
public final class Passes {

    private Passes() {
    }

    /**
     * The function the passes make of {@code function}. The two local rewrites share one walk: at
     * each node, bottom-up, offset folding and then instruction combining, which is what running
     * them one after the other gives (a combined load keeps the address folding left it). The
     * store-to-variable half of {@link Pass#TEE} happens as the body is encoded: pass
     * {@code passes.contains(Pass.TEE)} to the encoder.
     */
    public static Function run(Function function, Set<Pass> passes) {
        Function result = function;
        boolean offset = passes.contains(Pass.OFFSET), splat = passes.contains(Pass.SPLAT);
        if (offset || splat) {
            UnaryOperator<Expr> expressions = offset && splat ? e -> SplatCombining.expression(OffsetFolding.expression(e))
                    : offset ? OffsetFolding::expression : SplatCombining::expression;
            UnaryOperator<Stmt> statements = offset ? OffsetFolding::statement : UnaryOperator.identity();
            result = result.withBody(Trees.rewrite(result.body(), expressions, statements));
        }
        if (passes.contains(Pass.TEE)) {
            result = LoadToVariable.apply(result);
        }
        return result;
    }
}
