package dev.jitzoo.space.extended;

import dev.jitzoo.proto.zoo.v1.SimilarRequest;
import java.util.concurrent.CompletionStage;

/**
 * Where the extended space asks the zoo for similar device kinds' kernels: the port, with the
 * service's gRPC client behind it ({@code infra/ZooClient}) and a blocking stub in the command
 * line. It never fails: a zoo that does not answer is an {@link ExtendedSpace.ZooAnswer} that
 * says why, and the lite space goes on alone.
 */
public interface ZooLookup {

    CompletionStage<ExtendedSpace.ZooAnswer> similar(SimilarRequest request);
}
