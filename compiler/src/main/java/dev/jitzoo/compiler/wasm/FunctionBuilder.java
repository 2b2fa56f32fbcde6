package dev.jitzoo.compiler.wasm;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds a function of the expression IR with the stack-machine calls a Wasm writer thinks in:
 * each call pushes or combines operands on a build-time stack, and every instruction that leaves
 * nothing (set, store, branch) closes a statement. Checks what can be checked while building:
 * operand counts, balanced control, branch depths, local indices, alignment hints. Value types are
 * left to the engine's validator, which the tests run.
 */
public final class FunctionBuilder {

    private enum Kind { BLOCK, LOOP, IF }

    /** An open construct: what it is, its statements so far, and for an if its condition and then-branch. */
    private static final class Frame {
        final Kind kind;
        final Expr condition;
        List<Stmt> statements = new ArrayList<>();
        List<Stmt> then;

        Frame(Kind kind, Expr condition) {
            this.kind = kind;
            this.condition = condition;
        }
    }

    private final FuncType type;
    private final List<ValType> locals = new ArrayList<>();
    private final List<Expr> stack = new ArrayList<>();
    private final List<Frame> open = new ArrayList<>();
    private final Frame root = new Frame(Kind.BLOCK, null);

    public FunctionBuilder(FuncType type) {
        this.type = type;
    }

    /** Declares a local and returns its index (parameters come first). */
    public int local(ValType valType) {
        locals.add(valType);
        return type.params().size() + locals.size() - 1;
    }

    // ---- structured control ----

    public FunctionBuilder block() {
        return open(Kind.BLOCK, null);
    }

    public FunctionBuilder loop() {
        return open(Kind.LOOP, null);
    }

    /** {@code if} on the i32 on top of the stack. */
    public FunctionBuilder ifThen() {
        return open(Kind.IF, pop("if"));
    }

    public FunctionBuilder elseBranch() {
        if (open.isEmpty() || open.get(open.size() - 1).kind != Kind.IF || open.get(open.size() - 1).then != null) {
            throw new IllegalStateException("else outside an if");
        }
        Frame frame = open.get(open.size() - 1);
        requireEmptyStack("else");
        frame.then = frame.statements;
        frame.statements = new ArrayList<>();
        return this;
    }

    public FunctionBuilder end() {
        if (open.isEmpty()) {
            throw new IllegalStateException("end without an open block, loop or if");
        }
        requireEmptyStack("end");
        Frame frame = open.remove(open.size() - 1);
        Stmt construct = switch (frame.kind) {
            case BLOCK -> new Stmt.Block(frame.statements);
            case LOOP -> new Stmt.Loop(frame.statements);
            case IF -> frame.then == null
                    ? new Stmt.If(frame.condition, List.copyOf(frame.statements), List.of())
                    : new Stmt.If(frame.condition, List.copyOf(frame.then), List.copyOf(frame.statements));
        };
        current().statements.add(construct);
        return this;
    }

    /** Branch to the construct {@code depth} levels out (0: innermost; a loop's label is its start). */
    public FunctionBuilder br(int depth) {
        checkDepth(depth, "br");
        return statement(new Stmt.Branch(depth, null));
    }

    /** Branch when the i32 on top of the stack is not zero. */
    public FunctionBuilder brIf(int depth) {
        checkDepth(depth, "br_if");
        return statement(new Stmt.Branch(depth, pop("br_if")));
    }

    // ---- locals and constants ----

    public FunctionBuilder localGet(int local) {
        checkLocal(local);
        return push(new Expr.LocalGet(local));
    }

    public FunctionBuilder localSet(int local) {
        checkLocal(local);
        return statement(new Stmt.LocalSet(local, pop("local.set")));
    }

    public FunctionBuilder localTee(int local) {
        checkLocal(local);
        return push(new Expr.LocalTee(local, pop("local.tee")));
    }

    public FunctionBuilder i32Const(int value) {
        return push(new Expr.I32Const(value));
    }

    public FunctionBuilder f32Const(float value) {
        return push(new Expr.F32Const(value));
    }

    /** {@code v128.const} with four equal float lanes. */
    public FunctionBuilder f32x4Const(float lane) {
        return push(new Expr.F32x4Const(lane));
    }

