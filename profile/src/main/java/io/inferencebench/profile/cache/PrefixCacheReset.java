package io.inferencebench.profile.cache;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLContext;

/**
 * Empties the prefix cache of every target server before a stage, so that a stage starts from a
 * cold cache on purpose rather than by chance: vLLM's {@code POST /reset_prefix_cache} (which vLLM
 * serves only when started with {@code VLLM_SERVER_DEV_MODE=1}) and SGLang's {@code POST
 * /flush_cache}. Each target is asked at its backend's path first, then at the other; the path that
 * worked is remembered for the next stage.
 *
 * <p>A target that answers neither with a 2xx leaves the stage's cache state undeclared: the round
 * says which target failed and how (the status, never the server's text, which may echo the
 * request's headers).
 */
public final class PrefixCacheReset {

    static final String VLLM_PATH = "/reset_prefix_cache";
    static final String SGLANG_PATH = "/flush_cache";

    /**
     * How one target answered.
     *
     * @param target the server's base URL
     * @param path the path that reset it, or {@code null}
     * @param failure why it was not reset, or {@code null}
     */
    public record Outcome(String target, String path, String failure) {

        /** Whether the target's cache was emptied. */
        public boolean reset() {
            return failure == null;
        }
    }

    /** The outcome of one reset of every target, in target order. */
    public record Round(List<Outcome> outcomes) {

        /** Defensive copy. */
        public Round {
            outcomes = List.copyOf(outcomes);
        }

        /**
         * The stage's declared cache state: {@code cold} when every target was reset, {@code
         * undeclared} otherwise (a benchmark cannot claim a state it did not establish).
         */
        public String state() {
            return failures().isEmpty() ? "cold" : "undeclared";
        }

        /** The targets that were not reset. */
        public List<Outcome> failures() {
            return outcomes.stream().filter(o -> !o.reset()).toList();
        }

        /** One line naming each target that was not reset and why; empty when all were. */
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

    private final List<String> targets;
    private final List<String> paths;
    private final ServerPost server;
    private final Map<String, String> pathThatWorked = new ConcurrentHashMap<>();

    /**
     * @param targets the servers' base URLs (the reset paths are appended)
     * @param backend the backend, whose path is tried first ({@code sglang}: {@code /flush_cache})
     * @param headers the request headers of the load (a gateway may want its key here too)
     * @param sslContext the certificate checks of an https target (the load's), {@code null} for
     *     the JVM's default trust
     * @param timeout the limit on each request
     */
    public PrefixCacheReset(
            List<String> targets,
            String backend,
            Map<String, String> headers,
            SSLContext sslContext,
            Duration timeout) {
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("no target to reset");
        }
        this.targets = List.copyOf(targets);
        this.paths =
                "sglang".equals(backend.toLowerCase(Locale.ROOT))
                        ? List.of(SGLANG_PATH, VLLM_PATH)
                        : List.of(VLLM_PATH, SGLANG_PATH);
        this.server = new ServerPost(headers, sslContext, timeout);
    }

    /** The servers this resets, in order. */
    public List<String> targets() {
        return targets;
    }

    /** Resets every target, one after the other. */
    public Round resetAll() throws InterruptedException {
        List<Outcome> outcomes = new ArrayList<>(targets.size());
        for (String target : targets) {
            outcomes.add(reset(target));
        }
        return new Round(outcomes);
    }

    private Outcome reset(String target) throws InterruptedException {
        String known = pathThatWorked.get(target);
        List<String> order = new ArrayList<>(paths);
        if (known != null) {
            order.remove(known);
            order.add(0, known);
        }
        List<String> answers = new ArrayList<>();
        for (String path : order) {
            int status;
            try {
                status = server.post(target + path, null);
            } catch (IOException e) {
                // Unreachable: asking at another path would not help.
                return new Outcome(
                        target, null, "POST " + path + " failed: " + e.getClass().getSimpleName());
            }
            if (status / 100 == 2) {
                pathThatWorked.put(target, path);
                return new Outcome(target, path, null);
            }
            answers.add("POST " + path + " answered HTTP " + status);
            if (status != 404 && status != 405) {
                // The server has the endpoint and refused: its answer stands.
                break;
            }
        }
        String failure = String.join(", ", answers);
        if (answers.size() == paths.size()) {
            failure +=
                    " (vLLM serves "
                            + VLLM_PATH
                            + " only when started with VLLM_SERVER_DEV_MODE=1)";
        }
        return new Outcome(target, null, failure);
    }
}
