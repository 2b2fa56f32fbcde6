package dev.jitzoo.compiler.kernel;

/** A backend of the compiler: op + schedule to a kernel artifact. Implementations are thread-safe. */
public interface KernelCompiler {

    Backend backend();

    /** Throws {@link InvalidKernelException} with the reason when no correct kernel can be made. */
    GeneratedKernel compile(Op op, Schedule schedule);
}
