package io.inferencebench.runner.stub;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An OpenAI completions server whose first {@code normal} answers are honest and every later one is
 * a JSON body that does not end (1 MiB chunks until the client hangs up, 4 GiB at most): a client
 * that must hold a non-streamed response whole runs out of memory on it. Tokenizer endpoints answer
 * 404, as on a server without them.
 */
public final class EnormousResponses implements StubServer.Handler {

    private final OpenAiStub stub = new OpenAiStub(1, 0, true);
    private final int normal;
    private final AtomicInteger completions = new AtomicInteger();

    /** Body bytes sent in the enormous answers so far. */
    public final AtomicLong enormousBytes = new AtomicLong();

    public EnormousResponses(int normal) {
        this.normal = normal;
    }

    /** Completion requests received so far. */
    public int completions() {
        return completions.get();
    }

    @Override
    public void handle(StubServer.Request request, StubServer.Exchange exchange) throws Exception {
        if (!request.path().contains("completions")) {
            exchange.respond(404, "application/json", "{}");
            return;
        }
        if (completions.incrementAndGet() <= normal) {
            stub.handle(request, exchange);
            return;
        }
        exchange.startChunked(200, "application/json");
        String mebibyte = "a".repeat(1024 * 1024);
        try {
            exchange.chunk("{\"choices\":[{\"text\":\"");
            for (int i = 0; i < 4096; i++) {
                exchange.chunk(mebibyte);
                enormousBytes.addAndGet(mebibyte.length());
            }
            exchange.chunk("\"}]}");
            exchange.endChunked();
        } catch (IOException clientHungUp) {
            exchange.close();
        }
    }
}
