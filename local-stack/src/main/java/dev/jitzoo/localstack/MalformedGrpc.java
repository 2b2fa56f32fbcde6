package dev.jitzoo.localstack;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** Sends raw bytes to a unary gRPC method, as a broken or hostile client would. For tests. */
public final class MalformedGrpc {

    private MalformedGrpc() {
    }

    /** Calls {@code fullMethodName} (e.g. {@code jitzoo.zoo.v1.ZooService/Resolve}) with {@code payload}. */
    public static StatusRuntimeException callExpectingError(Channel channel, String fullMethodName, byte[] payload) {
        MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(fullMethodName)
                .setRequestMarshaller(RAW)
                .setResponseMarshaller(RAW)
                .build();
        try {
            ClientCalls.blockingUnaryCall(channel, method, CallOptions.DEFAULT, payload);
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError(fullMethodName + " accepted a malformed request");
    }

    private static final MethodDescriptor.Marshaller<byte[]> RAW = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };
}
