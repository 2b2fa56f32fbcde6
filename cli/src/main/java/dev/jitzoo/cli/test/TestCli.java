package dev.jitzoo.cli.test;

import dev.jitzoo.cli.suite.Models;
import dev.jitzoo.cli.suite.Prereqs;
import dev.jitzoo.cli.suite.Suite;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code jitzoo test [STAGE...]}: every test, in stages that also run alone, then one summary over
 * the stages and every JUnit report they wrote. A failed stage does not stop the others.
 */
@Command(name = "test", mixinStandardHelpOptions = true,
        description = {"Runs the tests in stages (all by default), then one summary; exits 1 if a stage failed.",
                "  java     Maven: unit tests and Quarkus tests against real Kafka, Redis and MongoDB-wire servers",
                "  sdk      TypeScript: the SDK and its model engine against onnxruntime-web (every real export in",
                "           ../shared/models/real-exports) and ONNX's node tests; buf lint",
                "  kernels  every generated Wasm kernel and composed dynamic-shape plan run in V8 against a float64 reference",
                "           (the products on cut shapes: every schedule, block, edge and split unit; full size: ./jitzoo bench sweep)",
                "  browser  the SDK's primitive microbenchmark in headless Chromium, every pair checked there",
                "  wgsl     every generated WGSL kernel compiled by Tint and run on SwiftShader (Dawn), the products cut likewise",
                "  e2e      a private stack on other ports: the skeleton thread, the real exports on the suite's Wasm and WGSL",
                "           kernels, a model tuned and served from the zoo (in Node",
                "           and in headless Chromium, Firefox and WebKit), bad input",
                "  deploy   the Helm chart linted, rendered over several value sets and checked against the Kubernetes API",
                "           models, bad values refused; the five images built (./jitzoo images: the services', tune's), inspected, one started by podman;",
                "           the chart's pods run by podman kube play beside a private stack's stores, a tune through them across pod kills"})
public final class TestCli implements Callable<Integer> {

    @Parameters(arity = "0..*", paramLabel = "STAGE", description = "java, sdk, kernels, browser, wgsl, e2e, deploy")
    List<String> chosen = new ArrayList<>();

    private final Suite suite = Suite.here();
    private final Prereqs prereqs = new Prereqs(suite);

    @Override
    public Integer call() {
        Map<String, Runnable> stages = stages();
        List<String> run = chosen.isEmpty() ? List.copyOf(stages.keySet()) : chosen;
        for (String name : run) {
            if (!stages.containsKey(name)) {
                throw new IllegalArgumentException("unknown stage '" + name + "'; stages: " + String.join(", ", stages.keySet()));
            }
        }
        Instant started = Instant.now();
        record Result(String stage, boolean passed, Duration took) {
        }
        List<Result> results = new ArrayList<>();
        for (String name : run) {
            Instant stageStart = Instant.now();
            boolean passed;
            try {
                stages.get(name).run();
                passed = true;
            } catch (Suite.StepFailed | IllegalStateException e) {
                Suite.say(name + ": " + e.getMessage());
                passed = false;
            }
            results.add(new Result(name, passed, Duration.between(stageStart, Instant.now())));
        }
        System.out.println("stages:");
        results.forEach(r -> System.out.printf(Locale.ROOT, "  %-8s %-6s in %s%n", r.stage(), r.passed() ? "passed" : "FAILED",
                minutes(r.took())));
        System.out.println(JunitReports.since(suite.root(), started).summary());
        return results.stream().allMatch(Result::passed) ? 0 : 1;
    }

    private Map<String, Runnable> stages() {
        Map<String, Runnable> stages = new LinkedHashMap<>();
        stages.put("java", this::java);
        stages.put("sdk", this::sdk);
        stages.put("kernels", this::kernels);
        stages.put("browser", this::browser);
        stages.put("wgsl", this::wgsl);
        stages.put("e2e", this::e2e);
        stages.put("deploy", this::deploy);
        return stages;
    }

    private void java() {
        Suite.say("Java tests (Maven: unit tests and Quarkus tests against real Kafka, Redis, MongoDB-wire servers)");
        suite.run("Java tests", suite.root(), List.of(suite.path("mvnw").toString(), "-B", "install"));
    }

