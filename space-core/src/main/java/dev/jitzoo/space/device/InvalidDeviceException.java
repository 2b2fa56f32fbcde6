package dev.jitzoo.space.device;

/** A device profile the space cannot be built for: unknown fields, absurd or missing values. */
public class InvalidDeviceException extends IllegalArgumentException {
    public InvalidDeviceException(String reason) {
        super(reason);
    }

    public InvalidDeviceException(String reason, Throwable cause) {
        super(reason, cause);
    }
}
