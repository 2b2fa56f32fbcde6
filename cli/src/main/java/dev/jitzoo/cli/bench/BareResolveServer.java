package dev.jitzoo.cli.bench;

import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.zoo.v1.ResolveRequest;
import dev.jitzoo.proto.zoo.v1.ResolveResponse;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.proto.zoo.v1.ZooServiceGrpc;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;

/**
 * The baseline of {@code ./jitzoo bench zoo}'s Resolve: a bare gRPC-Java server answering
 * {@code ZooService/Resolve} with one found kernel per op and nothing else, in a JVM of its own, so
 * the bench times what this machine's gRPC costs beside what the zoo adds. Prints its port on the
 * first line; runs until killed.
 */
public final class BareResolveServer {

    private BareResolveServer() {
    }

    public static void main(String[] args) throws Exception {
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new ZooServiceGrpc.ZooServiceImplBase() {
                    @Override
                    public void resolve(ResolveRequest request, StreamObserver<ResolveResponse> answer) {
                        ResolveResponse.Builder response = ResolveResponse.newBuilder();
                        for (OpSpec op : request.getOpsList()) {
                            response.addKernels(ResolvedKernel.newBuilder().setOp(op).setFound(true).setMedianMs(1.0).setReports(25)
                                    .setOrigins(25).setKernel(KernelRef.newBuilder().setKernelId("k0").setBackend(request.getBackend()).setOp(op)));
                        }
                        answer.onNext(response.build());
                        answer.onCompleted();
                    }
                }).build().start();
        System.out.println(server.getPort());
        server.awaitTermination();
    }
}
