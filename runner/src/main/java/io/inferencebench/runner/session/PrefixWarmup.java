package io.inferencebench.runner.session;

import io.inferencebench.profile.cache.ServerPost;
import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.dataset.Prompt;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.net.ssl.SSLContext;

/**
 * Warms the prefix cache of every target server before a stage ({@code prefixCache.state: warm}):
 * each of the workload's shared prefixes is sent alone, asking for one token, to each server, so
 * that every request of the stage finds its prefix cached on whichever replica serves it. The
 * prefixes go to every server in turn (the servers in parallel), not through the load's spread: a
 * prefix cached on one replica warms no other.
 *
 * <p>Sent before the stage's window, these requests are in no figure of the stage; a target that
 * does not answer each with a 2xx leaves the stage's cache state undeclared, the round naming it
 * and the status (never the server's text, which may echo the request's headers).
 */
public final class PrefixWarmup {

    /**
     * How one target took the prefixes.
     *
     * @param target the server's base URL
     * @param warmed the prefixes it answered with a 2xx
     * @param failure why it is not warm, or {@code null}
     */
    public record Outcome(String target, int warmed, String failure) {}

    /** The outcome of one warming of every target, in target order. */
    public record Round(List<Outcome> outcomes) {

        /** Defensive copy. */
        public Round {
            outcomes = List.copyOf(outcomes);
        }

        /** The targets that were not warmed. */
        public List<Outcome> failures() {
            return outcomes.stream().filter(o -> o.failure() != null).toList();
        }

        /** One line naming each target that was not warmed and why; empty when all were. */
        public String describeFailures() {
            StringBuilder line = new StringBuilder();
            for (Outcome o : failures()) {
                if (!line.isEmpty()) {
                    line.append("; ");
                }
                line.append(o.target()).append(": ").append(o.failure());
            }
            return line.toString();
        }
    }

    private final String path;
    private final List<byte[]> bodies;
    private final ServerPost server;

    /**
     * @param prompts the shared prefixes, each alone ({@code PromptSource.warmingPrompts})
     * @param path the load's request path, e.g. {@code /v1/completions}
     * @param headers the load's request headers
     * @param sslContext the certificate checks of an https target (the load's), {@code null} for
     *     the JVM's default trust
     * @param timeout the limit on each request
     */
    public PrefixWarmup(
            List<Prompt> prompts,
            Protocol protocol,
            GenerationParams params,
            String path,
            Map<String, String> headers,
            SSLContext sslContext,
            Duration timeout)
            throws IOException {
        if (prompts.isEmpty()) {
            throw new IllegalArgumentException("no prefix to warm");
        }
        List<byte[]> encoded = new ArrayList<>(prompts.size());
        for (Prompt prompt : prompts) {
            encoded.add(protocol.requestBody(prompt, params));
        }
        this.bodies = List.copyOf(encoded);
        this.path = path;
        this.server = new ServerPost(headers, sslContext, timeout);
    }

    /** How many prefixes each target is sent. */
    public int prefixes() {
        return bodies.size();
    }

    /** Sends every prefix to every target (targets in parallel) and waits for the answers. */
    public Round warmAll(List<String> targets) throws InterruptedException {
        try (ExecutorService perTarget = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Outcome>> outcomes = new ArrayList<>(targets.size());
            for (String target : targets) {
                outcomes.add(perTarget.submit(() -> warm(target)));
            }
            List<Outcome> round = new ArrayList<>(targets.size());
            for (int i = 0; i < targets.size(); i++) {
                try {
                    round.add(outcomes.get(i).get());
                } catch (ExecutionException e) {
                    round.add(
                            new Outcome(
                                    targets.get(i),
                                    0,
                                    "failed: " + e.getCause().getClass().getSimpleName()));
                }
            }
            return new Round(round);
        }
    }

    private Outcome warm(String target) throws InterruptedException {
        String url = target.replaceAll("/+$", "") + path;
        int warmed = 0;
        for (byte[] body : bodies) {
            int status;
            try {
                status = server.post(url, body);
            } catch (IOException e) {
                return new Outcome(
                        target,
                        warmed,
                        String.format(
                                Locale.ROOT,
                                "POST %s failed after %d of %d prefixes: %s",
                                path,
                                warmed,
                                bodies.size(),
                                e.getClass().getSimpleName()));
            }
            if (status / 100 != 2) {
                return new Outcome(
                        target,
                        warmed,
                        String.format(
                                Locale.ROOT,
                                "POST %s answered HTTP %d after %d of %d prefixes",
                                path,
                                status,
                                warmed,
                                bodies.size()));
            }
            warmed++;
        }
        return new Outcome(target, warmed, null);
    }
}
