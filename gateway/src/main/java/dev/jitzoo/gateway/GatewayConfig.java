package dev.jitzoo.gateway;

import dev.jitzoo.proto.gateway.v1.PlanLimit;
import dev.jitzoo.proto.gateway.v1.SessionLimit;
import dev.jitzoo.proto.rules.OpRules;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** Settings of the gateway. Addresses of the three services are Quarkus gRPC client keys. */
@ConfigMapping(prefix = "jitzoo.gateway")
public interface GatewayConfig {

    /** Largest client frame accepted; a larger one ends the session with close code 1009. */
    @WithDefault("65536")
    int maxFrameBytes();

    /** Most ops one Hello may ask to tune: gateway.proto's SESSION_LIMIT_OPS_PER_HELLO, or fewer. */
    @WithDefault("" + SessionLimit.SESSION_LIMIT_OPS_PER_HELLO_VALUE)
    int maxOpsPerSession();

    /** Most elements a requested op's operands may have together: {@link OpRules#MAX_OPERAND_ELEMENTS}, or fewer. */
    @WithDefault("" + OpRules.MAX_OPERAND_ELEMENTS)
    long maxOperandElements();

    /** Largest M of a dynamic MatMul's PlanRequest; the space serves up to {@link OpRules#MAX_DYNAMIC_ROWS}. */
    @WithDefault("" + OpRules.MAX_DYNAMIC_ROWS)
    int maxDynamicRows();

    /** Most PlanRequests one connection may send (gateway.proto's PLAN_LIMIT_REQUESTS_PER_CONNECTION, or fewer); one more ends it with close code 1008. */
    @WithDefault("" + PlanLimit.PLAN_LIMIT_REQUESTS_PER_CONNECTION_VALUE)
    int maxPlanRequests();

    /** Most kernels a report may rank: gateway.proto's SESSION_LIMIT_REPORT_TOP_N (the zoo's ballots are that long). */
    @WithDefault("" + SessionLimit.SESSION_LIMIT_REPORT_TOP_N_VALUE)
    int maxRankedPerReport();

    /**
     * How long a report may wait for the broker (Kafka unreachable, its topic's metadata not had)
     * before it is answered UNAVAILABLE and the client sends it again: Kafka's producer
     * {@code delivery.timeout.ms} and {@code max.block.ms}.
     */
    @WithDefault("PT2M")
    Duration publishTimeout();

    /**
     * Bytes of kernels codegen made that the gateway keeps, by what was asked (for 10 minutes
     * each): the Welcomes and offers of a kind many pages share come from memory, not codegen.
     */
    @WithDefault("67108864")
    long artifactCacheBytes();

    /**
     * How long the space's answer to a Compose (tenant, op, device profile, backend) is kept and
     * given to the next Hellos asking the same: a burst of one kind's page loads asks the space and
     * the zoo once per op and interval. A kind's newer election reaches its sessions within it; an
     * answer without one is dropped at the kind's next report stored here. Zero asks the space for
     * every Hello.
     */
    @WithDefault("PT2S")
    Duration composeCacheTtl();

    /** Offers queued per session before the client grants credit; the session takes no more offers beyond it. */
    @WithDefault("64")
    int maxQueuedOffers();

    /**
     * Mixed into the hash of a client's address that reports carry as their network origin (the
     * zoo weighs each origin as one device): set a secret of your own, or anyone can tell which
     * addresses reported by hashing them all.
     */
    @WithDefault("jitzoo-origin")
    String originSalt();

    /**
     * Whether the client's address comes from X-Forwarded-For (behind proxies you trust), not the
     * socket's peer: the entry {@code trusted-proxy-hops} from its right end, the one your own
     * proxies appended (never the left-most, which the client writes).
     */
    @WithDefault("false")
    boolean trustForwardedFor();

    /** Proxies of yours that append to X-Forwarded-For in front of the gateway (an Ingress controller: 1). */
    @WithDefault("1")
    int trustedProxyHops();

    /** How long a session can be resumed after its last change (its kernels, its reports). */
    @WithDefault("PT1H")
    Duration resumeTtl();

    /**
     * How often the kernel services' health is asked in the background, for the readiness check's
     * data and {@code jitzoo_gateway_downstream_serving} (readiness does not depend on it).
     */
    @WithDefault("PT5S")
    Duration downstreamCheckInterval();

    /** Deadline of each call to the space, codegen and zoo services. */
    @WithDefault("PT15S")
    Duration rpcTimeout();

    /** Most connections this gateway holds; one more is refused with close code 1013 (try again later). */
    @WithDefault("10000")
    int maxConnections();

    /**
     * Most connections from one network address (as {@code trust-forwarded-for} reads it); one
     * more is refused with close code 1008. Offices and campuses share addresses: keep it generous.
     */
    @WithDefault("64")
    int maxConnectionsPerAddress();

    /**
     * Sessions (a Hello or a Resume) one network address may start a minute on this replica,
     * whatever its tenant (0: no limit): the anonymous tenant's quota is shared by every user
     * without a key, so one address must not use it up. NAT puts offices behind one address: keep
     * it generous. {@code ./jitzoo up} sets 0 (on one machine every device is one address).
     */
    @WithDefault("120")
    int addressSessionsPerMinute();

    /** Reports one network address may send a minute on this replica (0: no limit). */
    @WithDefault("2400")
    int addressReportsPerMinute();

    /** PlanRequests one network address may send a minute on this replica (each can cost the space seconds; 0: no limit). */
    @WithDefault("60")
    int addressPlanRequestsPerMinute();

    /** A connection whose client sent no frame for this long is closed with 1001; its session can be resumed. */
    @WithDefault("PT10M")
    Duration idleTimeout();

    /**
     * How often the gateway pings each connection (WebSocket ping frames, answered by browsers on
     * their own); a connection that answers nothing for three of them is closed as gone.
     */
    @WithDefault("PT20S")
    Duration heartbeat();

    /**
     * On shutdown, how long the gateway waits for the reports in flight after telling every client
     * to go (Goaway), before it closes their connections; keep the pod's termination grace period
     * above it.
     */
    @WithDefault("PT10S")
    Duration drainTimeout();

    /** API keys, tenants and their quotas ({@code ./jitzoo tenant}). */
    TenantsConfig tenants();

    interface TenantsConfig {

        /**
         * Whether every session must give an API key (the session URL's {@code key} parameter).
         * Off, a session without one runs as the tenant {@code public}, from any Origin, within the
         * {@code anonymous-*} quotas; a key given is checked either way. Turn it on in production.
         */
        @WithDefault("false")
        boolean requireKey();

        /** The MongoDB database holding the {@code tenants} collection. */
        @WithDefault("jitzoo")
        String database();

        /**
         * How long a key's tenant is used as read: a rotated-out or removed key stops working within
         * it. Past it the tenant is read again in the background; while MongoDB does not answer,
         * keys seen within the last hour go on working.
         */
        @WithDefault("PT30S")
        Duration cacheTtl();

        /** Sessions a minute the tenant {@code public} may start on this replica (0: no limit). */
        @WithDefault("0")
        int anonymousSessionsPerMinute();

        @WithDefault("0")
        int anonymousReportsPerMinute();

        @WithDefault("0")
        int anonymousOffersPerMinute();

        /** uKernel plans the tenant {@code public} may ask for a minute on this replica (0: no limit; each address has its own too). */
        @WithDefault("0")
        int anonymousPlanRequestsPerMinute();
    }
}
