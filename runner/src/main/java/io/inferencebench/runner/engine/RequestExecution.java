package io.inferencebench.runner.engine;

import io.inferencebench.runner.backend.EventShape;
import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.backend.ResponseState;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.TokenCounter;
import io.inferencebench.runner.http.Exchange;
import io.inferencebench.runner.http.FailureClass;
import io.inferencebench.runner.http.Redirects;
import io.inferencebench.runner.http.ResponseSink;
import io.inferencebench.runner.http.SseParser;
import java.io.IOException;
import java.util.Arrays;

/**
 * One request from send to its outcome: the HTTP sink, the SSE listener and the protocol's state in
 * one object, so the hot path allocates little. Lives on one event loop; the finished object is
 * handed to the stage's recorder.
 */
public final class RequestExecution implements ResponseSink, SseParser.Listener, ResponseState {

    /** Output token sources, most to least trustworthy. */
    public static final String SOURCE_USAGE = "usage";

    public static final String SOURCE_TOKENIZER = "tokenizer";
    public static final String SOURCE_CONTENT_EVENTS = "content_events";

    public interface Completion {
        void completed(RequestExecution execution);
    }

    private static final int MAX_ERROR_BODY = 2048;

    final Prompt prompt;
    final boolean warmup;
    final long dueNanos;
    final long slotWaitNanos;
    private final Protocol protocol;
    private final boolean streaming;
    private final TokenCounter tokenCounter;
    private final Completion completion;

    long dispatchedNanos;
    long sendNanos;
    long endNanos;
    long firstContentNanos = -1;
    long[] contentInstants;
    int contentEvents;
    int usagePromptTokens = -1;
    int usageCompletionTokens = -1;
    int status;
    FailureClass failure;
    String errorMessage;
    boolean done;

    /** Aborted by {@link LoadEngine#cancel()}: neither completed nor failed. */
    boolean cancelled;

    /** The JVM failed while this request was handled; it then counts as cancelled. */
    VirtualMachineError jvmError;

    /** The transport's handle, for cancelling; set once the request was handed over. */
    Exchange exchange;

    /** The request's turn index (0-based) in its session, or -1 outside a conversation. */
    int turn = -1;

    /** The index of the model of a mix the request asked for, or -1 without a mix. */
    int model = -1;

    /** Links of the owning loop's in-flight list (only touched on that loop). */
    RequestExecution previousInFlight;

    RequestExecution nextInFlight;

    private boolean sse;
    private SseParser parser;
    private byte[] body;
    private int bodyLength;
    private StringBuilder text;
    private final EventShape eventShape = new EventShape();

    RequestExecution(
            Prompt prompt,
            boolean warmup,
            long dueNanos,
            long slotWaitNanos,
            Protocol protocol,
            GenerationParams params,
            TokenCounter tokenCounter,
            Completion completion) {
        this.prompt = prompt;
        this.warmup = warmup;
        this.dueNanos = dueNanos;
        this.slotWaitNanos = slotWaitNanos;
        this.protocol = protocol;
        this.streaming = params.stream();
        this.tokenCounter = tokenCounter;
        this.completion = completion;
        // Sized for the expected tokens (plus slack) so a typical stream never regrows it.
        this.contentInstants = new long[Math.max(8, Math.min(prompt.maxTokens() + 4, 4096))];
        if (tokenCounter != null) {
            text = new StringBuilder();
        }
    }

    // ---- results -------------------------------------------------------------------------

    public boolean succeeded() {
        return failure == null && !cancelled;
    }

    /** Whether the request was aborted by a cancel (it then neither completed nor failed). */
    public boolean cancelled() {
        return cancelled;
    }

    /** Whether the request was written to the server (a cancel can come before that). */
    public boolean wasSent() {
        return sendNanos != 0;
    }

    public FailureClass failure() {
        return failure;
    }

    public String errorMessage() {
        return errorMessage;
    }

    public int status() {
        return status;
    }

    public long latencyNanos() {
        return endNanos - sendNanos;
    }

    public long ttftNanos() {
        return firstContentNanos - sendNanos;
    }

    /**
     * Whether the response came as an event stream with content events, i.e. whether TTFT, ITL and
     * TPOT were measured. A complete JSON body (asked for with --no-stream, or a server that
     * ignored {@code "stream": true}) has no first-token instant.
     */
    public boolean streamed() {
        return sse && contentEvents > 0;
    }

