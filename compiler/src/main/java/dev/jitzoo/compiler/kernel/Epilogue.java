package dev.jitzoo.compiler.kernel;

import dev.jitzoo.proto.kernel.v1.EpilogueKind;
import dev.jitzoo.proto.rules.OpRules;
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
        SCALE(EpilogueKind.EPILOGUE_KIND_SCALE), BIAS(EpilogueKind.EPILOGUE_KIND_BIAS), RELU(EpilogueKind.EPILOGUE_KIND_RELU),
        GELU_TANH(EpilogueKind.EPILOGUE_KIND_GELU_TANH), GELU_ERF(EpilogueKind.EPILOGUE_KIND_GELU_ERF),
        RESIDUAL(EpilogueKind.EPILOGUE_KIND_RESIDUAL), SILU(EpilogueKind.EPILOGUE_KIND_SILU),
        ROUND_HALF(EpilogueKind.EPILOGUE_KIND_ROUND_HALF);

        /** The kind on the wire. */
        public final EpilogueKind wire;
        /** The name in metadata, ids and command lines ({@link OpRules#label(EpilogueKind)}). */
        public final String label;

        Kind(EpilogueKind wire) {
            this.wire = wire;
            this.label = OpRules.label(wire);
        }

        public static Kind of(String label) {
            return Arrays.stream(values()).filter(k -> k.label.equals(label.toLowerCase(Locale.ROOT))).findFirst()
                    .orElseThrow(() -> new InvalidKernelException("unknown epilogue '" + label + "'; known: "
                            + Arrays.stream(values()).map(k -> k.label).collect(Collectors.joining(", "))));
        }

        /** The kind of a wire kind; {@link InvalidKernelException} for one the compiler does not know. */
        public static Kind of(EpilogueKind wire) {
            return Arrays.stream(values()).filter(k -> k.wire == wire).findFirst()
                    .orElseThrow(() -> new InvalidKernelException("unknown epilogue kind " + wire));
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
