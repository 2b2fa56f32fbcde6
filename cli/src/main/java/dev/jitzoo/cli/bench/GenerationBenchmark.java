package dev.jitzoo.cli.bench;

import dev.jitzoo.compiler.kernel.GeneratedKernel;
import dev.jitzoo.compiler.kernel.KernelCompiler;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wgsl.WgslCompiler;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** JMH: the warm time to generate one candidate, op + schedule to the artifact's bytes. */
@State(Scope.Benchmark)
public class GenerationBenchmark {

    /** A backend's label; the op and schedule come in as system properties from {@link CodegenBench}. */
    @Param({"wasm", "wgsl"})
    public String backend;

    private KernelCompiler compiler;
    private Op op;
    private Schedule schedule;

    @Setup
    public void setUp() {
        op = CodegenBench.op();
        compiler = backend.equals("wgsl") ? new WgslCompiler() : new WasmCompiler();
        schedule = backend.equals("wgsl") ? CodegenBench.WGSL_SCHEDULE : CodegenBench.schedule();
    }

    @Benchmark
    public GeneratedKernel generate() {
        return compiler.compile(op, schedule);
    }
}
