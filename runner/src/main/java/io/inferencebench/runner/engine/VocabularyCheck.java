package io.inferencebench.runner.engine;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Watches warm-up requests for the server's verdict that a prompt holds token ids its model does
 * not have (vLLM: HTTP 400 "Token id 7000 is out of vocabulary"). Every later request would fail
 * the same way, so the run stops before its first stage with {@link #message}.
 */
public final class VocabularyCheck implements StageObserver {

    private final AtomicReference<String> first = new AtomicReference<>();

    @Override
    public void onFinished(RequestExecution execution) {
        if (!execution.succeeded() && rejectsTokens(execution.errorMessage())) {
            first.compareAndSet(null, execution.errorMessage());
        }
    }

    static boolean rejectsTokens(String error) {
        if (error == null) {
            return false;
        }
        String e = error.toLowerCase(Locale.ROOT);
        return e.contains("out of vocabulary") || e.contains("out of vocab");
    }

    /** The first such error seen, or null. */
    public String rejection() {
        return first.get();
    }

    /**
     * What to tell the user: the server's words and the two ways to give the runner the model's
     * tokenizer, {@code --tokenizer} on the command line and {@code spec.workload.tokenizer} in a
     * BenchmarkRun.
     */
    public static String message(String rejection, String promptSource) {
        return "warm-up: the server rejects the prompts' token ids ("
                + rejection
                + "); the prompts ("
                + promptSource
                + ") hold ids this model's vocabulary does not have. Give the runner the model's"
                + " tokenizer: --tokenizer PATH/tokenizer.json (CLI) or spec.workload.tokenizer"
                + " (BenchmarkRun), or use text prompts (--prompt-format text). No stage was run.";
    }
}
