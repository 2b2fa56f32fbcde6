package dev.jitzoo.compiler.wasm.passes;

import dev.jitzoo.compiler.wasm.Expr;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;

/** Combined instruction: {@code f32x4.splat(f32.load a)} becomes {@code v128.load32_splat a}, one instruction. */
final class SplatCombining {

    private SplatCombining() {
    }

    /** The combined load for a splat of a load; any other expression as it is. */
    static Expr expression(Expr expr) {
        if (expr instanceof Expr.Apply splat && splat.op() == SimdOpcode.F32X4_SPLAT
                && splat.args().get(0) instanceof Expr.Load load && load.op() == Opcode.F32_LOAD) {
            return new Expr.Load(SimdOpcode.V128_LOAD32_SPLAT, load.address(), load.arg());
        }
        return expr;
    }
}
