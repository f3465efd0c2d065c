package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.StageSummary;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Who serves a run against three simulator replicas behind one Service (issue 24's table): rates 2,
 * 8 and 32 req/s and concurrency 1 with one runner pod, 2 and 8 req/s with two, through the Service
 * ({@code balance} unset), through it with {@code requestsPerConnection: 1} and with {@code
 * balance: endpoints} ({@link #MODES}). The requests each replica served come from its own {@code
 * vllm:request_success_total} in the stage window (the profile's {@code replica_balance}); the
 * verdict is the stage's {@code loadBalanced}.
 *
 * <p>A benchmark, not a test tier: the name matches neither {@code *IT} nor {@code *E2E}, so only
 * {@code -Dit.test=ReplicaBalanceBench} runs it (docs/benchmarks.md, "Replica balance"). It asserts
 * that every request was served and counted, and that endpoints mode is within ±10 % of even; the
 * table is printed and written to {@code target/bench/replica-balance.txt}.
 */
class ReplicaBalanceBench {

    static final String NS = "bench-balance";
    static final String MODEL = "tiny-model";

    @AutoClose private static ChartCluster cluster;
    private static KubernetesClient client;

    @BeforeAll
    static void startCluster() {
        cluster =
                ChartCluster.start(
                        List.of(NS), Path.of("target/replica-balance-logs").toAbsolutePath());
        client = cluster.client;
        cluster.simulator("sim", MODEL)
                .replicas(3)
                .timeToFirstToken(20)
                .interTokenLatency(5)
                .deploy(client, NS, Duration.ofMinutes(2));
    }

    /**
     * The modes of the table: through the Service, through it with one request per connection, with
     * endpoints; {@code -Dbench.balance.modes=svc,rpc1,ep} picks some.
     */
    static final List<String> MODES =
            List.of(System.getProperty("bench.balance.modes", "svc,rpc1,ep").split(","));

    /**
     * One run of the table: its load, runner pods, balance mode and requests per connection ({@code
     * null}: no bound).
     */
    private record Case(
            String name, String load, int pods, String balance, Integer requestsPerConnection) {

        String targetLines() {
            return (balance == null ? "" : "    balance: " + balance + "\n")
                    + (requestsPerConnection == null
                            ? ""
                            : "    requestsPerConnection: " + requestsPerConnection + "\n");
        }

        String mode() {
            return (balance == null ? "service" : balance)
                    + (requestsPerConnection == null
                            ? ""
                            : ", " + requestsPerConnection + " request(s)/connection");
        }

        String yaml() {
            return """
                    apiVersion: inferencebench.io/v1alpha1
                    kind: BenchmarkRun
                    metadata: {name: %s}
                    spec:
                      target:
                        service: {name: sim, port: 8000}
                        backend: vllm
                        model: %s
                    %s  workload:
                        dataset:
                          type: random
                          inputTokens: {type: fixed, mean: 16}
                          outputTokens: {type: fixed, mean: 8}
                          seed: 7
                        streaming: true
                        ignoreEos: true
                      load:
                    %s
                        arrival: constant
                        warmupRequests: 2
                        cooldown: 1s
                      metrics:
                        interval: 1s
                      runner:
                        parallelism: %d
                        resources:
                          requests: {cpu: 100m, memory: 256Mi}
                          limits: {memory: 768Mi}
                    """
                    .formatted(name, MODEL, targetLines(), load, pods);
        }
    }

    @Test
    void theTableOfServedSharesThroughTheServiceAndWithEndpoints() throws Exception {
        List<Case> cases = new ArrayList<>();
        for (String mode : MODES) {
            String balance = mode.equals("ep") ? "endpoints" : null;
            Integer perConnection = mode.equals("rpc1") ? 1 : null;
            cases.add(
                    new Case(
                            mode + "-rates",
                            "    stages:\n"
                                    + "      - {requestRate: 2, numPrompts: 120}\n"
                                    + "      - {requestRate: 8, numPrompts: 240}\n"
                                    + "      - {requestRate: 32, numPrompts: 480}",
                            1,
                            balance,
                            perConnection));
            cases.add(
                    new Case(
                            mode + "-closed",
                            "    stages:\n      - {concurrency: 1, numPrompts: 150}",
                            1,
                            balance,
                            perConnection));
            cases.add(
                    new Case(
                            mode + "-two-pods",
                            "    stages:\n"
                                    + "      - {requestRate: 2, numPrompts: 120}\n"
                                    + "      - {requestRate: 8, numPrompts: 240}",
                            2,
                            balance,
                            perConnection));
        }
        List<String> table = new ArrayList<>();
        table.add("# replica balance, 3 simulator replicas, " + Instant.now());
        table.add("| balance | load | runner pods | served per replica (shares) | LoadBalanced |");
        table.add("|---|---|---|---|---|");
        for (Case c : cases) {
            Runs.create(client, NS, c.yaml());
            BenchmarkRun done =
                    Runs.awaitPhase(client, NS, c.name(), Duration.ofMinutes(6), Phase.SUCCEEDED);
            List<JsonNode> profiles = done.getStatus().getProfiles();
            for (int i = 0; i < profiles.size(); i++) {
                JsonNode metrics = profiles.get(i).get("metrics");
                StageSummary stage = done.getStatus().getResults().get(i);
                Map<String, Long> served = new TreeMap<>();
                JsonNode counts = metrics.path("replica_balance").path("served");
                for (Iterator<String> it = counts.fieldNames(); it.hasNext(); ) {
                    String replica = it.next();
                    served.put(replica, counts.get(replica).asLong());
                }
                long total = served.values().stream().mapToLong(Long::longValue).sum();
                assertThat(served).as("%s stage %d: %s", c.name(), i + 1, metrics).hasSize(3);
                assertThat(total)
                        .as("%s stage %d: every request served and counted", c.name(), i + 1)
                        .isEqualTo(metrics.get("requests_sent").asLong());
                if ("endpoints".equals(c.balance())) {
                    for (long n : served.values()) {
                        assertThat((double) n)
                                .as("%s stage %d: within 10 %% of even", c.name(), i + 1)
                                .isBetween(total / 3.0 * 0.9, total / 3.0 * 1.1);
                    }
                }
                StringBuilder shares = new StringBuilder();
                for (long n : served.values()) {
                    shares.append(shares.isEmpty() ? "" : " / ").append(n);
                }
                shares.append(" (");
                StringBuilder pct = new StringBuilder();
                for (long n : served.values()) {
                    pct.append(pct.isEmpty() ? "" : " / ")
                            .append(String.format(Locale.ROOT, "%.0f", 100.0 * n / total));
                }
                shares.append(pct).append(" %)");
                String load =
                        stage.getRequestRate() != null
                                ? String.format(Locale.ROOT, "%.0f req/s", stage.getRequestRate())
                                : "concurrency " + stage.getConcurrency();
                String row =
                        String.format(
                                Locale.ROOT,
                                "| %s | %s, %d requests | %d | %s | %s |",
                                c.mode(),
                                load,
                                total,
                                c.pods(),
                                shares,
                                stage.getLoadBalanced() == null
                                        ? "- (" + stage.getLoadBalancedMessage() + ")"
                                        : stage.getLoadBalanced()
                                                ? "True"
                                                : "False: " + stage.getLoadBalancedMessage());
                table.add(row);
                System.out.println(row);
            }
        }
        Path out = Path.of("target/bench/replica-balance.txt");
        Files.createDirectories(out.getParent());
        Files.write(out, table);
        System.out.println(String.join("\n", table));
    }
}
