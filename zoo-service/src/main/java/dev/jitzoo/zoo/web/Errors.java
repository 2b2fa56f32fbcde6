package dev.jitzoo.zoo.web;

import dev.jitzoo.zoo.domain.InvalidReportException;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** How every HTTP endpoint of the zoo answers what it refuses: 400 with the reason, as text. */
public class Errors {

    @ServerExceptionMapper
    public RestResponse<String> invalid(InvalidReportException e) {
        return RestResponse.ResponseBuilder.create(RestResponse.Status.BAD_REQUEST, e.getMessage())
                .type(MediaType.TEXT_PLAIN_TYPE).build();
    }
}
