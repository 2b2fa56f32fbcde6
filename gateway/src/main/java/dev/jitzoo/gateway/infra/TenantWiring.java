package dev.jitzoo.gateway.infra;

import com.mongodb.client.MongoClient;
import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.tenant.MongoTenantStore;
import dev.jitzoo.gateway.tenant.QuotaMeter;
import dev.jitzoo.gateway.tenant.Tenants;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** The tenant directory on MongoDB, and the quota meter. */
public class TenantWiring {

    @Produces
    @Singleton
    Tenants tenants(MongoClient mongo, GatewayConfig config) {
        return new Tenants(new MongoTenantStore(mongo.getDatabase(config.tenants().database())), config.tenants());
    }

    @Produces
    @Singleton
    QuotaMeter quotaMeter() {
        return new QuotaMeter();
    }
}
