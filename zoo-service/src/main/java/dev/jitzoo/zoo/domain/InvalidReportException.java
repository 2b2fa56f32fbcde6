package dev.jitzoo.zoo.domain;

/** A report or query the zoo refuses, with the reason. Nothing of it is stored. */
public class InvalidReportException extends IllegalArgumentException {

    private final String kind;

    public InvalidReportException(String reason) {
        this("invalid", reason);
    }

    /** @param kind a short, stable name of the reason, for metrics ({@code invalid}, {@code impossible_latency}) */
    public InvalidReportException(String kind, String reason) {
        super(reason);
        this.kind = kind;
    }

    public String kind() {
        return kind;
    }
}
