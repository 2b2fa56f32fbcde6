package dev.jitzoo.compiler.kernel;

import dev.jitzoo.compiler.wasm.FuncType;
import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.ValType;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * The entry of a split kernel (ABI v2): {@code (operands..., first, end)} computes units
 * {@code [first, end)} of the op's {@link Split}. A unit is {@code grain} rows of C within one batch;
 * unit {@code u} is band {@code u mod bands} of batch {@code u / bands}. Per unit the entry points
 * each operand at the unit's first row (A, C and Residual by rows, B by batch) and runs the code of
 * the op cut to the unit's rows, a single-call kernel of {@code grain} rows or, for the last band
 * of a batch, of what is left. Both are the unsplit emitters' code, so a split kernel is exactly
 * as fast per row as the kernel its schedule names without the split.
 *
 * <pre>
 * for u in [first, end)
 *   batch = u / bands; band = u - batch * bands; row = batch * M + band * grain
 *   a = a0 + row * rowBytes(A); c = c0 + row * rowBytes(C); b = b0 + batch * batchBytes(B) ...
 *   if band == bands - 1 (and M mod grain != 0): the last band's code, else a band's code
 * </pre>
 *
 * <p>Split by columns (a one-row matmul, B packed in panels of x0 columns, a grain of whole panels):
 * unit {@code u} is columns {@code [u·grain, (u+1)·grain)}; A stays, B moves {@code u·grain} columns
 * of panels on (K floats each), C, Bias and Residual {@code u·grain} floats; the code is the
 * unsplit kernel's for a matmul that many columns wide (the last unit: what is left).
 */
final class RangeEmitter {

    /**
     * How the op's operands step: bytes per row of the split axis and per batch, for each entry
     * parameter in order (0 for one that stays, like Bias or a broadcast B).
     */
    private record Strides(int[] perRow, int[] perBatch) {
    }

    private final Op op;
    private final Schedule schedule;
    private final FunctionBuilder f;
    private final LocalPool locals;

    private RangeEmitter(Op op, Schedule schedule) {
        this.op = op;
        this.schedule = schedule;
        int operands = AbiMetadata.operandShapes(op).size();
        this.f = new FunctionBuilder(FuncType.i32Params(operands + 2));
        this.locals = new LocalPool(f);
    }

    /** Rows of the split axis in one batch: a matmul's M, a row op's rows, an element-wise op's elements. */
    static int rowsPerBatch(Op op) {
        if (op.kind() == OpKind.CONV) {
            return op.outputHeight(); // output rows per image
        }
        return op.kind().matmul || op.kind().compactWeights ? op.m() : op.dims().get(0);
    }

    /** The split's units: bands of {@code grain} rows in every batch, or of {@code grain} columns of a one-row matmul. */
    static int units(Op op, Split split) {
        if (split.axis() == Split.Axis.COLUMNS) {
            return (op.n() + split.grain() - 1) / split.grain();
        }
        int rows = rowsPerBatch(op);
        return op.batch() * ((rows + split.grain() - 1) / split.grain());
    }

    /** Throws unless {@code split} can split this op. */
    static void check(Op op, Split split) {
        if (split.axis() == Split.Axis.COLUMNS) {
            if (op.kind() != OpKind.MATMUL || op.m() != 1 || split.grain() > op.n()) {
                throw new InvalidKernelException("a split along columns is for a one-row matmul, in at most its " + op.n()
                        + " columns; got " + split + " for " + op);
            }
            return;
        }
        if (split.axis() != Split.Axis.ROWS) {
            throw new InvalidKernelException("only a split along rows or columns is supported, got " + split);
        }
        int rows = rowsPerBatch(op);
        if (split.grain() > rows) {
            throw new InvalidKernelException("the split grain " + split.grain() + " exceeds the " + rows
                    + " rows of " + op + "; a grain of " + rows + " makes one unit per batch");
        }
    }

    static FunctionBuilder emit(Op op, Schedule schedule) {
        check(op, schedule.split());
        if (schedule.split().axis() == Split.Axis.COLUMNS) {
            if (!schedule.packB() || schedule.split().grain() % schedule.x0() != 0) {
                throw new InvalidKernelException("a split along columns reads B packed, a grain of whole x0 = " + schedule.x0()
                        + " column panels; got " + schedule);
            }
            return new RangeEmitter(op, schedule).columnsEntry();
        }
        return new RangeEmitter(op, schedule).entry();
    }

