package dev.jitzoo.space.plans;

import dev.jitzoo.space.SpaceConfig;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** The service's one {@link Planner}, sized by its settings, stopped with it. */
@ApplicationScoped
public class PlannerWiring {

    /** Answers remembered: every device kind's few dynamic MatMuls. */
    private static final long KEPT_PLANS = 4096;

    @Produces
    @Singleton
    Planner planner(SpaceConfig config) {
        return new Planner(config.planThreads(), config.planQueue(), KEPT_PLANS);
    }

    void close(@Disposes Planner planner) {
        planner.close();
    }
}
