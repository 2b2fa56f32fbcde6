package dev.jitzoo.compiler.kernel;

import dev.jitzoo.compiler.wasm.passes.Pass;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The ABI v1 metadata of a kernel as JSON, keys in a fixed order (docs/kernel-abi.md). */
public final class AbiMetadata {

    private AbiMetadata() {
    }

    /**
     * The entry's operands in parameter order, with their shapes: inputs first, C (the output)
     * after them, then the operands a matmul's epilogue reads (Bias, Residual).
     */
    static Map<String, List<Integer>> operandShapes(Op op) {
        Map<String, List<Integer>> shapes = new LinkedHashMap<>();
        switch (op.kind()) {
            case ADD, MUL -> {
                shapes.put("A", op.dims());
                shapes.put("B", op.dims());
                shapes.put("C", op.dims());
            }
            case SOFTMAX -> {
                shapes.put("A", op.dims());
                shapes.put("C", op.dims());
            }
            case LAYER_NORM -> {
                shapes.put("A", op.dims());
                shapes.put("Gamma", List.of(op.cols()));
                shapes.put("Beta", List.of(op.cols()));
                shapes.put("C", op.dims());
            }
            case MATMUL_INT8 -> {
                shapes.put("A", List.of(op.m(), op.k()));
                shapes.put("B", List.of(op.k(), op.n()));
                shapes.put("BScale", List.of(op.n()));
                shapes.put("C", List.of(op.m(), op.n()));
                shapes.put("Work", List.of(op.m(), Int8MatMulEmitter.workRow(op)));
                epilogueOperands(op, shapes, shapes.get("C"));
            }
            case MATMUL_F16 -> {
                shapes.put("A", List.of(op.m(), op.k()));
                shapes.put("B", List.of(op.k(), op.n()));
                shapes.put("C", List.of(op.m(), op.n()));
                shapes.put("Work", List.of(op.m(), op.k()));
                epilogueOperands(op, shapes, shapes.get("C"));
            }
            case CONV -> {
                List<Integer> d = op.dims();
                List<Integer> c = List.of(d.get(0), d.get(4), op.outputHeight(), op.outputWidth());
                shapes.put("A", d.subList(0, 4));
                shapes.put("B", List.of(d.get(4), d.get(1) / op.window().group(), d.get(5), d.get(6)));
                shapes.put("C", c);
                shapes.put("Work", List.of(d.get(0) * op.outputHeight(), ConvEmitter.workRow(op)));
                epilogueOperands(op, shapes, c);
            }
            case MATMUL_Q4 -> {
                shapes.put("A", List.of(op.m(), op.k()));
                shapes.put("B", List.of(op.n(), Q4MatMulEmitter.blocks(op) * Q4MatMulEmitter.BLOCK_BYTES));
                shapes.put("BScale", List.of(op.n(), Q4MatMulEmitter.blocks(op)));
                shapes.put("BZero", List.of(op.n(), Q4MatMulEmitter.zeroRowBytes(op)));
                shapes.put("C", List.of(op.m(), op.n()));
                shapes.put("Work", List.of(op.m(), Q4MatMulEmitter.workRow(op)));
                epilogueOperands(op, shapes, shapes.get("C"));
            }
            default -> {
                boolean batched = op.kind() == OpKind.BATCH_MATMUL;
                List<Integer> b = op.transposeB() ? List.of(op.n(), op.k()) : List.of(op.k(), op.n());
                List<Integer> c = batched ? List.of(op.batch(), op.m(), op.n()) : List.of(op.m(), op.n());
                shapes.put("A", batched ? List.of(op.batch(), op.m(), op.k()) : List.of(op.m(), op.k()));
                shapes.put("B", batched && !op.broadcastB() ? List.of(op.batch(), b.get(0), b.get(1)) : b);
                shapes.put("C", c);
                epilogueOperands(op, shapes, c);
            }
        }
        return shapes;
    }

    /** The entry's parameter index of an operand (-1 for one the op does not have). */
    static int param(Op op, String operand) {
        return List.copyOf(operandShapes(op).keySet()).indexOf(operand);
    }

    /** Parameters of the entry: one per operand. */
    static int operandCount(Op op) {
        return operandShapes(op).size();
    }

    private static void epilogueOperands(Op op, Map<String, List<Integer>> shapes, List<Integer> c) {
        if (op.fuses(Epilogue.Kind.BIAS)) {
            shapes.put("Bias", List.of(op.kind() == OpKind.CONV ? op.dims().get(4) : op.n())); // a conv's per output channel
        }
        if (op.fuses(Epilogue.Kind.RESIDUAL)) {
            shapes.put("Residual", c);
        }
    }

    /**
     * Operands that are not float32, by name: an int8 matmul's B (int8) and Work (int16), a 4-bit
     * matmul's B and BZero (bytes of two 4-bit values each, uint8), a float16-weight matmul's B.
     */
    static Map<String, String> operandTypes(Op op) {
        return switch (op.kind()) {
            case MATMUL_INT8 -> Map.of("B", "int8", "Work", "int16");
            case MATMUL_Q4 -> Map.of("B", "uint8", "BZero", "uint8");
            case MATMUL_F16 -> Map.of("B", "float16");
            default -> Map.of();
        };
    }