    /** The entry of a one-row matmul split by columns (see the class comment). */
    private FunctionBuilder columnsEntry() {
        int grain = schedule.split().grain();
        int units = units(op, schedule.split());
        int lastColumns = op.n() - (units - 1) * grain;
        List<String> names = List.copyOf(AbiMetadata.operandShapes(op).keySet());
        int unit = local("range.unit"), column = local("range.column");
        return overUnits(unit, names.size(), () -> null, (base, none) -> {
            f.localGet(unit).i32Const(grain).op(Opcode.I32_MUL).localSet(column);
            for (int p = 0; p < base.length; p++) {
                f.localGet(base[p]);
                // packed B: a column's panel is K floats per column on; C, Bias, Residual: a float a column
                scaledAdd(column, switch (names.get(p)) {
                    case "A" -> 0;
                    case "B" -> op.k() * MatMulPlan.FLOAT_BYTES;
                    default -> MatMulPlan.FLOAT_BYTES;
                });
                f.localSet(p);
            }
            lastOr(lastColumns, grain, () -> f.localGet(unit).i32Const(units - 1).op(Opcode.I32_EQ), this::columns);
        });
    }

    /** The one-row matmul's code for {@code columns} columns, B's panels and C read where the unit's parameters point. */
    private void columns(int columns) {
        Op cut = new Op(OpKind.MATMUL, List.of(1, op.k(), columns), op.transposeB(), false, op.epilogue(), 0f);
        MatMulEmitter.emitInto(MatMulPlan.of(cut, schedule), f, locals);
    }

    private FunctionBuilder entry() {
        int grain = schedule.split().grain();
        int rows = rowsPerBatch(op);
        int bands = (rows + grain - 1) / grain;
        int lastRows = rows - (bands - 1) * grain;
        Strides strides = strides();
        int unit = local("range.unit"), batch = local("range.batch"), band = local("range.band"), row = local("range.row");
        // an int8 matmul quantizes A by the range of all of it: found once per call, before A moves to a unit's rows
        return overUnits(unit, strides.perRow().length,
                () -> op.kind() == OpKind.MATMUL_INT8 ? Int8MatMulEmitter.emitRange(op, f, locals) : null, (base, range) -> {
            if (bands == 1) {
                f.localGet(unit).localSet(batch);
                f.i32Const(0).localSet(band);
            } else {
                f.localGet(unit).i32Const(bands).op(Opcode.I32_DIV_U).localSet(batch);
                f.localGet(unit).localGet(batch).i32Const(bands).op(Opcode.I32_MUL).op(Opcode.I32_SUB).localSet(band);
            }
            f.localGet(batch).i32Const(rows).op(Opcode.I32_MUL)
                    .localGet(band).i32Const(grain).op(Opcode.I32_MUL).op(Opcode.I32_ADD).localSet(row);
            for (int p = 0; p < base.length; p++) {
                f.localGet(base[p]);
                scaledAdd(row, strides.perRow()[p]);
                scaledAdd(batch, strides.perBatch()[p]);
                f.localSet(p);
            }
            lastOr(lastRows, grain, () -> f.localGet(band).i32Const(bands - 1).op(Opcode.I32_EQ), length -> body(length, range));
        });
    }

    /**
     * An entry's frame: the operand parameters kept in locals (the bases each unit's place is found
     * from), {@code prologue} once (what it emits and returns is the units'), then {@code perUnit}
     * for each unit in {@code [first, end)} in {@code unit}: it points the parameters at the unit and
     * runs its code.
     */
    private <R> FunctionBuilder overUnits(int unit, int operands, Supplier<R> prologue, BiConsumer<int[], R> perUnit) {
        int first = operands, end = operands + 1;
        int[] base = new int[operands];
        for (int p = 0; p < operands; p++) {
            base[p] = local("range.base" + p);
            f.localGet(p).localSet(base[p]);
        }
        R shared = prologue.get();
        f.localGet(first).localSet(unit);
        f.block();
        f.localGet(unit).localGet(end).op(Opcode.I32_LT_U).op(Opcode.I32_EQZ).brIf(0);
        f.loop();
        perUnit.accept(base, shared);
        f.localGet(unit).i32Const(1).op(Opcode.I32_ADD).localTee(unit).localGet(end).op(Opcode.I32_LT_U).brIf(0);
        f.end();
        f.end();
        return f;
    }

