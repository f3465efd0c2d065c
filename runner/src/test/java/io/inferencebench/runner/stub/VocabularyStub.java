package io.inferencebench.runner.stub;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A model with a small vocabulary, answering as vLLM does: {@code /tokenize} and {@code
 * /detokenize} (a word per token; each new word gets the next id until the vocabulary is full, then
 * the unknown id 0), and HTTP 400 "Token id N is out of vocabulary" for a token-id prompt with an
 * id it does not have. Any other request goes to {@code next}.
 */
public final class VocabularyStub implements StubServer.Handler {

    private final int vocabularySize;
    private final boolean endpoints;
    private final StubServer.Handler next;
    private final Map<String, Integer> ids = new ConcurrentHashMap<>();
    private final Map<Integer, String> words = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger(1);
    public final AtomicInteger tokenizeCalls = new AtomicInteger();
    public final AtomicInteger rejected = new AtomicInteger();

    /**
     * @param endpoints whether /tokenize and /detokenize exist (else 404, as on servers without)
     */
    public VocabularyStub(int vocabularySize, boolean endpoints, StubServer.Handler next) {
        this.vocabularySize = vocabularySize;
        this.endpoints = endpoints;
        this.next = next;
        words.put(0, "<unk>");
    }

    public int vocabularySize() {
        return vocabularySize;
    }

    @Override
    public void handle(StubServer.Request request, StubServer.Exchange exchange) throws Exception {
        String path = request.path();
        if (path.equals("/tokenize") || path.equals("/detokenize")) {
            if (!endpoints) {
                exchange.respond(404, "application/json", "{\"detail\":\"Not Found\"}");
                return;
            }
            JsonNode body = request.json();
            if (path.equals("/tokenize")) {
                tokenizeCalls.incrementAndGet();
                List<String> out = new ArrayList<>();
                for (String w : body.path("prompt").asText().trim().split("\\s+")) {
                    if (!w.isEmpty()) {
                        out.add(Integer.toString(id(w)));
                    }
                }
                exchange.respond(
                        200,
                        "application/json",
                        "{\"count\":"
                                + out.size()
                                + ",\"max_model_len\":512,\"tokens\":["
                                + String.join(",", out)
                                + "]}");
            } else {
                StringBuilder text = new StringBuilder();
                for (JsonNode t : body.path("tokens")) {
                    if (!text.isEmpty()) {
                        text.append(' ');
                    }
                    text.append(words.getOrDefault(t.asInt(), "<unk>"));
                }
                exchange.respond(200, "application/json", "{\"prompt\":\"" + text + "\"}");
            }
            return;
        }
        JsonNode prompt = request.method().equals("POST") ? request.json().path("prompt") : null;
        if (prompt != null && prompt.isArray()) {
            for (JsonNode t : prompt) {
                if (t.asInt() < 0 || t.asInt() >= vocabularySize) {
                    rejected.incrementAndGet();
                    exchange.respond(
                            400,
                            "application/json",
                            "{\"error\":{\"message\":\"Token id "
                                    + t.asInt()
                                    + " is out of vocabulary\",\"type\":\"BadRequestError\","
                                    + "\"param\":null,\"code\":400}}");
                    return;
                }
            }
        }
        next.handle(request, exchange);
    }

    private synchronized int id(String word) throws IOException {
        Integer known = ids.get(word);
        if (known != null) {
            return known;
        }
        if (nextId.get() >= vocabularySize) {
            return 0;
        }
        int id = nextId.getAndIncrement();
        ids.put(word, id);
        words.put(id, word);
        return id;
    }
}
