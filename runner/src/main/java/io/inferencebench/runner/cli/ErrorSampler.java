package io.inferencebench.runner.cli;

import io.inferencebench.runner.backend.RequestFields;
import io.inferencebench.runner.engine.RequestExecution;
import io.inferencebench.runner.engine.StageObserver;
import io.inferencebench.runner.http.FailureClass;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keeps the first error message of each class per stage, to show the user what went wrong; a
 * request the server refused (4xx) for a field outside OpenAI's API gets a hint naming the flag
 * that drops the field.
 */
final class ErrorSampler implements StageObserver {

    /**
     * The first error of a class.
     *
     * @param message the request's error message (the server's words: print it cleaned)
     * @param hint what to change, or {@code null}
     */
    record Sample(String message, String hint) {}

    private final Map<String, Sample> first = new ConcurrentHashMap<>();
    private final List<RequestFields.Extension> extensions;

    /**
     * @param extensions the fields beyond OpenAI's API that the requests carry
     */
    ErrorSampler(List<RequestFields.Extension> extensions) {
        this.extensions = List.copyOf(extensions);
    }

    @Override
    public void onFinished(RequestExecution execution) {
        if (!execution.succeeded()) {
            FailureClass failure = execution.failure();
            String message = execution.errorMessage() == null ? "" : execution.errorMessage();
            first.computeIfAbsent(
                    failure.wireName(),
                    k ->
                            new Sample(
                                    message,
                                    failure == FailureClass.HTTP_4XX
                                            ? RequestFields.refusalHint(message, extensions)
                                            : null));
        }
    }

    Map<String, Sample> take() {
        Map<String, Sample> copy = new TreeMap<>(first);
        first.clear();
        return copy;
    }
}
