package io.inferencebench.runner.cli;

import io.inferencebench.runner.engine.RequestExecution;
import io.inferencebench.runner.engine.StageObserver;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** Keeps the first error message of each class per stage, to show the user what went wrong. */
final class ErrorSampler implements StageObserver {
    private final Map<String, String> first = new ConcurrentHashMap<>();

    @Override
    public void onFinished(RequestExecution execution) {
        if (!execution.succeeded()) {
            first.putIfAbsent(
                    execution.failure().wireName(),
                    execution.errorMessage() == null ? "" : execution.errorMessage());
        }
    }

    Map<String, String> take() {
        Map<String, String> copy = new TreeMap<>(first);
        first.clear();
        return copy;
    }
}
