package dev.jitzoo.compiler.kernel;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * One element-wise step fused after a matmul, applied to each output element in the order the op
 * lists them, before it is stored: {@code scale} multiplies by {@code value}; {@code bias} adds
 * Bias[j] (operand {@code Bias}, shape [N]); {@code relu}; {@code gelu_tanh} and {@code gelu_erf},
 * the two GELU forms; {@code silu}, x * sigmoid(x); {@code residual} adds R[b, i, j] (operand
 * {@code Residual}, shaped like C).
 */
public record Epilogue(Kind kind, float value) {

    public enum Kind {
        SCALE("scale"), BIAS("bias"), RELU("relu"), GELU_TANH("gelu_tanh"), GELU_ERF("gelu_erf"), RESIDUAL("residual"),
        SILU("silu");

        /** The name in metadata, ids and command lines. */
        public final String label;

        Kind(String label) {
            this.label = label;
        }

        public static Kind of(String label) {
            return Arrays.stream(values()).filter(k -> k.label.equals(label.toLowerCase(Locale.ROOT))).findFirst()
                    .orElseThrow(() -> new InvalidKernelException("unknown epilogue '" + label + "'; known: "
                            + Arrays.stream(values()).map(k -> k.label).collect(Collectors.joining(", "))));
        }
    }

    public Epilogue {
        if (kind == null) {
            throw new InvalidKernelException("an epilogue needs its kind");
        }
        if (kind == Kind.SCALE ? !Float.isFinite(value) : value != 0) {
            throw new InvalidKernelException(kind == Kind.SCALE ? "scale needs a finite value, got " + value
                    : kind.label + " takes no value, got " + value);
        }
    }

    public static Epilogue of(Kind kind) {
        return new Epilogue(kind, 0);
    }

    public static Epilogue scale(float value) {
        return new Epilogue(Kind.SCALE, value);
    }

    /** {@code scale:0.125}, {@code bias}, ...: how ids and command lines write it. */
    @Override
    public String toString() {
        return kind == Kind.SCALE ? kind.label + ":" + value : kind.label;
    }

    /** Parses {@link #toString()}'s form. */
    public static Epilogue parse(String text) {
        String[] parts = text.trim().split(":", 2);
        Kind kind = Kind.of(parts[0]);
        if (kind == Kind.SCALE) {
            if (parts.length < 2) {
                throw new InvalidKernelException("scale needs a value, as in scale:0.125");
            }
            try {
                return scale(Float.parseFloat(parts[1]));
            } catch (NumberFormatException e) {
                throw new InvalidKernelException("scale needs a number, got '" + parts[1] + "'");
            }
        }
        if (parts.length > 1) {
            throw new InvalidKernelException(kind.label + " takes no value, got '" + text + "'");
        }
        return of(kind);
    }
}
