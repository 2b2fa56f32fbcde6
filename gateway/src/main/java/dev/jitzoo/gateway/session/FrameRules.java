package dev.jitzoo.gateway.session;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.PlanRequest;
import dev.jitzoo.proto.gateway.v1.ProtocolVersion;
import dev.jitzoo.proto.gateway.v1.SessionLimit;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.MicrobenchRules;
import dev.jitzoo.proto.rules.ProfileRules;
import dev.jitzoo.proto.rules.OpRules;

/** What a well-formed client frame is. Plain Java: every rule here is unit-testable. */
public final class FrameRules {

    public static final int PROTOCOL_VERSION = ProtocolVersion.PROTOCOL_VERSION_CURRENT_VALUE;

    private final int maxFrameBytes;
    private final int maxOps;
    private final long maxOperandElements;
    private final int maxDynamicRows;

    /**
     * Frame rules under the gateway's settings; settings beyond what every client and service keeps
     * (gateway.proto's session limits, {@link OpRules#MAX_OPERAND_ELEMENTS}) are refused.
     */
    public FrameRules(int maxFrameBytes, int maxOps, long maxOperandElements, int maxDynamicRows) {
        checkSetting("max-ops-per-session", maxOps, 1, SessionLimit.SESSION_LIMIT_OPS_PER_HELLO_VALUE);
        checkSetting("max-operand-elements", maxOperandElements, 1, OpRules.MAX_OPERAND_ELEMENTS);
        this.maxFrameBytes = maxFrameBytes;
        this.maxOps = maxOps;
        this.maxOperandElements = maxOperandElements;
        this.maxDynamicRows = maxDynamicRows;
    }

    /** Refuses a gateway setting outside {@code min..max}: what every client and service keeps bounds it. */
    static void checkSetting(String name, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException("jitzoo.gateway." + name + " must be " + min + " to " + max + ", got " + value);
        }
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
        String tooLong = ProfileRules.problem(hello.getDevice(), "device");
        if (tooLong != null) {
            throw ProtocolException.invalidHello(tooLong);
        }
        String rho = MicrobenchRules.primitiveVectorProblem(hello.getDevice().getPrimitiveVector());
        if (rho != null) {
            throw ProtocolException.invalidHello("device." + rho);
        }
        if (hello.getBackend() != Backend.BACKEND_WASM && hello.getBackend() != Backend.BACKEND_WGSL) {
            throw ProtocolException.invalidHello("backend " + hello.getBackend() + " is not served; use BACKEND_WASM or BACKEND_WGSL");
        }
        if (hello.getBackend() == Backend.BACKEND_WGSL && !hello.getDevice().hasWebgpu()) {
            throw ProtocolException.invalidHello("a BACKEND_WGSL session needs device.webgpu (the adapter's info and limits)");
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

    /** A Resume worth looking up: a token of the length the gateway issues (43 characters, base64url). */
    public void checkResume(dev.jitzoo.proto.gateway.v1.Resume resume) {
        if (resume.getToken().isEmpty() || resume.getToken().length() > 128) {
            throw ProtocolException.resumeRejected("a resume token has 1 to 128 characters, got " + resume.getToken().length());
        }
    }

    /** A PlanRequest the space can be asked: a Wasm device, a MatMul, 1 <= lo <= hi <= the most rows served. */
    public void checkPlanRequest(PlanRequest request) {
        if (!request.hasDevice() || !request.getDevice().hasWasm()) {
            throw ProtocolException.invalidPlanRequest("device with its wasm features is required");
        }
        if (request.getOp().getKind() != OpKind.OP_KIND_MATMUL) {
            throw ProtocolException.invalidPlanRequest("a dynamic M is served for MatMuls only, got " + request.getOp().getKind());
        }
        long lo = Integer.toUnsignedLong(request.getLo());
        long hi = Integer.toUnsignedLong(request.getHi());
        if (lo < 1 || hi < lo || hi > maxDynamicRows) {
            throw ProtocolException.invalidPlanRequest("the range must be 1 <= lo <= hi <= " + maxDynamicRows + ", got " + lo + ".." + hi);
        }
        String problem = opProblem(request.getOp());
        if (problem != null) {
            throw ProtocolException.invalidPlanRequest("op: " + problem);
        }
        if (request.getOp().getShape(0) != request.getHi()) {
            throw ProtocolException.invalidPlanRequest("op's M must be hi (" + hi + "), got " + request.getOp().getShape(0));
        }
    }

    /** Why an op cannot be served, or null when it can. */
    String opProblem(OpSpec op) {
        return OpRules.problem(op, maxOperandElements);
    }
}