    private void sdk() {
        Path models = new Models(suite).ensure();
        Map<String, String> env = new LinkedHashMap<>(prereqs.webgpu()); // the WebGPU executor's tests run on Dawn over SwiftShader
        env.put("JITZOO_MODELS", models.toString());
        Suite.say("TypeScript tests (the model engine against onnxruntime-web, ONNX's node tests, the WebGPU executor on SwiftShader)");
        suite.run("TypeScript tests", suite.path("client-sdk-js"), env,
                List.of("npm", "test", "--", "--reporter=default", "--reporter=junit", "--outputFile.junit=test-results/unit.xml"));
        suite.run("buf lint", suite.path("proto"), List.of(suite.path("client-sdk-js/node_modules/.bin/buf").toString(), "lint"));
    }

    /** The int8 matmuls whose lite spaces the kernels stage runs whole: MiniLM's three products, and odd edges. */
    private static final String INT8_CASES = "matmul_int8:128x384x384,matmul_int8:128x384x1536,matmul_int8:128x1536x384,"
            + "matmul_int8:7x33x19";

    /** The 4-bit matmuls whose lite spaces the kernels stage runs whole: MiniLM's widest product, a decode step, odd edges. */
    private static final String Q4_CASES = "matmul_q4:128x384x1536,matmul_q4:1x384x1536,matmul_q4:7x33x19";
    /** The float16-weight matmuls likewise. */
    private static final String F16_CASES = "matmul_f16:128x384x1536,matmul_f16:1x384x1536,matmul_f16:7x33x19";
    /** One-row float matmuls (decode steps), whose kernels split by columns on threads: GPT-2's widest, its FFN's down projection, odd edges. */
    private static final String DECODE_CASES = "matmul:1x384x1152,matmul:1x1536x384,matmul:1x33x19";
    /** Convolutions likewise: a same-padded 3x3, a depthwise stride 2, a 1-D one, a 7x7 stem. */
    private static final String CONV_CASES = "conv:1x32x14x14x32x3x3/pads=1x1x1x1,conv:1x32x15x15x32x3x3/stride=2x2/pads=1x1x1x1/group=32,"
            + "conv:1x16x1x50x24x1x5/pads=0x2x0x2,conv:1x3x32x32x16x7x7/stride=2x2/pads=3x3x3x3";
    /** Convolutions whose WGSL lite space (one GPU's) the wgsl stage runs whole: batch 2, an odd depthwise stride 2, a dilated 1-D one. */
    private static final String CONV_WGSL_CASES = "conv:2x8x13x14x12x3x3/pads=1x1x1x1,conv:1x8x15x15x8x3x3/stride=2x2/pads=1x0x1x1/group=8,"
            + "conv:1x6x1x40x10x1x5/dilation=1x2/pads=0x4x0x3/group=2";
    /**
     * Compact-weight matmuls whose WGSL lite space the wgsl stage runs whole: float16 B read as vec4s
     * (two words) and one half at a time; 4-bit B over two blocks (the last padded), odd columns.
     */
    private static final String COMPACT_WGSL_CASES = "matmul_f16:33x64x128,matmul_f16:7x13x5,matmul_q4:33x64x128,matmul_q4:7x40x5";

    /** Generated Wasm kernels and dynamic-shape plans in V8, after the harness's own unit tests. */
    private void kernels() {
        prereqs.harness();
        Path results = harnessResults();
        Suite.say("harness unit tests");
        List<String> unit = new ArrayList<>(List.of("node", "--test", "--test-reporter=spec", "--test-reporter-destination=stdout",
                "--test-reporter=junit", "--test-reporter-destination=" + results.resolve("unit.xml")));
        unit.addAll(files(suite.path("harness/test"), ".test.mjs"));
        suite.run("harness tests", suite.path("harness"), unit);
        inCases(cases -> {
            Suite.say("generated Wasm kernels in V8: K0..K3 candidates (paper grid, and every lite-space candidate of each "
                    + "bundled device), every int8, 4-bit, float16-weight and conv lite-space candidate on MiniLM's, convnets' and odd shapes (unsplit, and split for 2 threads), "
                    + "one-row products split by columns for 2 threads, "
                    + "odd shapes, split kernels (1 to 4 workers, share by share and on threads), the microbenchmark pairs; "
                    + "products on cut shapes (every block, edge and split unit of the real ones; `./jitzoo bench sweep` runs them at full size)");
            String wasm = writeWasmCases(suite, cases, true);
            suite.jitzoo("codegen", "microbench", "--out", cases + "/microbench", "--op", "K0");
            suite.harness("Wasm kernels in V8", "check", wasm, cases + "/microbench", "--junit",
                    results.resolve("wasm-v8.xml").toString(), "--suite", "kernels.wasm.v8");
            Suite.say("dynamic shapes: the uKernels of a MatMul with M in 1..70 and every extent's composed plan, in V8");
            suite.jitzoo(cases.resolve("plans.json"), "space", "dynamic", "--shape", "1..70,37,29", "--requests",
                    cases + "/dynamic.jsonl");
            suite.jitzoo("codegen", "cases", "--requests", cases + "/dynamic.jsonl", "--out", cases + "/dynamic");
            suite.harness("composed plans in V8", "check-plans", cases + "/dynamic", cases + "/plans.json", "--junit",
                    results.resolve("plans-v8.xml").toString(), "--suite", "plans.wasm.v8");
        });
    }

