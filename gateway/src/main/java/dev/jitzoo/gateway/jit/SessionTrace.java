package dev.jitzoo.gateway.jit;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.operators.AbstractMulti;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.MultiSubscriber;
import io.smallrye.mutiny.subscription.UniSubscriber;

/**
 * The trace of a session's start (a Hello or a Resume): a span, and the context every downstream
 * call it makes is started in, so the zoo's Resolve, the space's Compose and codegen's Generate
 * (and the offers' GenerateBatch, after the span ends) are its children, on this gateway and, by
 * the gRPC metadata, in each service. Nothing is exported when traces are off (the disabled SDK
 * still records the span, and Quarkus' gRPC and WebSocket instrumentation theirs, and drops them).
 */
public record SessionTrace(Span span, Context context) {

    /** Ends the span, marked failed with the reason when the start failed. */
    public void end(Throwable failure) {
        if (failure != null) {
            span.recordException(failure);
            span.setStatus(StatusCode.ERROR, failure.getMessage() == null ? failure.toString() : failure.getMessage());
        }
        span.end();
    }

    /**
     * The call, subscribed in this trace's context: a gRPC stub starts its call (and its client
     * span) when subscribed, and a Mutiny chain subscribes later than it is built, on whatever
     * thread answered the step before.
     */
    <T> Uni<T> within(Uni<T> call) {
        return new AbstractUni<T>() {
            @Override
            public void subscribe(UniSubscriber<? super T> subscriber) {
                try (Scope ignored = context.makeCurrent()) {
                    AbstractUni.subscribe(call, subscriber);
                }
            }
        };
    }

    /** The stream, subscribed in this trace's context (demand and cancellation pass through). */
    <T> Multi<T> within(Multi<T> call) {
        return new AbstractMulti<T>() {
            @Override
            public void subscribe(MultiSubscriber<? super T> subscriber) {
                try (Scope ignored = context.makeCurrent()) {
                    call.subscribe(subscriber);
                }
            }
        };
    }
}
