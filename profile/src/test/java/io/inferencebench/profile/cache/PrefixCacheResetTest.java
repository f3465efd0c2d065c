package io.inferencebench.profile.cache;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Which paths a reset asks, in which order, and what a refusal says. */
class PrefixCacheResetTest {

    private HttpServer server;
    private final List<String> asked = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> answers = new java.util.concurrent.ConcurrentHashMap<>();
    private String url;

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext(
                "/",
                exchange -> {
                    String path = exchange.getRequestURI().getPath();
                    asked.add(exchange.getRequestMethod() + " " + path);
                    String auth = exchange.getRequestHeaders().getFirst("Authorization");
                    int status = "Bearer k".equals(auth) ? answers.getOrDefault(path, 404) : 401;
                    exchange.sendResponseHeaders(status, -1);
                    exchange.close();
                });
        server.start();
        url = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private PrefixCacheReset reset(String backend, String... targets) {
        return new PrefixCacheReset(
                List.of(targets),
                backend,
                Map.of("Authorization", "Bearer k"),
                null,
                Duration.ofSeconds(5));
    }

    @Test
    void sglangIsAskedAtFlushCacheFirstAndThePathThatWorkedIsKept() throws Exception {
        answers.put("/flush_cache", 200);
        answers.put("/reset_prefix_cache", 200);
        PrefixCacheReset reset = reset("sglang", url);
        PrefixCacheReset.Round round = reset.resetAll();
        assertThat(round.state()).isEqualTo("cold");
        assertThat(round.outcomes().get(0).path()).isEqualTo("/flush_cache");
        assertThat(asked).containsExactly("POST /flush_cache");
    }

    @Test
    void aVllmWithoutTheEndpointIsAskedAtBothAndTheAnswerSaysWhy() throws Exception {
        PrefixCacheReset.Round round = reset("vllm", url).resetAll();
        assertThat(asked).containsExactly("POST /reset_prefix_cache", "POST /flush_cache");
        assertThat(round.state()).isEqualTo("undeclared");
        assertThat(round.describeFailures())
                .isEqualTo(
                        url
                                + ": POST /reset_prefix_cache answered HTTP 404, POST /flush_cache"
                                + " answered HTTP 404 (vLLM serves /reset_prefix_cache only when"
                                + " started with VLLM_SERVER_DEV_MODE=1)");
    }

    @Test
    void aRefusalOfAServedEndpointStandsAndOtherTargetsAreStillReset() throws Exception {
        // SGLang refuses a flush while requests are pending: asking elsewhere would not help.
        answers.put("/flush_cache", 400);
        answers.put("/reset_prefix_cache", 200);
        answers.put("/second/flush_cache", 200);
        PrefixCacheReset.Round round = reset("sglang", url, url + "/second").resetAll();
        assertThat(round.outcomes()).hasSize(2);
        assertThat(round.failures()).hasSize(1);
        assertThat(round.outcomes().get(1).reset()).isTrue();
        assertThat(round.outcomes().get(0).failure())
                .isEqualTo("POST /flush_cache answered HTTP 400");
        assertThat(asked).containsExactly("POST /flush_cache", "POST /second/flush_cache");
    }

    @Test
    void anUnreachableTargetIsNamedAndTheOthersAreReset() throws Exception {
        answers.put("/reset_prefix_cache", 200);
        PrefixCacheReset.Round round = reset("vllm", "http://127.0.0.1:9", url).resetAll();
        assertThat(round.state()).isEqualTo("undeclared");
        assertThat(round.failures()).hasSize(1);
        assertThat(round.describeFailures())
                .startsWith("http://127.0.0.1:9: POST /reset_prefix_cache failed: ");
        assertThat(round.outcomes().get(1).reset()).isTrue();
    }
}