    private void browser() {
        prereqs.harness();
        Map<String, String> webgpu = prereqs.webgpu();
        inCases(cases -> {
            Suite.say("the SDK's primitive microbenchmark in headless Chromium (every pair checked against the reference there)");
            suite.jitzoo("codegen", "microbench", "--out", cases + "/microbench", "--op", "K0");
            suite.harness("the microbenchmark in Chromium", webgpu, "microbench", cases + "/microbench", "--runner", "chromium",
                    "--quick");
        });
    }

    private void wgsl() {
        prereqs.harness();
        Map<String, String> webgpu = prereqs.webgpu();
        Path results = harnessResults();
        inCases(cases -> {
            Suite.say("generated WGSL kernels compiled by Tint and run on SwiftShader (Dawn): the paper grid and every bundled GPU's "
                    + "lite space of K0..K3 on cut shapes (every block, edge and loop of the real ones; `./jitzoo bench sweep` runs "
                    + "them at full size), odd shapes, a GPU's whole conv space on three windows and its float16-weight and 4-bit "
                    + "matmul spaces (a few minutes)");
            String wgsl = writeWgslCases(suite, cases, true);
            suite.harness("WGSL kernels in Dawn", webgpu, "check", wgsl, "--junit", results.resolve("wgsl-dawn.xml").toString(),
                    "--suite", "kernels.wgsl.swiftshader");
        });
    }

    /**
     * The kernels stage's Wasm kernels, written to {@code cases/wasm}: the paper grid, odd shapes and split kernels, every
     * bundled device's lite space of K0..K3, the quantized, float16-weight and conv spaces (one thread, and split for two),
     * one-row products split by columns; products on cut shapes when {@code cut} (the stage), at full size otherwise
     * ({@code bench sweep}). Returns the folder.
     */
    public static String writeWasmCases(Suite suite, Path cases, boolean cut) {
        String wasm = cases.resolve("wasm").toString();
        List<String> codegen = codegenCases(cut);
        suite.jitzoo(with(codegen, "--out", wasm, "--set", "all"));
        suite.jitzoo("space", "cases", "--out", cases + "/space.jsonl", "--op", "K0,K1,K2,K3," + INT8_CASES + "," + Q4_CASES + "," + F16_CASES
                + "," + CONV_CASES);
        suite.jitzoo(with(codegen, "--requests", cases + "/space.jsonl", "--out", wasm));
        suite.jitzoo("space", "cases", "--out", cases + "/space-quantized-2t.jsonl", "--op", INT8_CASES + "," + Q4_CASES + "," + F16_CASES
                + "," + CONV_CASES + "," + DECODE_CASES,
                "--backend", "wasm", "--threads", "2");
        suite.jitzoo(with(codegen, "--requests", cases + "/space-quantized-2t.jsonl", "--out", wasm));
        return wasm;
    }

    /**
     * The wgsl stage's kernels, written to {@code cases/wgsl}: the WGSL paper grid and odd shapes, every bundled
     * device's lite space of K0..K3, a GPU's conv and compact-weight spaces; K0..K3 on cut shapes when {@code cut}
     * (the stage), at full size otherwise ({@code bench sweep}). Returns the folder.
     */
    public static String writeWgslCases(Suite suite, Path cases, boolean cut) {
        String wgsl = cases.resolve("wgsl").toString();
        List<String> codegen = codegenCases(cut, "--backend", "wgsl");
        suite.jitzoo(with(codegen, "--out", wgsl, "--set", "all"));
        suite.jitzoo("space", "cases", "--out", cases + "/space.jsonl");
        suite.jitzoo(with(codegen, "--requests", cases + "/space.jsonl", "--out", wgsl));
        suite.jitzoo("space", "cases", "--out", cases + "/conv.jsonl", "--op", CONV_WGSL_CASES + "," + COMPACT_WGSL_CASES, "--backend", "webgpu",
                "--device", "nvidia-ampere-webgpu");
        suite.jitzoo(with(codegen, "--requests", cases + "/conv.jsonl", "--out", wgsl));
        return wgsl;
    }