    /** Slot wait: the dispatcher's wait for a max-concurrency slot plus the pool's queue. */
    public long slotWaitNanos() {
        return slotWaitNanos + poolWaitNanos;
    }

    public int contentEvents() {
        return contentEvents;
    }

    /** Instant of content event {@code i} (nanoTime). */
    public long contentInstant(int i) {
        return contentInstants[i];
    }

    public int inputTokens() {
        return usagePromptTokens >= 0 ? usagePromptTokens : prompt.inputTokens();
    }

    public String inputTokenSource() {
        return usagePromptTokens >= 0 ? SOURCE_USAGE : prompt.inputSource();
    }

    public int outputTokens() {
        if (usageCompletionTokens >= 0) {
            return usageCompletionTokens;
        }
        if (tokenCounter != null && text != null) {
            return tokenCounter.count(text.toString());
        }
        return contentEvents;
    }

    public String outputTokenSource() {
        if (usageCompletionTokens >= 0) {
            return SOURCE_USAGE;
        }
        return tokenCounter != null ? SOURCE_TOKENIZER : SOURCE_CONTENT_EVENTS;
    }

    // ---- ResponseSink ----------------------------------------------------------------------

    long connectedNanos;

    /** Time queued for a pooled connection beyond --max-connections (slot wait, not TTFT). */
    long poolWaitNanos;

    @Override
    public void onPoolWait(long waitedNanos) {
        // Nothing was written while queued: the request is sent when it leaves the queue, so the
        // wait belongs to the schedule lag and slot wait, not to the server's latency or TTFT.
        poolWaitNanos = waitedNanos;
        sendNanos += waitedNanos;
    }

    @Override
    public void onConnected(long nanos) {
        connectedNanos = nanos;
    }

    /** Where a redirect (3xx) pointed: the server's text. */
    private String redirectedTo;

    @Override
    public void onRedirect(String location) {
        redirectedTo = location;
    }

    @Override
    public void onStatus(int statusCode, String contentType) {
        this.status = statusCode;
        if (statusCode >= 400) {
            failure = FailureClass.forStatus(statusCode);
            errorMessage = "HTTP " + statusCode;
            return;
        }
        if (statusCode >= 300 && statusCode < 400) {
            // Not followed: a load generator that follows redirects measures another server.
            failure = FailureClass.OTHER;
            errorMessage =
                    "HTTP "
                            + statusCode
                            + ": "
                            + Redirects.advice(redirectedTo, "--base-url (target.url)");
            return;
        }
        if (statusCode >= 300 || statusCode < 200) {
            failure = FailureClass.OTHER;
            errorMessage = "unexpected HTTP " + statusCode;
            return;
        }
        boolean eventStream = contentType != null && contentType.contains("text/event-stream");
        boolean json = contentType != null && contentType.contains("json");
        sse = streaming ? !json || eventStream : eventStream;
        if (sse) {
            parser = new SseParser(this);
        }
    }

    @Override
    public boolean onBytes(byte[] data, int offset, int length) {
        if (failure != null) {
            // An HTTP error body: keep its start for the message, drain the rest.
            appendBody(data, offset, Math.min(length, MAX_ERROR_BODY - bodyLength));
            return true;
        }
        if (!sse) {
            appendBody(data, offset, length);
            return true;
        }
        parser.feed(data, offset, length);
        if (failure != null) {
            endNanos = System.nanoTime();
            completion.completed(this);
            return false;
        }
        return true;
    }

