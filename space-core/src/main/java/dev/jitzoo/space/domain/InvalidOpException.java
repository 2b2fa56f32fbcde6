package dev.jitzoo.space.domain;

/** A request that no schedule can serve: an unknown op, a wrong rank, a non-positive dimension. */
public class InvalidOpException extends IllegalArgumentException {
    public InvalidOpException(String reason) {
        super(reason);
    }
}
