package io.inferencebench.profile.compare;

/**
 * Two runs that are valid profiles but cannot be compared: no stage of one has the request rate (or
 * concurrency) of a stage of the other, a rate is ambiguous, or no paired stage has a successful
 * request on both sides. The message says which.
 */
public final class NotComparableException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates it.
     *
     * @param message what cannot be compared and why, naming the runs' stages
     */
    public NotComparableException(String message) {
        super(message);
    }
}
