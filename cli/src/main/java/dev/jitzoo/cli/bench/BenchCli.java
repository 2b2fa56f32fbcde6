package dev.jitzoo.cli.bench;

import dev.jitzoo.cli.suite.Models;
import dev.jitzoo.cli.suite.Prereqs;
import dev.jitzoo.cli.suite.Suite;
import dev.jitzoo.cli.test.TestCli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Unmatched;

/**
 * {@code jitzoo bench NAME}: benchmarks that print figures side by side. Each generates what it
 * times with this jar's commands, then hands it to the harness (Node) or, for whole models, to the
 * SDK against a private stack. Options a bench does not take itself go to the harness or the SDK
 * ({@code --json}, {@code --quick}, {@code --rounds}...).
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Benchmarks that print figures side by side; --json prints them as one JSON object on the last line.",
        subcommands = {BenchCli.Kernels.class, BenchCli.Passes.class, BenchCli.Codegen.class, BenchCli.Space.class,
                BenchCli.Dynamic.class, BenchCli.Sweep.class, BenchCli.SpaceSize.class, BenchCli.Model.class, BenchCli.Exports.class, BenchCli.Generate.class, BenchCli.Extended.class,
                BenchCli.Browser.class, BenchCli.WebGpu.class, BenchCli.ZooLoad.class, BenchCli.GatewayLoad.class, BenchCli.Scale.class})
public final class BenchCli {

    /** What every bench shares: the suite, and the options it passes on. */
    abstract static class Bench implements Runnable {
        final Suite suite = Suite.here();

        /** Answered here, before any model is written or stack started (the options it passes on are in its description). */
        @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
        boolean help;

        @Unmatched
        List<String> passOn = new ArrayList<>();

        void inTempDir(java.util.function.Consumer<Path> body) {
            Suite.inTempDir("jitzoo-bench.", body);
        }

        /** {@code java -cp <this jar and its lib> MAIN <options passed on>}: a bench that runs in a JVM of its own. */
        List<String> javaMain(Class<?> main) {
            List<String> command = new ArrayList<>(Suite.javaMain(main, List.of()));
            command.addAll(passOn);
            return command;
        }

        /** {@code node FLAGS client-sdk-js/tools/dist/SCRIPT <options passed on>}: one of the SDK's benches. */
        List<String> sdkBench(String script, String... nodeFlags) {
            List<String> command = new ArrayList<>(List.of("node"));
            command.addAll(List.of(nodeFlags));
            command.add(suite.path("client-sdk-js/tools/dist/" + script).toString());
            command.addAll(passOn);
            return command;
        }

        String[] harnessArgs(String... head) {
            List<String> all = new ArrayList<>(List.of(head));
            all.addAll(passOn);
            return all.toArray(String[]::new);
        }
    }

    @Command(name = "kernels", description = "best Wasm schedule of K0..K3 beside onnxruntime-web, TF.js and the SIMD peak, "
            + "of MiniLM's int8 and 4-bit matmuls beside onnxruntime-web's own (MatMulInteger, MatMulNBits), and of convnets' "
            + "convolutions beside its Conv, with the peak of their instruction (dot, mul+add); "
            + "with --threads T, the best split kernel on T threads beside one thread and onnxruntime-web on T "
            + "(harness options: --out DIR, --quick, --json)")
    static final class Kernels extends Bench {
        /** MiniLM's three products as int8 matmuls: what its int8 file runs. */
        private static final String INT8_OPS = "matmul_int8:128x384x384,matmul_int8:128x384x1536,matmul_int8:128x1536x384";
        /** The same as 4-bit matmuls (its q4 form), and the widest as a decode step (one row). */
        private static final String Q4_OPS = "matmul_q4:128x384x384,matmul_q4:128x384x1536,matmul_q4:128x1536x384,matmul_q4:1x384x1536";
        /**
         * Convolutions of the common convnets: ResNet's stem (7x7, stride 2) and 3x3 block, ConvNeXt's depthwise 7x7 and
         * its 1x1 expansion, and a speech encoder's 1-D conv over 1500 frames.
         */
        private static final String CONV_OPS = "conv:1x3x224x224x64x7x7/stride=2x2/pads=3x3x3x3,conv:1x64x56x56x64x3x3/pads=1x1x1x1,"
                + "conv:1x96x56x56x96x7x7/pads=3x3x3x3/group=96,conv:1x96x56x56x384x1x1,conv:1x80x1x1500x384x1x3/pads=0x1x0x1";

        @Option(names = "--threads", defaultValue = "1",
                description = "threads: above 1, split kernels on the SDK's worker pool (default: ${DEFAULT-VALUE})")
        int threads;

        @Override
        public void run() {
            if (threads < 1) {
                throw new IllegalArgumentException("--threads must be at least 1, got " + threads);
            }
            new Prereqs(suite).harness();
            inTempDir(dir -> {
                if (threads > 1) {
                    Suite.say("the space service's candidates for this machine on 1 thread, and split for " + threads);
                    suite.jitzoo("space", "cases", "--device", "this-machine-wasm", "--backend", "wasm", "--out", dir + "/lite.jsonl");
                    suite.jitzoo("space", "cases", "--device", "this-machine-wasm", "--backend", "wasm", "--threads",
                            String.valueOf(threads), "--out", dir + "/split.jsonl");
                    suite.jitzoo("codegen", "cases", "--requests", dir + "/lite.jsonl", "--out", dir.toString());
                    suite.jitzoo("codegen", "cases", "--requests", dir + "/split.jsonl", "--out", dir.toString());
                    Suite.say("timing every candidate in V8, then the best on " + threads + " threads beside one thread and "
                            + "onnxruntime-web (a few minutes)");
                    suite.harness("bench kernels", harnessArgs("bench", "kernels", dir.toString(), "--threads", String.valueOf(threads)));
                    return;
                }
                Suite.say("generating the paper grid of K0..K3 candidates, and the space service's candidates for this machine "
                        + "(K0..K3, MiniLM's int8 and 4-bit matmuls, convnets' convolutions)");
                suite.jitzoo("codegen", "cases", "--out", dir.toString(), "--set", "paper");
                suite.jitzoo("space", "cases", "--device", "this-machine-wasm", "--backend", "wasm", "--out", dir + "/lite.jsonl",
                        "--op", "K0,K1,K2,K3," + INT8_OPS + "," + Q4_OPS + "," + CONV_OPS);
                suite.jitzoo("codegen", "cases", "--requests", dir + "/lite.jsonl", "--out", dir.toString());
                Suite.say("timing every candidate in V8, then the best beside onnxruntime-web and TF.js, the int8, 4-bit and conv "
                        + "ones beside onnxruntime-web's own ops (a few minutes)");
                suite.harness("bench kernels", harnessArgs("bench", "kernels", dir.toString()));
            });
        }
    }

    @Command(name = "passes", description = "kernel latency with each Wasm pass off and on (paper Table 5)")
    static final class Passes extends Bench {
        @Option(names = "--op", defaultValue = "K0", description = "K0..K3 (default: ${DEFAULT-VALUE})")
        String op;

        @Override
        public void run() {
            new Prereqs(suite).harness();
            inTempDir(dir -> {
                suite.jitzoo("codegen", "passes", "--out", dir.toString(), "--op", op);
                suite.harness("bench passes", harnessArgs("bench", "passes", dir.toString()));
            });
        }
    }

    @Command(name = "codegen", description = "time to generate one candidate (JMH) beside C → clang -O3 → wasm-ld, "
            + "and both kernels' speed (--quick for a short JMH run)")
    static final class Codegen extends Bench {
        @Option(names = "--quick", description = "a short JMH run")
        boolean quick;

        @Override
        public void run() {
            Prereqs prereqs = new Prereqs(suite);
            prereqs.harness();
            if (!Prereqs.onPath("clang") || !Prereqs.onPath("wasm-ld")) {
                if ("root".equals(System.getProperty("user.name"))) {
                    prereqs.apt("clang", "lld");
                } else {
                    Suite.say("clang or wasm-ld missing (apt-get install clang lld): the conventional pipeline is skipped");
                }
            }
            inTempDir(dir -> {
                Suite.say("generation time: ours under JMH, then C → clang -O3 → wasm-ld for the same kernel");
                String figures = CodegenBench.measure(dir, quick);
                Path json = dir.resolve("generation.json");
                write(json, figures);
                Suite.say("both kernels timed in V8");
                suite.harness("bench codegen", harnessArgs("bench", "codegen", dir.toString(), json.toString()));
            });
        }
    }

    @Command(name = "space", description = "the lite space's best against an exhaustive sweep of 1152 schedules per kernel, "
            + "and how early the ordering reaches it (tens of minutes; --quick for a rough pass)")
    static final class Space extends Bench {
        @Option(names = "--op", defaultValue = "K0,K1,K2,K3", description = "paper kernels, comma-separated (default: ${DEFAULT-VALUE})")
        String ops;

        @Override
        public void run() {
            new Prereqs(suite).harness();
            inTempDir(dir -> {
                Suite.say("the space service's Wasm candidates for this machine (" + ops + "), and the exhaustive sweep grid");
                suite.jitzoo("space", "cases", "--device", "this-machine-wasm", "--backend", "wasm", "--op", ops,
                        "--out", dir + "/lite.jsonl");
                suite.jitzoo("codegen", "cases", "--requests", dir + "/lite.jsonl", "--out", dir + "/lite");
                suite.jitzoo("codegen", "cases", "--set", "sweep", "--out", dir + "/sweep");
                Suite.say("timing every candidate in V8 (tens of minutes; --quick for a rough pass)");
                suite.harness("bench space", harnessArgs("bench", "space", dir + "/lite", dir + "/sweep"));
            });
        }
    }

    @Command(name = "dynamic", description = "composed uKernel plans (FTuner) for a MatMul whose M varies against padding M "
            + "to a multiple of T and exact kernels (--quick for every eighth extent)")
    static final class Dynamic extends Bench {
        @Option(names = "--shape", defaultValue = "1..512,768,768", description = "LO..HI,K,N (default, BERT-base: ${DEFAULT-VALUE})")
        String shape;

        @Option(names = "--padded-tile", defaultValue = "64", description = "the tile M is padded to (default: ${DEFAULT-VALUE})")
        int tile;

        @Override
        public void run() {
            new Prereqs(suite).harness();
            inTempDir(dir -> {
                Suite.say("uKernel set and a plan per extent for M = " + shape + ", and the kernels to compare (padded to "
                        + tile + ", and exact)");
                suite.jitzoo(dir.resolve("plans.json"), "space", "dynamic", "--shape", shape, "--requests",
                        dir + "/kernels.jsonl", "--padded-tile", String.valueOf(tile), "--exact");
                suite.jitzoo("codegen", "cases", "--requests", dir + "/kernels.jsonl", "--out", dir + "/kernels");
                Suite.say("timing every extent in V8 (a few minutes; --quick for every eighth)");
                suite.harness("bench dynamic", harnessArgs("bench", "dynamic", dir + "/kernels", dir + "/plans.json"));
            });
        }
    }

    @Command(name = "sweep", description = "every kernel of the kernels and wgsl test stages at full size (the stages cut the "
            + "products' shapes): the paper grids and every bundled device's lite space of K0..K3 at BERT-base's shapes, the "
            + "quantized, float16-weight and conv spaces at MiniLM's and convnets' shapes, odd shapes and split kernels, each "
            + "checked against the float64 reference, Wasm in V8 and WGSL in Dawn (tens of minutes; --backend wasm|wgsl|all; "
            + "harness options: --adapter swiftshader|gpu, --json)")
    static final class Sweep extends Bench {
        @Option(names = "--backend", defaultValue = "all", description = "wasm, wgsl or all (default: ${DEFAULT-VALUE})")
        String backend;

        @Override
        public void run() {
            if (!List.of("wasm", "wgsl", "all").contains(backend)) {
                throw new IllegalArgumentException("--backend must be wasm, wgsl or all, got '" + backend + "'");
            }
            Prereqs prereqs = new Prereqs(suite);
            prereqs.harness();
            Map<String, String> env = backend.equals("wasm") ? Map.of() : prereqs.webgpu();
            inTempDir(dir -> {
                List<String> args = new ArrayList<>(List.of("check"));
                if (!backend.equals("wgsl")) {
                    args.add(TestCli.writeWasmCases(suite, dir, false));
                }
                if (!backend.equals("wasm")) {
                    args.add(TestCli.writeWgslCases(suite, dir, false));
                }
                Suite.say("each kernel run on seeded inputs and compared (progress every 50)");
                suite.harness("bench sweep", env, harnessArgs(args.toArray(String[]::new)));
            });
        }
    }

    @Command(name = "space-size", description = "lite space size of K0..K3 on every bundled device beside the naive space "
            + "and the paper's Table 6")
    static final class SpaceSize extends Bench {
        @Override
        public void run() {
            List<String> args = new ArrayList<>(List.of("space", "size"));
            args.addAll(passOn);
            suite.jitzoo(args.toArray(String[]::new));
        }
    }

    @Command(name = "model", description = "on a private stack: the BERT-base layer and the MiniLM-shaped encoder tuned while "
            + "they infer, against onnxruntime-web (1 thread), untuned, with a fresh and a warm zoo (SDK options: --models DIR,DIR "
            + "(every .onnx file there, each judged by its form's tolerance), --only NAME,..., --seq N, "
            + "--rounds N, --lengths L,.., --threads N: jitzoo's kernels split for N threads against onnxruntime-web on N)")
    static final class Model extends Bench {
        @Override
        public void run() {
            Path models = new Models(suite).ensure();
            Suite.say("a private stack; then each model tuned by a new device kind, served to a second one from the zoo, "
                    + "and timed beside onnxruntime-web (minutes)");
            suite.withPrivateStack("bench model", Map.of("JITZOO_MODELS", models.toString()), suite.root(),
                    sdkBench("bench-model.js", "--experimental-wasm-relaxed-simd"));
        }
    }

    @Command(name = "exports", description = "on a private stack: users' own ONNX files (real exporter output: fp32, "
            + "int8, 4-bit, fp16) tuned while they infer, beside onnxruntime-web at 1 and 2 threads, each in a process of "
            + "its own: speed, host steps, load and first inference, memory (SDK options: --models DIR (default "
            + "../shared/models/real-exports/bench), --seq N, --threads N,N, --rounds N, --tune-seconds N)")
    static final class Exports extends Bench {
        @Override
        public void run() {
            new Prereqs(suite).sdk();
            Suite.say("a private stack; then each file tuned by a new device kind and timed beside onnxruntime-web, at each "
                    + "thread count, then each runtime's memory alone (minutes)");
            suite.withPrivateStack("bench exports", Map.of(), suite.root(),
                    sdkBench("bench-exports.js", "--experimental-wasm-relaxed-simd"));
        }
    }

    @Command(name = "generate", description = "on a private stack: decoders generating (greedy, a 64-token prompt, 64 new "
            + "tokens) on jitzoo tuned beside onnxruntime-web driving the same loop over the same file, at 1 and 2 threads, each "
            + "in a process of its own: prefill ms, decode tokens/s, the same tokens (SDK options: --models DIR (default "
            + "../shared/models/real-exports/bench), --prompt N, --new N, --threads N,N, --rounds N, --tune-seconds N)")
    static final class Generate extends Bench {
        @Override
        public void run() {
            new Prereqs(suite).sdk();
            Suite.say("a private stack; then each decoder generates on jitzoo (tuning) and beside onnxruntime-web, at each "
                    + "thread count (minutes)");
            suite.withPrivateStack("bench generate", Map.of(), suite.root(),
                    sdkBench("bench-generate.js", "--experimental-wasm-relaxed-simd"));
        }
    }

    @Command(name = "extended", description = "on a private stack: kernels and time until a new device kind's incumbent is "
            + "within 5%% of its best, alone in the zoo and with a similar kind's results")
    static final class Extended extends Bench {
        @Override
        public void run() {
            new Prereqs(suite).sdk();
            Suite.say("a private stack; then for each op a device kind alone in the zoo tunes it, and another kind beside it "
                    + "(a few minutes)");
            suite.withPrivateStack("bench extended", Map.of(), suite.root(), sdkBench("bench-extended.js"));
        }
    }

    @Command(name = "browser", description = "on a private stack, in headless Chromium (or Firefox, WebKit, all three: --engine): "
            + "the first inference (a new device kind, the zoo's elected kernels, onnxruntime-web), the BERT-base layer tuned in "
            + "the page's worker (main-thread long tasks counted) and on its main thread, timed beside onnxruntime-web in the same "
            + "page, a later page's first inference on the kept kernels, the browser builds' size (SDK options: "
            + "--engine chromium|firefox|webkit|all, --model FILE, --seq N, --rounds N)")
    static final class Browser extends Bench {
        @Override
        public void run() {
            Path models = new Models(suite).ensure();
            Prereqs prereqs = new Prereqs(suite);
            prereqs.sdk();
            prereqs.webgpu(); // Chromium
            if (passOn.contains("--engine")) {
                prereqs.engines(); // Firefox and WebKit
            }
            Suite.say("a private stack; then a page tunes the model in its worker and on its main thread, and times it beside "
                    + "onnxruntime-web (a few minutes)");
            suite.withPrivateStack("bench browser", Map.of("JITZOO_MODELS", models.toString()), suite.root(), sdkBench("bench-browser.js"));
        }
    }

    @Command(name = "webgpu", description = "on a private stack, in Node on Dawn (SwiftShader, or a GPU with --adapter gpu): the "
            + "MiniLM-shaped encoder on WGSL kernels, every lite-space kernel of its WGSL session checked and timed, one submit "
            + "an inference against one per op (host time and latency), the first inference cold and with the kept kernels' "
            + "pipelines (SDK options: --seq N, --rounds N, --adapter swiftshader|gpu, --tune-seconds N)")
    static final class WebGpu extends Bench {
        @Override
        public void run() {
            Path models = new Models(suite).ensure();
            Prereqs prereqs = new Prereqs(suite);
            prereqs.sdk();
            Map<String, String> env = new java.util.HashMap<>(prereqs.webgpu());
            env.put("JITZOO_MODELS", models.toString());
            Suite.say("a private stack; then the model tunes on WebGPU, reloads with its kept kernels, and runs batched beside "
                    + "per-op submits (a few minutes on SwiftShader)");
            suite.withPrivateStack("bench webgpu", env, suite.root(), sdkBench("bench-webgpu.js"));
        }
    }

    @Command(name = "zoo", description = "on a private stack: the zoo's ingest throughput from Kafka with elections, as it "
            + "started and warm, beside its store's own, report to election latency, Resolve latency at a steady rate beside a "
            + "bare gRPC server's, and a poisoning drill at growing attacker shares "
            + "(options: --reports N (5000, as started), --warmup-reports N (20000), --warm-reports N (20000), --rate N "
            + "requests/s (1000), --json), and an adversary drill (a 1,000-session flood from one origin, a forged peak)")
    static final class ZooLoad extends Bench {
        @Override
        public void run() {
            Suite.say("a private stack; then reports published to Kafka, Resolve under load, and a poisoning drill (minutes)");
            // the zoo as in production: an election needs three network origins
            suite.withPrivateStack("bench zoo", Map.of("JITZOO_ZOO_MIN_ORIGINS", "3"), suite.root(), javaMain(ZooBench.class));
        }
    }

    @Command(name = "gateway", description = "on a private stack whose gateway has a 1 GB heap: sessions held at once and "
            + "the heap they take, Welcome latency in a burst of page loads, the gateway's generation-to-offer latency, "
            + "reports acknowledged a second beside a bare Vert.x echo server on the same load (options: --sessions N (10000), "
            + "--burst N (1000), --burst-seconds S (10), --report-sessions N (1000), --report-rounds N (3), --report-warm-up-rounds N (4), --phase-timeout S (300), "
            + "--only burst,reports,held (every phase after the warm-up), --zoo-ingesting (the zoo and its store not held while a "
            + "report round is timed), --json)")
    static final class GatewayLoad extends Bench {
        @Override
        public void run() {
            Suite.say("a private stack (its gateway: 1 GB heap, client addresses from X-Forwarded-For); then the load (minutes)");
            // JITZOO_BENCH_GATEWAY_JAVA_OPTS adds JVM options to the bench's gateway: a profiler, a flight recording
            String extra = System.getenv().getOrDefault("JITZOO_BENCH_GATEWAY_JAVA_OPTS", "");
            Map<String, String> gateway = Map.of("JITZOO_GATEWAY_JAVA_OPTS", ("-Xmx1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 "
                    + "-XX:-UseDynamicNumberOfCompilerThreads " + extra).trim(),
                    "JITZOO_GATEWAY_TRUST_FORWARDED_FOR", "true");
            suite.withPrivateStack("bench gateway", gateway, suite.root(), javaMain(GatewayBench.class));
        }
    }

    @Command(name = "scale", description = "beside a private stack: what a second instance adds, as a second pod would: 1 against 2 "
            + "zoo consumers on a topic of 2 partitions (reports/s), and 1 against 2 codegen instances behind a gateway that "
            + "balances over their addresses as the chart configures (kernels/s); medians of alternating rounds after a warm-up, "
            + "the work per CPU second of each service and its efficiency with two instances (per CPU second, 2 against 1; "
            + "with and without the JIT compilers' CPU; and one codegen at half the sessions in flight, the load each of two sees), "
            + "how the two shared the work, partitions and connections, each service's "
            + "resident memory and what its JVM holds outside the heap; then a gateway with the chart's JVM options holding "
            + "sessions, its resident memory (options: --rounds N (3), --warmup N (4 times a round of one, one of two and one "
            + "more that gives each of the two as much work as the one alone), --reports N (20000), --sessions N (200), "
            + "--held N (10000), --json)")
    static final class Scale extends Bench {
        @Override
        public void run() {
            Suite.say("a private stack; then zoo consumers and codegen instances of their own beside it, one and two at a time "
                    + "(a few minutes)");
            suite.withPrivateStack("bench scale", Map.of(), suite.root(), javaMain(ScaleBench.class));
        }
    }

    static void write(Path file, String text) {
        try {
            Files.writeString(file, text);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
