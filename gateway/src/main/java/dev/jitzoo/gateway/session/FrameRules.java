package dev.jitzoo.gateway.session;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.OpRules;

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
        return OpRules.problem(op, maxOperandElements);
    }
}
