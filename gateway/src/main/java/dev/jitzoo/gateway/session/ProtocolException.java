package dev.jitzoo.gateway.session;

import dev.jitzoo.gateway.tenant.QuotaMeter;
import dev.jitzoo.proto.gateway.v1.ErrorCode;

/**
 * A frame the gateway refuses. {@link #fatal()} ones end the session with {@link #closeCode()};
 * the others are answered with an Error frame and the session goes on.
 */
public class ProtocolException extends RuntimeException {

    /** WebSocket close codes (RFC 6455, section 7.4.1). */
    public static final int INVALID_PAYLOAD = 1007;
    public static final int POLICY_VIOLATION = 1008;
    public static final int UNSUPPORTED_DATA = 1003;
    public static final int MESSAGE_TOO_BIG = 1009;
    public static final int INTERNAL_ERROR = 1011;
    public static final int GOING_AWAY = 1001;
    public static final int TRY_AGAIN_LATER = 1013;

    private final ErrorCode code;
    private final int closeCode;

    private ProtocolException(ErrorCode code, int closeCode, String message) {
        super(message);
        this.code = code;
        this.closeCode = closeCode;
    }

    public static ProtocolException malformed(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_MALFORMED_FRAME, INVALID_PAYLOAD, message);
    }

    public static ProtocolException tooBig(int size, int limit) {
        return new ProtocolException(ErrorCode.ERROR_CODE_MALFORMED_FRAME, MESSAGE_TOO_BIG,
                "frame of " + size + " bytes exceeds the limit of " + limit);
    }

    public static ProtocolException protocol(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_PROTOCOL, POLICY_VIOLATION, message);
    }

    public static ProtocolException invalidHello(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_INVALID_HELLO, POLICY_VIOLATION, message);
    }

    /** Not fatal: the session stays open. */
    public static ProtocolException invalidReport(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_INVALID_REPORT, 0, message);
    }

    /** Not fatal: the session stays open. */
    public static ProtocolException invalidMicrobench(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_INVALID_MICROBENCH, 0, message);
    }

    /** Not fatal: the session stays open (the client runs the op without a plan). */
    public static ProtocolException invalidPlanRequest(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_INVALID_PLAN_REQUEST, 0, message);
    }

    /** Not fatal: the connection stays open for a Hello. */
    public static ProtocolException resumeRejected(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_RESUME_REJECTED, 0, message);
    }

    /** A downstream service could not answer one request; not fatal: the session stays open. */
    public static ProtocolException unanswered(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_UNAVAILABLE, 0, message);
    }

    public static ProtocolException unavailable(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_UNAVAILABLE, INTERNAL_ERROR, message);
    }

    /** This gateway is full: the client should try again later, here or on another replica. */
    public static ProtocolException overloaded(int connections) {
        return new ProtocolException(ErrorCode.ERROR_CODE_OVERLOADED, TRY_AGAIN_LATER,
                "this gateway holds " + connections + " connections, its most: try again later");
    }

    public static ProtocolException tooManyConnections(int perAddress) {
        return new ProtocolException(ErrorCode.ERROR_CODE_TOO_MANY_CONNECTIONS, POLICY_VIOLATION,
                "more than " + perAddress + " connections from one network address");
    }

    /** The gateway is shutting down: connect again, another replica takes the session up. */
    public static ProtocolException shuttingDown() {
        return new ProtocolException(ErrorCode.ERROR_CODE_UNAVAILABLE, GOING_AWAY,
                "this gateway is shutting down: connect again and resume the session");
    }

    /** The client sent nothing for the idle timeout, or stopped answering pings; its session can be resumed. */
    public static ProtocolException idle(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_IDLE, GOING_AWAY, message);
    }

    public static ProtocolException unauthorized(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_UNAUTHORIZED, POLICY_VIOLATION, message);
    }

    public static ProtocolException forbiddenOrigin(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_FORBIDDEN_ORIGIN, POLICY_VIOLATION, message);
    }

    /** The tenant directory (MongoDB) cannot be read and the key was not seen lately: try again later. */
    public static ProtocolException directoryUnavailable(String message) {
        return new ProtocolException(ErrorCode.ERROR_CODE_UNAVAILABLE, TRY_AGAIN_LATER, message);
    }

    /** The tenant started its minute's sessions: try again later. */
    public static ProtocolException sessionQuota(String tenant, int perMinute) {
        return new ProtocolException(ErrorCode.ERROR_CODE_QUOTA_EXCEEDED, TRY_AGAIN_LATER,
                "tenant " + tenant + " started its " + perMinute + " sessions a minute: try again later");
    }

    /**
     * A network address used its quota of a kind this minute: a Hello or Resume closes (try again
     * later), a report or PlanRequest is refused and the session goes on.
     */
    public static ProtocolException addressQuota(QuotaMeter.Kind kind, int perMinute) {
        return new ProtocolException(ErrorCode.ERROR_CODE_QUOTA_EXCEEDED, kind == QuotaMeter.Kind.SESSIONS ? TRY_AGAIN_LATER : 0,
                "this network address sent its " + perMinute + " " + kind.noun() + " a minute: try again later");
    }

    /** Not fatal: the plan is not composed, the connection goes on. */
    public static ProtocolException planQuota(String tenant, int perMinute) {
        return new ProtocolException(ErrorCode.ERROR_CODE_QUOTA_EXCEEDED, 0,
                "tenant " + tenant + " asked for its " + perMinute + " plans a minute: ask again later");
    }

    /** Not fatal: the report is not stored, the session goes on. */
    public static ProtocolException reportQuota(String tenant, int perMinute) {
        return new ProtocolException(ErrorCode.ERROR_CODE_QUOTA_EXCEEDED, 0,
                "tenant " + tenant + " sent its " + perMinute + " reports a minute: this one is not stored, send it again later");
    }

    /** Ends a session's offers (OffersDone says why); the session goes on with the kernels it has. */
    public static ProtocolException offerQuota(String tenant, int perMinute) {
        return new ProtocolException(ErrorCode.ERROR_CODE_QUOTA_EXCEEDED, 0,
                "tenant " + tenant + " was sent its " + perMinute + " offers a minute: offers end here");
    }

    public ErrorCode code() {
        return code;
    }

    public int closeCode() {
        return closeCode;
    }

    public boolean fatal() {
        return closeCode != 0;
    }
}