    /** The code of a unit of {@code length}, and, when it differs, of the last unit's {@code last}, chosen by {@code isLast}. */
    private void lastOr(int last, int length, Runnable isLast, IntConsumer code) {
        if (last == length) {
            code.accept(length);
            return;
        }
        isLast.run();
        f.ifThen();
        code.accept(last);
        f.elseBranch();
        code.accept(length);
        f.end();
    }

    /** Adds {@code local * bytes} to the value on the stack (nothing for 0 bytes). */
    private void scaledAdd(int local, int bytes) {
        if (bytes != 0) {
            f.localGet(local).i32Const(bytes).op(Opcode.I32_MUL).op(Opcode.I32_ADD);
        }
    }

    /** The code of the op cut to {@code rows} rows of one batch, reading the operand parameters as set for the unit (an int8 matmul: with the range of all of A). */
    private void body(int rows, Int8MatMulEmitter.Range range) {
        Op cut = cut(rows);
        if (op.kind() == OpKind.MATMUL_INT8) {
            Int8MatMulEmitter.emitInto(cut, schedule.withSplit(Split.NONE), f, locals, range);
        } else if (op.kind() == OpKind.MATMUL_Q4) {
            Q4MatMulEmitter.emitInto(cut, schedule.withSplit(Split.NONE), f, locals);
        } else if (op.kind() == OpKind.MATMUL_F16) {
            F16MatMulEmitter.emitInto(cut, schedule.withSplit(Split.NONE), f, locals);
        } else if (op.kind().matmul) {
            MatMulEmitter.emitInto(MatMulPlan.of(cut, schedule), f, locals);
        } else {
            RowOpEmitter.emitInto(cut, schedule, f, locals);
        }
    }

    /** One batch of the op with {@code rows} rows: a matmul (B as the batch's), a row op or an element-wise op. */
    private Op cut(int rows) {
        if (op.kind().compactWeights) {
            return new Op(op.kind(), List.of(rows, op.k(), op.n()), false, false, op.epilogue(), 0f);
        }
        if (op.kind().matmul) {
            return new Op(OpKind.MATMUL, List.of(rows, op.k(), op.n()), op.transposeB(), false, op.epilogue(), 0f);
        }
        List<Integer> dims = op.dims().size() == 1 ? List.of(rows) : List.of(rows, op.dims().get(1));
        return new Op(op.kind(), dims, false, false, List.of(), op.epsilon());
    }

    private Strides strides() {
        Map<String, List<Integer>> shapes = AbiMetadata.operandShapes(op);
        List<String> names = List.copyOf(shapes.keySet());
        int[] perRow = new int[names.size()];
        int[] perBatch = new int[names.size()];
        int bBatchBytes = op.kind().matmul ? MatMulPlan.of(op, schedule.withSplit(Split.NONE)).bBatchBytes() : 0;
        for (int p = 0; p < names.size(); p++) {
            String name = names.get(p);
            List<Integer> shape = shapes.get(name);
            boolean byRow = switch (name) {
                case "A", "C", "Residual", "Work" -> true;
                case "B" -> !op.kind().matmul && !op.kind().compactWeights;
                default -> false; // Bias, Gamma, Beta: one row for all
            };
            // a row of an operand split by rows spans its last dimension (one element for [n]), in its type's bytes
            int elementBytes = AbiMetadata.elementBytes(op, name);
            perRow[p] = byRow ? (shape.size() == 1 ? 1 : shape.get(shape.size() - 1)) * elementBytes : 0;
            perBatch[p] = op.kind().matmul && name.equals("B") ? bBatchBytes : 0;
        }
        return new Strides(perRow, perBatch);
    }

    private int local(String role) {
        return locals.one(role, ValType.I32);
    }
}
