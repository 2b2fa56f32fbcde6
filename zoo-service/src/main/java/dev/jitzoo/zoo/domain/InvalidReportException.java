package dev.jitzoo.zoo.domain;

/** A report or query the zoo refuses, with the reason. Nothing of it is stored. */
public class InvalidReportException extends IllegalArgumentException {
    public InvalidReportException(String reason) {
        super(reason);
    }
}
