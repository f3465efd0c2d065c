package io.inferencebench.crds.v1alpha1;

import java.util.List;
import java.util.Optional;

/** The small field checks every validator of a spec uses; each names the field it checks. */
final class FieldChecks {

    private FieldChecks() {}

    static void range(String at, Integer min, Integer max, String maxName, List<String> problems) {
        if (min != null && max != null && min > max) {
            problems.add(at + ": " + min + " is greater than " + maxName + " " + max);
        }
    }

    static void positiveCount(String at, Integer value, List<String> problems) {
        if (value != null && value < 1) {
            problems.add(at + ": must be at least 1, got " + value);
        }
    }

    static void bounded(String at, Integer value, int max, List<String> problems) {
        positiveCount(at, value, problems);
        if (value != null && value > max) {
            problems.add(at + ": must be at most " + max + ", got " + value);
        }
    }

    static void duration(String at, String text, List<String> problems) {
        Optional<String> problem = Durations.validate(at, text);
        problem.ifPresent(problems::add);
    }

    static void optionalDuration(String at, String text, List<String> problems) {
        if (text != null) {
            duration(at, text, problems);
        }
    }

    static void optionalPositiveDuration(String at, String text, List<String> problems) {
        if (text == null) {
            return;
        }
        Optional<String> problem = Durations.validate(at, text);
        if (problem.isPresent()) {
            problems.add(problem.get());
        } else if (Durations.parse(text).isZero()) {
            problems.add(at + ": must be greater than zero");
        }
    }
}