    @Override
    public void onEnd(long nanos) {
        endNanos = nanos;
        if (failure == null) {
            if (sse) {
                if (!parser.finish()) {
                    // onMalformed set the failure
                } else if (failure == null && contentEvents == 0 && usageCompletionTokens < 0) {
                    fail(FailureClass.MALFORMED_STREAM, "stream ended without any content event");
                } else if (failure == null && contentEvents == 0) {
                    // Usage alone generated no text: nothing to time a first token by, nothing
                    // a user asked for.
                    fail(
                            FailureClass.EMPTY_RESPONSE,
                            "no content: the stream carried only usage (completion_tokens "
                                    + usageCompletionTokens
                                    + "), no text");
                }
            } else {
                try {
                    protocol.parseBody(body == null ? new byte[0] : body, bodyLength, nanos, this);
                    if (failure == null && contentEvents == 0 && usageCompletionTokens < 0) {
                        fail(FailureClass.MALFORMED_STREAM, "response without generated content");
                    } else if (failure == null
                            && contentEvents == 0
                            && usageCompletionTokens == 0) {
                        fail(
                                FailureClass.EMPTY_RESPONSE,
                                "no content: empty text and completion_tokens 0");
                    }
                } catch (IOException | RuntimeException e) {
                    fail(
                            FailureClass.MALFORMED_STREAM,
                            "unreadable response body: " + e.getMessage());
                }
            }
        } else if (body != null && bodyLength > 0 && redirectedTo == null) {
            errorMessage =
                    errorMessage
                            + ": "
                            + SseParser.printable(body, Math.min(bodyLength, 300)).strip();
        }
        completion.completed(this);
    }

    @Override
    public void onFailure(FailureClass failureClass, String message, long nanos) {
        endNanos = nanos;
        if (failure == null) {
            failure = failureClass;
            errorMessage = message;
        } else if (failureClass == FailureClass.TIMEOUT) {
            // An HTTP error whose body never finished: the timeout is what the user must see.
            failure = failureClass;
            errorMessage = message;
        }
        completion.completed(this);
    }

    @Override
    public void onCancelled(long nanos) {
        endNanos = nanos;
        cancelled = true;
        completion.completed(this);
    }

    @Override
    public void onJvmError(VirtualMachineError error, long nanos) {
        // Not the server's failure: the run ends (LoadEngine heard it from the transport).
        jvmError = error;
        body = null;
        text = null;
        onCancelled(nanos);
    }

    // ---- SseParser.Listener ------------------------------------------------------------------

    @Override
    public void onEvent(byte[] data, int length, long nanos) {
        if (failure != null) {
            return;
        }
        if (done) {
            // Events after [DONE] are a protocol violation; the response is still complete.
            return;
        }
        try {
            protocol.parseEvent(data, length, nanos, this);
        } catch (IOException | RuntimeException e) {
            fail(
                    FailureClass.MALFORMED_STREAM,
                    "unparseable event: " + SseParser.printable(data, Math.min(length, 120)));
        }
    }

    @Override
    public int shortcut(byte[] bytes, int from, int end, long nanos) {
        if (failure != null || done) {
            return -1;
        }
        return protocol.shortcutEvent(bytes, from, end, nanos, this);
    }

    @Override
    public void onMalformed(String reason) {
        fail(FailureClass.MALFORMED_STREAM, reason);
    }

    // ---- ResponseState -----------------------------------------------------------------------

    @Override
    public boolean wantsText() {
        return text != null;
    }

    @Override
    public EventShape eventShape() {
        return eventShape;
    }

    @Override
    public void onContent(String contentText, long nanos) {
        if (contentEvents == 0) {
            firstContentNanos = nanos;
        }
        if (contentEvents == contentInstants.length) {
            contentInstants = Arrays.copyOf(contentInstants, contentInstants.length * 2);
        }
        contentInstants[contentEvents++] = nanos;
        if (text != null && contentText != null) {
            text.append(contentText);
        }
    }

    @Override
    public void onUsage(int promptTokens, int completionTokens) {
        if (promptTokens >= 0) {
            usagePromptTokens = promptTokens;
        }
        usageCompletionTokens = completionTokens;
    }

    @Override
    public void onErrorPayload(String message) {
        fail(FailureClass.ERROR_PAYLOAD, message);
    }

    @Override
    public void onDone() {
        done = true;
    }

    private void fail(FailureClass failureClass, String message) {
        if (failure == null) {
            failure = failureClass;
            errorMessage = message;
        }
    }

    private void appendBody(byte[] data, int offset, int length) {
        if (length <= 0) {
            return;
        }
        if (body == null) {
            body = new byte[Math.max(1024, length)];
        } else if (bodyLength + length > body.length) {
            body = Arrays.copyOf(body, Math.max(bodyLength + length, body.length * 2));
        }
        System.arraycopy(data, offset, body, bodyLength, length);
        bodyLength += length;
    }
}
