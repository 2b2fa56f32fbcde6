package dev.jitzoo.codegen.kernel;

/** An op or schedule no correct kernel can be generated for, with the reason. */
public class InvalidKernelException extends IllegalArgumentException {
    public InvalidKernelException(String reason) {
        super(reason);
    }
}
