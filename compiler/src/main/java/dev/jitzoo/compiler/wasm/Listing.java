package dev.jitzoo.compiler.wasm;

import java.util.List;
import java.util.Locale;

/**
 * A readable listing of a function in the expression IR: one instruction per line in execution
 * order, indented by block depth, in the text format's mnemonics. For people (`--print`), never
 * parsed back: the compiler's path goes straight from the IR to bytes.
 */
public final class Listing {

    private final StringBuilder out = new StringBuilder();
    private int depth = 1;

    private Listing() {
    }

    public static String of(String name, Function function) {
        Listing listing = new Listing();
        listing.out.append("(func $").append(name);
        function.type().params().forEach(p -> listing.out.append(" (param ").append(lower(p.name())).append(')'));
        listing.out.append('\n');
        List<ValType> locals = function.locals();
        for (int i = 0; i < locals.size(); i++) {
            listing.line("(local $" + (function.type().params().size() + i) + " " + lower(locals.get(i).name()) + ")");
        }
        listing.statements(function.body());
        listing.out.append(")\n");
        return listing.out.toString();
    }

    private void statements(List<Stmt> statements) {
        statements.forEach(s -> s.accept(statementVisitor));
    }

    private void expression(Expr expr) {
        expr.accept(expressionVisitor);
    }

    private final Stmt.Visitor<Void> statementVisitor = new Stmt.Visitor<>() {
        @Override
        public Void localSet(Stmt.LocalSet set) {
            expression(set.value());
            line("local.set " + set.local());
            return null;
        }

        @Override
        public Void store(Stmt.Store store) {
            expression(store.address());
            expression(store.value());
            line(memory(store.op(), store.arg()));
            return null;
        }

        @Override
        public Void drop(Stmt.Drop drop) {
            expression(drop.value());
            line("drop");
            return null;
        }

        @Override
        public Void block(Stmt.Block block) {
            nested("block", block.body());
            return null;
        }

        @Override
        public Void loop(Stmt.Loop loop) {
            nested("loop", loop.body());
            return null;
        }

        @Override
        public Void ifElse(Stmt.If branch) {
            expression(branch.condition());
            nested("if", branch.then());
            if (!branch.otherwise().isEmpty()) {
                nested("else", branch.otherwise());
            }
            return null;
        }

        @Override
        public Void branch(Stmt.Branch branch) {
            if (branch.condition() != null) {
                expression(branch.condition());
            }
            line((branch.condition() == null ? "br " : "br_if ") + branch.depth());
            return null;
        }
    };

    private final Expr.Visitor<Void> expressionVisitor = new Expr.Visitor<>() {
        @Override
        public Void i32Const(Expr.I32Const c) {
            line("i32.const " + c.value());
            return null;
        }

        @Override
        public Void f32Const(Expr.F32Const c) {
            line("f32.const " + c.value());
            return null;
        }

        @Override
        public Void f32x4Const(Expr.F32x4Const c) {
            line("v128.const f32x4 " + c.lane() + " " + c.lane() + " " + c.lane() + " " + c.lane());
            return null;
        }

        @Override
        public Void localGet(Expr.LocalGet get) {
            line("local.get " + get.local());
            return null;
        }

        @Override
        public Void localTee(Expr.LocalTee tee) {
            expression(tee.value());
            line("local.tee " + tee.local());
            return null;
        }

        @Override
        public Void apply(Expr.Apply apply) {
            apply.args().forEach(Listing.this::expression);
            line(mnemonic(apply.op()));
            return null;
        }

        @Override
        public Void lane(Expr.Lane lane) {
            lane.args().forEach(Listing.this::expression);
            line(mnemonic(lane.op()) + " " + lane.lane());
            return null;
        }

        @Override
        public Void load(Expr.Load load) {
            expression(load.address());
            line(memory(load.op(), load.arg()));
            return null;
        }
    };

    private void nested(String opener, List<Stmt> body) {
        line(opener);
        depth++;
        statements(body);
        depth--;
        line("end");
    }

    private static String memory(Instruction op, MemArg arg) {
        return mnemonic(op) + (arg.offset() == 0 ? "" : " offset=" + arg.offset()) + " align=" + (1 << arg.alignLog2());
    }

    /** {@code F32X4_RELAXED_MADD} → {@code f32x4.relaxed_madd}: type prefix, dot, the rest. */
    static String mnemonic(Instruction op) {
        String name = lower(op.name());
        int cut = name.indexOf('_');
        return cut < 0 ? name : name.substring(0, cut) + "." + name.substring(cut + 1);
    }

    private static String lower(String text) {
        return text.toLowerCase(Locale.ROOT);
    }

    private void line(String text) {
        out.append("  ".repeat(depth)).append(text).append('\n');
    }
}