    /** Bytes of one element of an operand. */
    static int elementBytes(Op op, String operand) {
        return switch (operandTypes(op).getOrDefault(operand, "float32")) {
            case "int8", "uint8" -> 1;
            case "int16", "float16" -> 2;
            default -> MatMulPlan.FLOAT_BYTES;
        };
    }

    /**
     * Wasm metadata: the common keys, the passes that ran, the pack function when B is packed, and
     * the split (axis, grain, units) when the kernel computes a range of units per call (ABI v2).
     */
    static String wasm(Op op, Schedule s, int abiVersion, Set<Pass> passes) {
        JsonObjectWriter json = common(op, s, abiVersion, op.kind().abiName)
                .putStrings("passes", Arrays.stream(Pass.values()).filter(passes::contains).map(p -> p.label).toList());
        if (s.packB() && (op.kind().matmul || op.kind().quantized)) {
            long words = switch (op.kind()) {
                case MATMUL_INT8 -> (Int8MatMulEmitter.packedBytes(op, s) + 3) / 4;
                case MATMUL_Q4 -> (Q4MatMulEmitter.packedBytes(op) + 3) / 4;
                default -> (long) (op.broadcastB() ? 1 : op.batch()) * op.k() * op.n();
            };
            json.put("pack", new JsonObjectWriter().put("operand", "B").put("entry", PackEmitter.ENTRY).put("floats", words));
        }
        if (s.split().isSplit()) {
            json.put("split", new JsonObjectWriter().put("axis", s.split().axis().label).put("grain", s.split().grain())
                    .put("units", RangeEmitter.units(op, s.split())));
        }
        return json.toString();
    }

    /**
     * The keys every backend writes, in order, up to {@code epilogue} (and {@code epsilon}, for a
     * layer norm whose epsilon is not the default); a backend appends its own keys
     * (WGSL: {@code workgroupSize}, {@code dispatch}) after them.
     */
    public static JsonObjectWriter common(Op op, Schedule s, int abiVersion, String entry) {
        return common(op, s, abiVersion, entry, operandShapes(op));
    }

    /**
     * The common keys of a WGSL kernel: its operands are the op's without Work (a WGSL conv reads
     * its input in place; only Wasm kernels take scratch).
     */
    public static JsonObjectWriter commonWgsl(Op op, Schedule s, int abiVersion, String entry) {
        Map<String, List<Integer>> shapes = operandShapes(op);
        shapes.remove("Work");
        return common(op, s, abiVersion, entry, shapes);
    }

    private static JsonObjectWriter common(Op op, Schedule s, int abiVersion, String entry, Map<String, List<Integer>> shapes) {
        JsonObjectWriter shapeJson = new JsonObjectWriter();
        shapes.forEach(shapeJson::putInts);
        JsonObjectWriter schedule = new JsonObjectWriter()
                .put("x0", s.x0()).put("y0", s.y0()).put("r0", s.r0())
                .put("x1", s.x1()).put("y1", s.y1()).put("r1", s.r1())
                .put("vectorize", s.vectorize()).put("unroll", s.unroll())
                .put("relaxedSimd", s.relaxedSimd()).put("packB", s.packB())
                .put("columnsOuter", s.columnsOuter());
        if (s.split().isSplit()) {
            schedule.put("split", new JsonObjectWriter().put("axis", s.split().axis().label).put("grain", s.split().grain()));
        }
        JsonObjectWriter json = new JsonObjectWriter()
                .put("abi", abiVersion)
                .put("op", op.kind().abiName)
                .putInts("shape", op.dims())
                .put("entry", entry)
                .putStrings("operands", List.copyOf(shapes.keySet()))
                .put("operandShapes", shapeJson)
                .put("schedule", schedule)
                .put("flops", op.flops())
                .put("transposeB", op.transposeB())
                .put("broadcastB", op.broadcastB())
                .putRaw("epilogue", op.epilogue().stream().map(e -> e.kind() == Epilogue.Kind.SCALE
                        ? new JsonObjectWriter().put("kind", e.kind().label).put("value", e.value()).toString()
                        : new JsonObjectWriter().put("kind", e.kind().label).toString())
                        .collect(java.util.stream.Collectors.joining(",", "[", "]")));
        if (op.window() != null) {
            ConvWindow w = op.window();
            json.put("window", new JsonObjectWriter().putInts("strides", List.of(w.strideH(), w.strideW()))
                    .putInts("dilations", List.of(w.dilationH(), w.dilationW()))
                    .putInts("pads", List.of(w.padTop(), w.padLeft(), w.padBottom(), w.padRight())).put("group", w.group()));
        }
        boolean scratch = shapes.containsKey("Work");
        if (scratch) {
            json.putStrings("scratch", List.of("Work"));
        }
        Map<String, String> named = operandTypes(op);
        if (scratch || shapes.keySet().stream().anyMatch(named::containsKey)) { // a WGSL float16-weight matmul's B has no Work
            JsonObjectWriter types = new JsonObjectWriter();
            shapes.keySet().stream().filter(named::containsKey).forEach(name -> types.put(name, named.get(name)));
            json.put("operandTypes", types);
        }
        return op.epsilon() == 0 ? json : json.put("epsilon", op.epsilon());
    }
}
