package dev.jitzoo.gateway.session;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.OpSpec;

/** What a well-formed client frame is. Plain Java: every rule here is unit-testable. */
public final class FrameRules {

    public static final int PROTOCOL_VERSION = 1;

    private final int maxFrameBytes;
    private final int maxOps;
    private final long maxOperandElements;

    public FrameRules(int maxFrameBytes, int maxOps, long maxOperandElements) {
        this.maxFrameBytes = maxFrameBytes;
        this.maxOps = maxOps;
        this.maxOperandElements = maxOperandElements;
    }

    /** Parses one binary WebSocket message; garbage, truncation or an empty oneof is malformed. */
    public ClientFrame parse(byte[] message) {
        if (message.length > maxFrameBytes) {
            throw ProtocolException.tooBig(message.length, maxFrameBytes);
        }
        ClientFrame frame;
        try {
            frame = ClientFrame.parseFrom(message);
        } catch (InvalidProtocolBufferException e) {
            throw ProtocolException.malformed("not a jitzoo.gateway.v1.ClientFrame: " + e.getMessage());
        }
        if (frame.getFrameCase() == ClientFrame.FrameCase.FRAME_NOT_SET) {
            throw ProtocolException.malformed("frame carries no known message");
        }
        return frame;
    }

    public void checkHello(Hello hello) {
        if (hello.getProtocolVersion() != PROTOCOL_VERSION) {
            throw ProtocolException.invalidHello("protocol_version must be " + PROTOCOL_VERSION
                    + ", got " + hello.getProtocolVersion());
        }
        if (!hello.hasDevice() || hello.getDevice().getFingerprint().isBlank()) {
            throw ProtocolException.invalidHello("device.fingerprint is required");
        }
        if (hello.getDevice().getFingerprint().length() > 128) {
            throw ProtocolException.invalidHello("device.fingerprint is longer than 128 characters");
        }
        if (hello.getBackend() != Backend.BACKEND_WASM) {
            throw ProtocolException.invalidHello("backend " + hello.getBackend() + " is not served; use BACKEND_WASM");
        }
        if (hello.getOpsCount() == 0 || hello.getOpsCount() > maxOps) {
            throw ProtocolException.invalidHello("a session tunes 1 to " + maxOps + " ops, got " + hello.getOpsCount());
        }
        for (int i = 0; i < hello.getOpsCount(); i++) {
            String problem = opProblem(hello.getOps(i));
            if (problem != null) {
                throw ProtocolException.invalidHello("ops[" + i + "]: " + problem);
            }
        }
    }

    /** Why an op cannot be served, or null when it can. */
    String opProblem(OpSpec op) {
        int rank = switch (op.getKind()) {
            case OP_KIND_MATMUL -> 3;
            case OP_KIND_BATCH_MATMUL -> 4;
            default -> -1;
        };
        if (rank < 0) {
            return "unknown op kind " + op.getKindValue();
        }
        if (op.getShapeCount() != rank) {
            return op.getKind() + " needs " + rank + " dimensions, got " + op.getShapeCount();
        }
        for (int d : op.getShapeList()) {
            if (d <= 0) {
                return "dimensions must be positive, got " + Integer.toUnsignedString(d);
            }
        }
        int batch = rank == 4 ? op.getShape(0) : 1;
        int o = rank - 3;
        long m = op.getShape(o), k = op.getShape(o + 1), n = op.getShape(o + 2);
        long largest = batch * Math.max(m * k, Math.max(k * n, m * n));
        if (largest > maxOperandElements) {
            return "an operand of " + largest + " elements exceeds the limit of " + maxOperandElements;
        }
        return null;
    }
}
