package io.inferencebench.runner.backend;

/**
 * The bytes around the content string of a response's last plainly parsed event, kept per response
 * so that the next event with the same bytes around its content is read without parsing again.
 *
 * <p>Why: a vLLM stream repeats the same id, object, created, model, index, logprobs and finish
 * fields in every token event; only the text differs. Scanning those bytes again for each of 64+
 * events was about a third of the runner's CPU at thousands of streams per second (JFR CPU-time
 * samples in {@code OpenAiJson}). Equal bytes before a string put the scanner in the same state
 * there, and equal bytes after it lead to the same result, so comparing the two byte ranges gives
 * exactly what the full parse would.
 */
public final class EventShape {
    /** Everything up to and including the content string's opening quote; null until learned. */
    byte[] prefix;

    /** Everything after the content string's closing quote. */
    byte[] suffix;

    /**
     * Whether prefix and suffix hold no line break, so that a raw {@code data: } line can be
     * matched against them without framing it first (see {@link OpenAiJson#shortcut}).
     */
    boolean singleLine;
}
