package dev.jitzoo.codegen.cli;

import dev.jitzoo.codegen.kernel.GeneratedKernel;
import dev.jitzoo.codegen.kernel.InvalidKernelException;
import dev.jitzoo.codegen.kernel.Op;
import dev.jitzoo.codegen.kernel.Schedule;
import dev.jitzoo.codegen.kernel.WasmCompiler;
import dev.jitzoo.codegen.wasm.passes.Pass;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./jitzoo codegen cases}: a case directory for the harness to check or time — every kernel
 * as {@code NAME.wasm} beside {@code NAME.json}. The {@code paper} set is a register-tile grid over
 * K0..K3 with each Wasm option; the {@code odd} set is a seeded sweep of the whole schedule space
 * (passes included) over shapes that miss every tile: primes, 1, extents below the tile sizes.
 */
@Command(name = "cases", mixinStandardHelpOptions = true,
        description = "Writes a case directory (NAME.wasm + NAME.json per kernel) for the harness.")
final class CasesCommand implements Callable<Integer> {

    private static final int[] ODD_EXTENTS = {1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 67, 97};

    @Option(names = "--out", required = true, description = "directory to write (created if missing)")
    Path out;

    @Option(names = "--set", defaultValue = "all", description = "paper, odd or all (default: ${DEFAULT-VALUE})")
    String set;

    @Option(names = "--seed", defaultValue = "2026", description = "seed of the odd sweep (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--count", defaultValue = "60", description = "kernels in the odd sweep (default: ${DEFAULT-VALUE})")
    int count;

    private final WasmCompiler compiler = new WasmCompiler();

    @Override
    public Integer call() throws IOException {
        if (!Set.of("paper", "odd", "all").contains(set)) {
            throw new IllegalArgumentException("--set must be paper, odd or all, got '" + set + "'");
        }
        Files.createDirectories(out);
        int written = 0;
        if (!set.equals("odd")) {
            for (Map.Entry<String, Op> paper : PaperShapes.ALL.entrySet()) {
                for (Schedule schedule : paperGrid()) {
                    written += write(paper.getKey(), paper.getValue(), schedule, Pass.ALL);
                }
            }
        }
        if (!set.equals("paper")) {
            Random random = new Random(seed);
            for (int i = 0; i < count; i++) {
                written += write("odd", oddShape(random), randomSchedule(random), randomPasses(random));
            }
        }
        System.err.printf("wrote %d kernels to %s%n", written, out);
        return 0;
    }

    /** Register tiles within 16 accumulators, each plain, with relaxed madd, with packed B, and with both. */
    static List<Schedule> paperGrid() {
        List<Schedule> grid = new ArrayList<>();
        for (int y0 : new int[] {1, 2, 4, 6}) {
            for (int x0 : new int[] {4, 8, 16, 32}) {
                if (y0 * x0 / 4 > WasmCompiler.MAX_ACCUMULATORS) {
                    continue;
                }
                Schedule base = Schedule.registerTile(y0, x0, true, 2);
                grid.add(base);
                grid.add(base.withRelaxedSimd(true));
                grid.add(base.withPackB(true));
                grid.add(base.withRelaxedSimd(true).withPackB(true));
            }
        }
        return grid;
    }

    private int write(String label, Op op, Schedule schedule, Set<Pass> passes) throws IOException {
        GeneratedKernel kernel;
        try {
            kernel = compiler.compile(op, schedule, passes);
        } catch (InvalidKernelException e) {
            return 0; // a drawn schedule the compiler refuses (say, over the size budget) is not a case
        }
        Artifacts.write(kernel, out.resolve(label + "-" + kernel.kernelId() + ".wasm"));
        return 1;
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
                    vectorize && random.nextBoolean(), random.nextInt(3) == 0);
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
