package io.inferencebench.profile.prom;

/**
 * A line the parser could not use; the line was skipped.
 *
 * @param line 1-based line number ({@code 0} for problems with the whole body)
 * @param message what is wrong
 * @param excerpt the start of the offending line (at most 120 characters)
 */
public record ParseProblem(int line, String message, String excerpt) {

    @Override
    public String toString() {
        return "line " + line + ": " + message + (excerpt.isEmpty() ? "" : " [" + excerpt + "]");
    }
}
