package dev.jitzoo.compiler.kernel;

/** An op or schedule no correct kernel can be generated for; the message gives the reason. */
public class InvalidKernelException extends IllegalArgumentException {

    public InvalidKernelException(String reason) {
        super(reason);
    }

    public InvalidKernelException(String reason, Throwable cause) {
        super(reason, cause);
    }

    /** Throws with {@code problem} as the reason, where a rule named one (rules answer null for none). */
    public static void refuse(String problem) {
        if (problem != null) {
            throw new InvalidKernelException(problem);
        }
    }

    /** Throws with the schedule, the op and {@code problem} as the reason, where a rule named one. */
    public static void refuse(Op op, Schedule schedule, String problem) {
        if (problem != null) {
            throw new InvalidKernelException("schedule " + schedule + " cannot compute " + op + ": " + problem);
        }
    }
}
