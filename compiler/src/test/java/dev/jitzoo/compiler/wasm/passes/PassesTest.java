package dev.jitzoo.compiler.wasm.passes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.jitzoo.compiler.wasm.Expr;
import dev.jitzoo.compiler.wasm.FuncType;
import dev.jitzoo.compiler.wasm.Function;
import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.MemArg;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;
import dev.jitzoo.compiler.wasm.Stmt;
import dev.jitzoo.compiler.wasm.ValType;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each pass on hand-built IR: what it rewrites, and what it must leave alone. */
class PassesTest {

    private static final MemArg AT_0 = MemArg.floatAt(0);

    @Test
    void offsetFoldingMovesConstantsIntoTheMemargOfLoadsAndStores() {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(2));
        f.localGet(1).i32Const(16).op(Opcode.I32_ADD);
        f.localGet(0).i32Const(8).op(Opcode.I32_ADD).i32Const(4).op(Opcode.I32_ADD).memory(Opcode.F32_LOAD, AT_0);
        f.memory(Opcode.F32_STORE, MemArg.floatAt(100));
        Function fn = run(f, Pass.OFFSET);
        Stmt.Store store = (Stmt.Store) fn.body().get(0);
        assertEquals(new Expr.LocalGet(1), store.address());
        assertEquals(116, store.arg().offset());
        assertEquals(new Expr.Load(Opcode.F32_LOAD, new Expr.LocalGet(0), MemArg.floatAt(12)), store.value());
    }

    @Test
    void offsetFoldingLeavesNegativeAndNonConstantTermsInTheAddress() {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(2));
        f.localGet(0).i32Const(-4).op(Opcode.I32_ADD).memory(Opcode.F32_LOAD, AT_0).op(Opcode.DROP);
        f.localGet(0).localGet(1).op(Opcode.I32_ADD).memory(Opcode.F32_LOAD, AT_0).op(Opcode.DROP);
        Function fn = f.build();
        assertEquals(fn.body(), Passes.run(fn, Set.of(Pass.OFFSET)).body());
    }

    @Test
    void splatCombiningFusesALoadAndItsSplat() {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(1));
        f.localGet(0).memory(Opcode.F32_LOAD, MemArg.floatAt(8)).simd(SimdOpcode.F32X4_SPLAT).op(Opcode.DROP);
        Function fn = run(f, Pass.SPLAT);
        assertEquals(new Stmt.Drop(new Expr.Load(SimdOpcode.V128_LOAD32_SPLAT, new Expr.LocalGet(0), MemArg.floatAt(8))),
                fn.body().get(0));
    }

    @Test
    void loadToVariableLoadsARepeatedValueOnceUntilAStoreOrAnAddressChange() {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(2));
        int sum = f.local(ValType.F32);
        for (int i = 0; i < 3; i++) {
            f.localGet(sum).localGet(0).memory(Opcode.F32_LOAD, AT_0).op(Opcode.F32_ADD).localSet(sum);
        }
        f.localGet(1).localGet(sum).memory(Opcode.F32_STORE, AT_0);                      // may alias: reload after
        f.localGet(sum).localGet(0).memory(Opcode.F32_LOAD, AT_0).op(Opcode.F32_ADD).localSet(sum);
        f.localGet(sum).localGet(0).memory(Opcode.F32_LOAD, AT_0).op(Opcode.F32_ADD).localSet(sum);
        f.localGet(0).i32Const(4).op(Opcode.I32_ADD).localSet(0);                        // address moves: reload
        f.localGet(sum).localGet(0).memory(Opcode.F32_LOAD, AT_0).op(Opcode.F32_ADD).localSet(sum);
        Function fn = run(f, Pass.TEE);
        Expr load = new Expr.Load(Opcode.F32_LOAD, new Expr.LocalGet(0), AT_0);
        int held = fn.type().params().size() + 1;
        assertEquals(List.of(ValType.F32, ValType.F32), fn.locals(), "one local added, reused after the store");
        assertEquals(new Expr.LocalTee(held, load), operand(fn, 0));
        assertEquals(new Expr.LocalGet(held), operand(fn, 1));
        assertEquals(new Expr.LocalGet(held), operand(fn, 2));
        assertEquals(new Expr.LocalTee(held, load), operand(fn, 4));
        assertEquals(new Expr.LocalGet(held), operand(fn, 5));
        assertEquals(load, operand(fn, 7), "a single load after the pointer moved stays a load");
    }

    @Test
    void teeReplacesASetDirectlyFollowedByAGetOfTheSameLocal() {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(1));
        int x = f.local(ValType.I32);
        f.localGet(0).i32Const(1).op(Opcode.I32_ADD).localSet(x);
        f.localGet(x).localGet(x).op(Opcode.I32_MUL).localSet(0);
        Function fn = f.build();
        byte[] plain = fn.encode(false).toByteArray();
        byte[] teed = fn.encode(true).toByteArray();
        assertArrayEquals(new byte[] {1, 1, 0x7F, 0x20, 0, 0x41, 1, 0x6A, 0x21, 1, 0x20, 1, 0x20, 1, 0x6C, 0x21, 0, 0x0B}, plain);
        assertArrayEquals(new byte[] {1, 1, 0x7F, 0x20, 0, 0x41, 1, 0x6A, 0x22, 1, 0x20, 1, 0x6C, 0x21, 0, 0x0B}, teed);
    }

    @Test
    void passListsParseAndPrint() {
        assertEquals(Pass.ALL, Pass.parse("all"));
        assertEquals(Set.of(), Pass.parse("none"));
        assertEquals(Set.of(Pass.OFFSET, Pass.TEE), Pass.parse("tee, offset"));
        assertEquals("offset,tee", Pass.describe(Set.of(Pass.TEE, Pass.OFFSET)));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Pass.parse("offset,unroll"));
        assertEquals("unknown pass 'unroll'; known: offset, splat, tee, all, none", e.getMessage());
    }

    private static Function run(FunctionBuilder f, Pass pass) {
        return Passes.run(f.build(), Set.of(pass));
    }

    /** The load operand of statement {@code i}, a {@code sum = sum + load} set. */
    private static Expr operand(Function fn, int i) {
        Stmt.LocalSet set = (Stmt.LocalSet) fn.body().get(i);
        return ((Expr.Apply) set.value()).args().get(1);
    }
}
