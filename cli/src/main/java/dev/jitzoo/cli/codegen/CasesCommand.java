package dev.jitzoo.cli.codegen;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.util.JsonFormat;
import dev.jitzoo.compiler.KernelRequest;
import dev.jitzoo.compiler.kernel.Epilogue;
import dev.jitzoo.compiler.kernel.GeneratedKernel;
import dev.jitzoo.compiler.kernel.InvalidKernelException;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.OpKind;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.compiler.kernel.Split;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wasm.passes.Pass;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.rules.PaperKernels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./jitzoo codegen cases}: a case directory for the harness to check or time — every kernel
 * as {@code NAME.wasm} (or {@code NAME.wgsl} with {@code --backend wgsl}) beside {@code NAME.json}.
 * On Wasm the {@code paper} set is a grid over K0..K3 of register tiles (y0 in 1, 2, 4, 6 by x0 in 4,
 * 8, 16, 32, at most 16 accumulators) by unroll 1 and 2 by each Wasm option (relaxed madd, packed
 * B) by loop order (rows or columns outside): 208 kernels per op ({@link #paperGrid()}); the
 * {@code odd} set a seeded sweep of the whole matmul schedule space (passes included) over shapes
 * that miss every tile: primes, 1, extents below the tile sizes; the {@code split} set split kernels
 * (ABI v2): K0..K3 in bands of several grains, and a seeded sweep over every op kind, B layout and
 * epilogue on such shapes with a random schedule and grain ({@link #writeSplit}). On WGSL the {@code paper} set is a
 * grid of register tiles, workgroups and r1 over K0..K3 ({@link #wgslPaperGrid()}), and the
 * {@code odd} set a seeded sweep over every op kind, B layout and epilogue on such shapes.
 */
@Command(name = "cases", mixinStandardHelpOptions = true,
        description = "Writes a case directory (NAME.wasm or NAME.wgsl, + NAME.json per kernel) for the harness.")
final class CasesCommand implements Callable<Integer> {

    private static final int[] ODD_EXTENTS = {1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 67, 97};

    @Option(names = "--out", required = true, description = "directory to write (created if missing)")
    Path out;

    @Option(names = "--set", defaultValue = "all", description = "paper, odd, split (Wasm kernels split for workers), "
            + "all, or sweep (the large grid `./jitzoo bench space` searches exhaustively; Wasm only) "
            + "(default: ${DEFAULT-VALUE})")
    String set;

    @Option(names = "--seed", defaultValue = "2026", description = "seed of the odd sweep (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--count", defaultValue = "60", description = "kernels in the odd sweep (default: ${DEFAULT-VALUE})")
    int count;

    @Option(names = "--backend", defaultValue = "wasm", description = "wasm or wgsl (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--requests", description = "instead of --set: the requests of a file written by "
            + "`./jitzoo space cases` (one {\"label\", \"request\"} JSON object per line), those of --backend; "
            + "labels.json in --out maps each label to its file")
    Path requests;

    @Option(names = "--cut", description = "products on cut shapes (the test stages' sets): along M, K and N two of the "
            + "schedule's blocks plus the real extent's remainder, at most 3 batches; every loop, edge, workgroup and "
            + "split unit of the real shape at a fraction of its work (`./jitzoo bench sweep` checks them at full size)")
    boolean cut;

    private Backends.Backend chosen;

    @Override
    public Integer call() throws IOException {
        if (!Set.of("paper", "odd", "split", "all", "sweep").contains(set)) {
            throw new IllegalArgumentException("--set must be paper, odd, split, all or sweep, got '" + set + "'");
        }
        chosen = Backends.parse(backend);
        if ((set.equals("sweep") || set.equals("split")) && chosen == Backends.Backend.WGSL) {
            throw new IllegalArgumentException("--set " + set + " is a Wasm set; use --backend wasm");
        }
        Files.createDirectories(out);
        int written = requests != null ? writeRequests() : chosen == Backends.Backend.WGSL ? writeWgsl() : writeWasm();
        System.err.printf("wrote %d kernels to %s%n", written, out);
        return 0;
    }

    private int writeWasm() throws IOException {
        int written = 0;
        if (set.equals("split") || set.equals("all")) {
            written += writeSplit();
        }
        if (set.equals("split")) {
            return written;
        }
        if (!set.equals("odd")) {
            List<Schedule> grid = set.equals("sweep") ? sweepGrid() : paperGrid();
            for (Map.Entry<String, OpSpec> paper : PaperKernels.ALL.entrySet()) {
                for (Schedule schedule : grid) {
                    written += writeIfValid(paper.getKey(), KernelRequest.toOp(paper.getValue()), schedule, Pass.ALL);
                }
            }
        }
        if (set.equals("odd") || set.equals("all")) {
            Random random = new Random(seed);
            for (int i = 0; i < count; i++) {
                written += writeIfValid("odd", oddShape(random), randomSchedule(random), randomPasses(random));
            }
        }
        return written;
    }

    /**
     * Split kernels: K0..K3 with one good schedule in bands of 1, 7 and 64 rows and one unit per
     * batch (or whole M), then {@code count} draws over every op kind on odd shapes, each with a
     * random schedule and a grain from 1 to the op's rows (so some ops have one unit, others more
     * units than any worker count).
     */
    private int writeSplit() throws IOException {
        int written = 0;
        Schedule good = Schedule.registerTile(4, 16, true, 2).withPackB(true);
        for (Map.Entry<String, OpSpec> paper : PaperKernels.ALL.entrySet()) {
            Op op = KernelRequest.toOp(paper.getValue());
            for (int grain : new int[] {1, 7, 64, op.m()}) {
                written += writeIfValid("split-" + paper.getKey(), op, good.withSplit(Split.rows(Math.min(grain, op.m()))),
                        Pass.ALL);
            }
        }
        Random random = new Random(seed);
        int drawn = 0;
        for (int attempt = 0; drawn < count && attempt < 20 * count; attempt++) {
            Op op = oddWgslOp(random, drawn % 12);
            Schedule schedule = op.kind().matmul ? randomSchedule(random) : randomRowSchedule(random);
            int rows = op.kind().matmul ? op.m() : op.dims().get(0);
            drawn += writeIfValid("split", op, schedule.withSplit(Split.rows(1 + random.nextInt(rows))), Pass.ALL);
        }
        return written + drawn;
    }

    /**
     * Every request of the file for the chosen backend, compiled as the service would (WGSL for the
     * device limits the request carries), each distinct kernel once, under the first label that asks
     * for it; {@code labels.json} maps every label to its kernel's file name. The space must produce
     * only kernels that compile: a refusal is a bug and fails the command.
     */
    private int writeRequests() throws IOException {
        int written = 0;
        Map<String, String> files = new HashMap<>(); // kernel id -> file: devices of one kind share kernels
        Map<String, String> labels = new TreeMap<>();
        List<String> lines = Files.readAllLines(requests);
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).isBlank()) {
                continue;
            }
            String label;
            KernelRequest kernel;
            try {
                JsonObject entry = JsonParser.parseString(lines.get(i)).getAsJsonObject();
                label = entry.get("label").getAsString();
                GenerateRequest.Builder request = GenerateRequest.newBuilder();
                JsonFormat.parser().merge(entry.get("request").toString(), request);
                kernel = KernelRequest.of(request.build());
            } catch (RuntimeException | IOException e) {
                throw new IllegalArgumentException(requests + " line " + (i + 1) + " is not a {label, request} object: "
                        + e.getMessage(), e);
            }
            if (!kernel.backend().name().equals(chosen.name())) {
                continue;
            }
            if (cut) {
                kernel = new KernelRequest(kernel.backend(), cut(kernel.op(), kernel.schedule()), kernel.schedule(), kernel.limits());
            }
            String file = files.get(kernel.kernelId());
            if (file == null) {
                file = label + "-" + kernel.kernelId() + "." + chosen.extension;
                try {
                    Artifacts.write(kernel.compile(), out.resolve(file));
                } catch (InvalidKernelException e) {
                    throw new IllegalArgumentException(label + ": the space offered a kernel the compiler refuses: "
                            + e.getMessage(), e);
                }
                files.put(kernel.kernelId(), file);
                written++;
            }
            labels.put(label, file);
        }
        JsonObject index = new JsonObject();
        labels.forEach(index::addProperty);
        Files.writeString(out.resolve("labels.json"), index.toString());
        return written;
    }

    private int writeWgsl() throws IOException {
        int written = 0;
        if (!set.equals("odd")) {
            for (Map.Entry<String, OpSpec> paper : PaperKernels.ALL.entrySet()) {
                for (Schedule schedule : wgslPaperGrid()) {
                    // every point of the grid fits the WebGPU default limits: a refusal is a bug, so let it throw
                    write(paper.getKey(), KernelRequest.toOp(paper.getValue()), schedule, Pass.ALL);
                    written++;
                }
            }
        }
        if (!set.equals("paper")) {
            Random random = new Random(seed);
            int oddWritten = 0;
            for (int attempt = 0; oddWritten < count && attempt < 20 * count; attempt++) {
                Op op = oddWgslOp(random, oddWritten % 12);
                Schedule schedule = op.kind().matmul ? randomWgslSchedule(random) : randomRowSchedule(random);
                oddWritten += writeIfValid("odd", op, schedule, Pass.ALL); // a refused draw is not a case: draw again
            }
            written += oddWritten;
        }
        return written;
    }

    /**
     * The WGSL paper grid, 36 schedules per kernel: register tiles 1x1, 2x2, 4x4 in scalars and
     * 1x4, 2x4, 4x4 in vec4s, each on 8x8 and 16x16 workgroups, reading operands from storage
     * or staging k tiles of 8 or 16 in workgroup memory; unroll 4 throughout.
     */
    static List<Schedule> wgslPaperGrid() {
        List<Schedule> grid = new ArrayList<>();
        int[][] tiles = {{1, 1, 0}, {2, 2, 0}, {4, 4, 0}, {1, 4, 1}, {2, 4, 1}, {4, 4, 1}};
        for (int[] tile : tiles) {
            for (int threads : new int[] {8, 16}) {
                for (int r1 : new int[] {0, 8, 16}) {
                    int y0 = tile[0], x0 = tile[1];
                    grid.add(new Schedule(x0, y0, 0, x0 * threads, y0 * threads, r1, tile[2] == 1, 4));
                }
            }
        }
        return grid;
    }


    /**
     * The {@code draw}-th kind of every twelve cases: six matmuls, two batch matmuls, then add, mul,
     * softmax and layer norm; shapes, B layouts and epilogues drawn at random.
     */
    private static Op oddWgslOp(Random random, int draw) {
        if (draw >= 8) {
            OpKind kind = new OpKind[] {OpKind.ADD, OpKind.MUL, OpKind.SOFTMAX, OpKind.LAYER_NORM}[draw - 8];
            if (kind == OpKind.ADD || kind == OpKind.MUL) {
                int n = random.nextBoolean() ? pick(random) : pick(random) * pick(random);
                return new Op(kind, n);
            }
            return new Op(kind, pick(random), random.nextBoolean() ? pick(random) : 4 * pick(random));
        }
        int m = pick(random), k = pick(random), n = random.nextInt(3) == 0 ? 4 * pick(random) : pick(random);
        boolean batched = draw >= 6;
        Op op = batched ? Op.batchMatmul(1 + random.nextInt(3), m, k, n) : Op.matmul(m, k, n);
        op = op.withTransposedB(random.nextInt(3) == 0);
        if (batched) {
            op = op.withBroadcastB(random.nextInt(3) == 0);
        }
        List<Epilogue> steps = new ArrayList<>();
        if (random.nextBoolean()) {
            steps.add(Epilogue.scale(new float[] {0.125f, -0.5f, 1.7f}[random.nextInt(3)]));
        }
        if (random.nextBoolean()) {
            steps.add(Epilogue.of(Epilogue.Kind.BIAS));
        }
        int activation = random.nextInt(6);
        if (activation < 4) {
            steps.add(Epilogue.of(new Epilogue.Kind[] {Epilogue.Kind.RELU, Epilogue.Kind.GELU_TANH,
                Epilogue.Kind.GELU_ERF, Epilogue.Kind.SILU}[activation]));
        }
        if (random.nextInt(3) == 0) {
            steps.add(Epilogue.of(Epilogue.Kind.RESIDUAL));
        }
        return op.withEpilogue(steps.toArray(Epilogue[]::new));
    }

    private static Schedule randomWgslSchedule(Random random) {
        boolean vectorize = random.nextInt(3) != 0;
        int y0 = 1 + random.nextInt(4);
        int x0 = vectorize ? 4 * (1 + random.nextInt(2)) : 1 + random.nextInt(5);
        int x1 = random.nextBoolean() ? 0 : x0 * (1 << random.nextInt(4));
        int y1 = random.nextBoolean() ? 0 : y0 * (1 << random.nextInt(4));
        int r1 = new int[] {0, 0, 1, 3, 5, 8, 16}[random.nextInt(7)];
        return new Schedule(x0, y0, random.nextInt(4), x1, y1, r1, vectorize, random.nextInt(5));
    }

    private static Schedule randomRowSchedule(Random random) {
        return new Schedule(0, 0, 0, 0, 0, 0, random.nextBoolean(), random.nextInt(4));
    }

    /** Register tiles within 16 accumulators, each plain, with relaxed madd, with packed B, and with both, in both loop orders. */
    static List<Schedule> paperGrid() {
        List<Schedule> grid = new ArrayList<>();
        for (int y0 : new int[] {1, 2, 4, 6}) {
            for (int x0 : new int[] {4, 8, 16, 32}) {
                if (y0 * x0 / 4 > WasmCompiler.MAX_ACCUMULATORS) {
                    continue;
                }
                for (int unroll : new int[] {1, 2}) {
                    for (boolean columnsOuter : new boolean[] {false, true}) {
                        Schedule base = Schedule.registerTile(y0, x0, true, unroll).withColumnsOuter(columnsOuter);
                        grid.add(base);
                        grid.add(base.withRelaxedSimd(true));
                        grid.add(base.withPackB(true));
                        grid.add(base.withRelaxedSimd(true).withPackB(true));
                    }
                }
            }
        }
        return grid;
    }

    /**
     * The large grid an exhaustive search covers, 1152 schedules per kernel: every register tile of
     * y0 in 1, 2, 3, 4, 6, 8 by x0 in 4, 8, 12, 16, 24, 32 within 16 accumulators, by unroll 1, 2, 4,
     * relaxed madd or not, B packed or not, either loop order, and the k loop whole or in blocks of 128.
     */
    static List<Schedule> sweepGrid() {
        List<Schedule> grid = new ArrayList<>();
        for (int y0 : new int[] {1, 2, 3, 4, 6, 8}) {
            for (int x0 : new int[] {4, 8, 12, 16, 24, 32}) {
                if (y0 * x0 / 4 > WasmCompiler.MAX_ACCUMULATORS) {
                    continue;
                }
                for (int unroll : new int[] {1, 2, 4}) {
                    for (int form = 0; form < 8; form++) {
                        for (int r1 : new int[] {0, 128}) {
                            grid.add(Schedule.registerTile(y0, x0, true, unroll).withCacheTile(0, 0, r1)
                                    .withRelaxedSimd((form & 1) != 0).withPackB((form & 2) != 0).withColumnsOuter((form & 4) != 0));
                        }
                    }
                }
            }
        }
        return grid;
    }

    /** Writes one kernel of the chosen backend as {@code LABEL-ID.EXT} with its metadata. */
    private void write(String label, Op op, Schedule schedule, Set<Pass> passes) throws IOException {
        GeneratedKernel kernel = chosen.compile(cut(op, schedule), schedule, passes);
        Artifacts.write(kernel, out.resolve(label + "-" + kernel.kernelId() + "." + chosen.extension));
    }

    /**
     * The op on the shape {@code --cut} gives it with this schedule: along each of M, K and N two blocks
     * plus the real extent's remainder, a block being the schedule's cache or workgroup tile (64 where
     * it sets none) rounded up to a multiple of its register tile, k step and split grain; at most 3
     * batches. Every loop, edge, workgroup and split unit of the real shape is taken, at a fraction of
     * its work. Ops other than products stay as they are.
     */
    private Op cut(Op op, Schedule s) {
        if (!cut || !op.kind().matmul && !OpRules.hasCompactWeights(op.kind().wire)) {
            return op;
        }
        Split split = s.split();
        int rowsGrain = split.axis() == Split.Axis.ROWS ? split.grain() : 1;
        int columnsGrain = split.axis() == Split.Axis.COLUMNS ? split.grain() : 1;
        List<Integer> dims = new ArrayList<>(op.dims());
        int m = op.kind().rank - 3;
        dims.set(m, cut(op.m(), lcm(orDefault(s.y1()), Math.max(1, s.y0()), rowsGrain)));
        dims.set(m + 1, cut(op.k(), lcm(orDefault(s.r1()), Math.max(1, s.r0()) * Math.max(1, s.unroll()))));
        dims.set(m + 2, cut(op.n(), lcm(orDefault(s.x1()), Math.max(1, s.x0()), columnsGrain)));
        if (m > 0) {
            dims.set(0, Math.min(op.batch(), 3));
        }
        return new Op(op.kind(), dims, op.transposeB(), op.broadcastB(), op.epilogue(), op.epsilon(), op.window());
    }

    private static int orDefault(int block) {
        return block > 0 ? block : 64;
    }

    private static int lcm(int... values) {
        long l = 1;
        for (int v : values) {
            l = l / gcd(l, v) * v;
        }
        return (int) Math.min(l, Integer.MAX_VALUE / 4);
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /** Two blocks and the extent's remainder, never more than the extent. */
    private static int cut(int extent, int block) {
        return (int) Math.min(extent, extent % block + 2L * block);
    }

    /** 1 when written; 0 when the compiler refuses a drawn schedule (say, over a limit), which is not a case. */
    private int writeIfValid(String label, Op op, Schedule schedule, Set<Pass> passes) throws IOException {
        try {
            write(label, op, schedule, passes);
            return 1;
        } catch (InvalidKernelException e) {
            return 0;
        }
    }

    private static Op oddShape(Random random) {
        int m = pick(random), k = pick(random), n = pick(random);
        return random.nextInt(4) == 0 ? Op.batchMatmul(1 + random.nextInt(3), m, k, n) : Op.matmul(m, k, n);
    }

    private static int pick(Random random) {
        return ODD_EXTENTS[random.nextInt(ODD_EXTENTS.length)];
    }

    private static Schedule randomSchedule(Random random) {
        while (true) {
            boolean vectorize = random.nextInt(4) != 0;
            int y0 = 1 + random.nextInt(4);
            int x0 = vectorize ? 4 * (1 + random.nextInt(4)) : 1 + random.nextInt(6);
            if (y0 * (vectorize ? x0 / 4 : x0) > WasmCompiler.MAX_ACCUMULATORS) {
                continue;
            }
            int x1 = random.nextBoolean() ? 0 : x0 * (1 + random.nextInt(4));
            int y1 = random.nextBoolean() ? 0 : y0 * (1 + random.nextInt(4));
            int r1 = new int[] {0, 0, 1, 3, 5, 16, 64}[random.nextInt(7)];
            return new Schedule(x0, y0, random.nextInt(5), x1, y1, r1, vectorize, random.nextInt(5),
                    vectorize && random.nextBoolean(), random.nextInt(3) == 0, random.nextBoolean());
        }
    }

    private static Set<Pass> randomPasses(Random random) {
        Set<Pass> passes = EnumSet.noneOf(Pass.class);
        for (Pass pass : Pass.values()) {
            if (random.nextInt(4) != 0) {
                passes.add(pass);
            }
        }
        return passes;
    }
}
