package dev.jitzoo.codegen.grpc;

import dev.jitzoo.codegen.KernelGenerator;
import dev.jitzoo.compiler.kernel.InvalidKernelException;
import dev.jitzoo.proto.codegen.v1.CodegenService;
import dev.jitzoo.proto.codegen.v1.GenerateBatchRequest;
import dev.jitzoo.proto.codegen.v1.GenerateBatchResponse;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.codegen.v1.GenerateResponse;
import io.grpc.Status;
import io.quarkus.grpc.GrpcService;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;

/** gRPC edge of the compiler: converts requests and errors, nothing more. */
@GrpcService
public class CodegenGrpcService implements CodegenService {

    private final KernelGenerator generator;

    public CodegenGrpcService(KernelGenerator generator) {
        this.generator = generator;
    }

    @Override
    @Blocking
    public Uni<GenerateResponse> generate(GenerateRequest request) {
        return Uni.createFrom().item(() -> generateOrRefuse(request, ""));
    }

    /**
     * In the order given, each response as soon as its kernel is ready; the batch's cached kernels
     * read in one lookup first, the ones compiled kept in one write after the last response.
     */
    @Override
    @Blocking
    public Multi<GenerateBatchResponse> generateBatch(GenerateBatchRequest batch) {
        KernelGenerator.Batch generation = generator.batch(batch.getRequestsList());
        return Multi.createFrom().range(0, batch.getRequestsCount()).map(index -> {
            GenerateBatchResponse.Builder response = GenerateBatchResponse.newBuilder().setIndex(index);
            try {
                return response.setResult(generation.generate(index)).build();
            } catch (InvalidKernelException e) { // one candidate no kernel exists for costs only itself
                return response.setRefused("requests[" + index + "]: " + e.getMessage()).build();
            }
        }).onCompletion().invoke(generation::keep);
    }

    private GenerateResponse generateOrRefuse(GenerateRequest request, String where) {
        try {
            return generator.generate(request);
        } catch (InvalidKernelException e) {
            throw Status.INVALID_ARGUMENT.withDescription(where + e.getMessage()).asRuntimeException();
        }
    }
}
