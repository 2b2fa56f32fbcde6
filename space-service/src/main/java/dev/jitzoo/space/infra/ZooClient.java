package dev.jitzoo.space.infra;

import dev.jitzoo.proto.zoo.v1.SimilarRequest;
import dev.jitzoo.proto.zoo.v1.ZooService;
import dev.jitzoo.space.SpaceConfig;
import dev.jitzoo.space.extended.ExtendedSpace;
import dev.jitzoo.space.extended.ZooLookup;
import io.quarkus.grpc.GrpcClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/** The zoo's {@code Similar} over gRPC, within the configured timeout; a failure becomes the reason. */
@ApplicationScoped
public class ZooClient implements ZooLookup {

    private static final Logger LOG = Logger.getLogger(ZooClient.class);

    private final ZooService zoo;
    private final Duration timeout;

    public ZooClient(SpaceConfig config, @GrpcClient("zoo") ZooService zoo) {
        this.zoo = zoo;
        this.timeout = config.zooTimeout();
    }

    @Override
    public CompletionStage<ExtendedSpace.ZooAnswer> similar(SimilarRequest request) {
        return zoo.similar(request)
                .ifNoItem().after(timeout).fail()
                .map(ExtendedSpace.ZooAnswer::of)
                .onFailure().recoverWithItem(failure -> {
                    LOG.warnf("zoo unavailable, composing the lite space alone: %s", failure.toString());
                    return ExtendedSpace.ZooAnswer.unavailable(failure instanceof TimeoutException
                            ? "the zoo did not answer within " + timeout.toMillis() + " ms"
                            : "the zoo did not answer: " + failure.getMessage());
                })
                .subscribeAsCompletionStage();
    }
}