    // ---- instructions without immediates ----

    public FunctionBuilder op(Opcode opcode) {
        if (opcode == Opcode.DROP) {
            return statement(new Stmt.Drop(pop("drop")));
        }
        if (!opcode.isPlain()) {
            throw new IllegalArgumentException(opcode + " takes immediates; use its own method");
        }
        return apply(opcode);
    }

    public FunctionBuilder simd(SimdOpcode opcode) {
        if (!opcode.isPlain()) {
            throw new IllegalArgumentException(opcode + " takes immediates; use its own method");
        }
        return apply(opcode);
    }

    public FunctionBuilder f32x4ExtractLane(int lane) {
        checkLane(lane);
        return push(new Expr.Lane(SimdOpcode.F32X4_EXTRACT_LANE, lane, List.of(pop("extract_lane"))));
    }

    public FunctionBuilder f32x4ReplaceLane(int lane) {
        checkLane(lane);
        Expr scalar = pop("replace_lane");
        return push(new Expr.Lane(SimdOpcode.F32X4_REPLACE_LANE, lane, List.of(pop("replace_lane"), scalar)));
    }

    // ---- memory ----

    /** A load or store; the address operand (and the value, for stores) are on the stack. */
    public FunctionBuilder memory(Instruction opcode, MemArg arg) {
        if (!opcode.accessesMemory()) {
            throw new IllegalArgumentException(opcode + " does not access memory");
        }
        if (arg.alignLog2() > opcode.naturalAlignment()) {
            throw new IllegalArgumentException("alignment 2^" + arg.alignLog2() + " exceeds the natural alignment of " + opcode);
        }
        if (opcode.pushes()) {
            return push(new Expr.Load(opcode, pop(opcode.name()), arg));
        }
        Expr value = pop(opcode.name());
        return statement(new Stmt.Store(opcode, pop(opcode.name()), value, arg));
    }

    /** The function built; every construct must be closed and no value left on the stack. */
    public Function build() {
        if (!open.isEmpty()) {
            throw new IllegalStateException(open.size() + " block(s) left open");
        }
        requireEmptyStack("the end of the function");
        return new Function(type, locals, List.copyOf(root.statements));
    }

    /** Shorthand for {@code build().encode(false)}: the body exactly as built. */
    public ByteWriter encode() {
        return build().encode(false);
    }

    private FunctionBuilder apply(Instruction op) {
        Expr[] args = new Expr[op.pops()];
        for (int i = args.length - 1; i >= 0; i--) {
            args[i] = pop(op.name());
        }
        return push(new Expr.Apply(op, List.of(args)));
    }

    private FunctionBuilder open(Kind kind, Expr condition) {
        requireEmptyStack(kind.name().toLowerCase());
        open.add(new Frame(kind, condition));
        return this;
    }

    private FunctionBuilder statement(Stmt statement) {
        requireEmptyStack("a statement");
        current().statements.add(statement);
        return this;
    }

    private FunctionBuilder push(Expr expr) {
        stack.add(expr);
        return this;
    }

    private Expr pop(String what) {
        if (stack.isEmpty()) {
            throw new IllegalStateException(what + " needs an operand and the stack is empty");
        }
        return stack.remove(stack.size() - 1);
    }

    private void requireEmptyStack(String where) {
        if (!stack.isEmpty()) {
            throw new IllegalStateException(stack.size() + " value(s) left on the stack at " + where);
        }
    }

    private Frame current() {
        return open.isEmpty() ? root : open.get(open.size() - 1);
    }

    private void checkDepth(int depth, String what) {
        if (depth < 0 || depth >= open.size()) {
            throw new IllegalArgumentException(what + " " + depth + " with " + open.size() + " open construct(s)");
        }
    }

    private static void checkLane(int lane) {
        if (lane < 0 || lane > 3) {
            throw new IllegalArgumentException("f32x4 lane must be 0..3, got " + lane);
        }
    }

    private void checkLocal(int local) {
        if (local < 0 || local >= type.params().size() + locals.size()) {
            throw new IllegalArgumentException("no local " + local);
        }
    }
}