    /** {@code codegen cases} with these options, and {@code --cut} when cut. */
    private static List<String> codegenCases(boolean cut, String... options) {
        List<String> args = new ArrayList<>(List.of("codegen", "cases"));
        args.addAll(List.of(options));
        if (cut) {
            args.add("--cut");
        }
        return args;
    }

    private static String[] with(List<String> head, String... tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(List.of(tail));
        return all.toArray(String[]::new);
    }

    private void e2e() {
        Path models = new Models(suite).ensure();
        Map<String, String> env = new LinkedHashMap<>(prereqs.webgpu()); // Chromium, for the SDK in a real browser; Dawn on SwiftShader
        env.putAll(prereqs.engines()); // Firefox and WebKit beside it
        Suite.say("end-to-end: a private stack on other ports, the skeleton thread, a model tuned and served from the zoo, "
                + "a model on WebGPU (Dawn and Chromium on SwiftShader), the SDK in Chromium, Firefox and WebKit, the extended space, "
                + "fleet microbenchmarks and bad input");
        // the test stack settles a device kind after one report and reads the fleet's microbenchmarks every second
        env.putAll(Map.of("JITZOO_SPACE_SETTLED_ORIGINS", "1", "JITZOO_SPACE_FLEET_REFRESH", "PT1S", "JITZOO_MODELS", models.toString()));
        suite.withPrivateStack("end-to-end tests", env, suite.path("client-sdk-js"),
                List.of("npm", "run", "-s", "test:e2e", "--", "--reporter=default", "--reporter=junit",
                        "--outputFile.junit=test-results/e2e.xml"));
    }

    /** The chart and the images: what a Kubernetes cluster runs. */
    private void deploy() {
        prereqs.chartTests();
        if (!Prereqs.onPath("podman") || !Prereqs.onPath("runc") || !Files.exists(Path.of("/usr/libexec/podman/catatonit"))) {
            // runc, as crun refuses this machine's hybrid cgroups; catatonit, from which podman builds its pods' pause image
            prereqs.apt("podman", "runc", "catatonit");
        }
        prereqs.sdk(); // the pods test tunes through the gateway's pod with the SDK's scripts
        Path models = new Models(suite).ensure();
        Path images = suite.home().resolve("images");
        Suite.say("the five images (./jitzoo images: Debian bases from Debian's archive, kept between runs, then each service and tune)");
        suite.jitzoo("images", "--out", images.toString());
        Suite.say("the Helm chart (lint, templates over value sets checked against the Kubernetes API models, bad values), "
                + "the images (config, layers, one started by podman) and the chart's pods (podman kube play) beside a private stack's stores");
        Path results = suite.path("helm/test-results");
        results.toFile().mkdirs();
        List<String> test = new ArrayList<>(List.of("node", "--test", "--test-reporter=spec", "--test-reporter-destination=stdout",
                "--test-reporter=junit", "--test-reporter-destination=" + results.resolve("deploy.xml")));
        test.addAll(files(suite.path("helm/test"), ".test.mjs"));
        suite.withPrivateStores("chart, image and pod tests", Map.of("JITZOO_IMAGES", images.toString(), "JITZOO_TEST_PODS", "1",
                "JITZOO_MODELS", models.toString()), suite.path("helm"), test);
    }

    private Path harnessResults() {
        Path results = suite.path("harness/test-results");
        results.toFile().mkdirs();
        return results;
    }

    /** Runs a stage's work in a temporary cases folder, kept (and named) when the stage fails. */
    private static void inCases(java.util.function.Consumer<Path> body) {
        Suite.inTempDir("jitzoo-cases.", body);
    }

    private static List<String> files(Path dir, String suffix) {
        try (var files = Files.list(dir)) {
            return files.map(Path::toString).filter(f -> f.endsWith(suffix)).sorted().toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static String minutes(Duration d) {
        return String.format(Locale.ROOT, "%d:%02d", d.toMinutes(), d.toSecondsPart());
    }
}
