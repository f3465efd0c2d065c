package io.inferencebench.e2e.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.inferencebench.e2e.OperatorFixtures;
import io.inferencebench.testkit.ApiServerFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The leader keeps its Lease through an API server that answers nothing for longer than client-go's
 * 10 s renew deadline: with those timings the operator exited mid-run on a loaded machine ("Stopped
 * leading ... Exiting."). The API server process is stopped (SIGSTOP) and resumed, so requests hang
 * as they do on an overloaded control plane.
 */
class LeaseUnderStallIT {

    private static final String LEASE = "inferencebench-operator-lease";
    private static final Duration STALL = Duration.ofSeconds(20);

    @Test
    @Timeout(300)
    void theLeaderSurvivesAnApiServerThatHangsLongerThanClientGosRenewDeadline() throws Exception {
        Path repoRoot = OperatorFixtures.findRepoRoot();
        Path dir = Path.of("target/lease-under-stall").toAbsolutePath();
        Files.createDirectories(dir);
        try (ApiServerFixture api = ApiServerFixture.start()) {
            OperatorFixtures.installCrd(api.client());
            Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), api.kubeconfigYaml());
            OperatorFixtures.PackagedJars jars =
                    OperatorFixtures.privateJarCopies(repoRoot, dir.resolve("copies"));
            try (OperatorProcess operator =
                    OperatorProcess.start(
                            jars.operatorJar(),
                            kubeconfig,
                            "ghcr.io/inferencebench/runner:test",
                            dir.resolve("operator.log"))) {
                Lease before =
                        await().atMost(Duration.ofSeconds(120))
                                .until(() -> lease(api), l -> l.isPresent())
                                .get();
                String holder = before.getSpec().getHolderIdentity();
                assertThat(holder).isNotBlank();

                ProcessHandle apiServer = apiServerProcess(api);
                long stoppedAt = System.currentTimeMillis();
                signal("STOP", apiServer.pid());
                try {
                    Thread.sleep(STALL.toMillis());
                } finally {
                    signal("CONT", apiServer.pid());
                }
                long resumedAt = System.currentTimeMillis();

                // The leader renews after the stall: the API server records a renewal later than
                // the resume, by the same holder.
                Lease after =
                        await().atMost(Duration.ofSeconds(60))
                                .pollInterval(Duration.ofSeconds(1))
                                .until(
                                        () -> lease(api).orElseThrow(),
                                        l -> renewedMillis(l) > resumedAt && operator.isAlive());
                System.out.printf(
                        "API server stopped %d ms; lease renewed %d ms after the resume by %s%n",
                        resumedAt - stoppedAt,
                        renewedMillis(after) - resumedAt,
                        after.getSpec().getHolderIdentity());
                assertThat(after.getSpec().getHolderIdentity()).isEqualTo(holder);
                assertThat(operator.isAlive()).as("operator log:\n%s", operator.log()).isTrue();
                assertThat(operator.log()).doesNotContain("Stopped leading");
                assertThat(after.getSpec().getLeaseDurationSeconds())
                        .as("the Lease carries the operator's default lease duration")
                        .isEqualTo(60);
            }
        }
    }

    private static Optional<Lease> lease(ApiServerFixture api) {
        return api.client().leases().inAnyNamespace().list().getItems().stream()
                .filter(l -> l.getMetadata().getName().equals(LEASE))
                .filter(l -> l.getSpec() != null && l.getSpec().getHolderIdentity() != null)
                .findFirst();
    }

    private static long renewedMillis(Lease lease) {
        ZonedDateTime renew = lease.getSpec().getRenewTime();
        return renew == null ? 0 : renew.toInstant().toEpochMilli();
    }

    /** This fixture's kube-apiserver: the child process serving the kubeconfig's port. */
    private static ProcessHandle apiServerProcess(ApiServerFixture api) {
        Matcher port =
                Pattern.compile("server: *https://[^:]+:(\\d+)").matcher(api.kubeconfigYaml());
        assertThat(port.find()).as("server URL in %s", api.kubeconfigYaml()).isTrue();
        String securePort = port.group(1);
        List<ProcessHandle> matches =
                ProcessHandle.current()
                        .descendants()
                        .filter(p -> p.info().command().orElse("").endsWith("kube-apiserver"))
                        .filter(p -> servesPort(p, securePort))
                        .toList();
        assertThat(matches).as("kube-apiserver with --secure-port %s", securePort).hasSize(1);
        return matches.get(0);
    }

    private static boolean servesPort(ProcessHandle process, String port) {
        List<String> args = Arrays.asList(process.info().arguments().orElse(new String[0]));
        int flag = args.indexOf("--secure-port");
        return args.contains("--secure-port=" + port)
                || (flag >= 0 && flag + 1 < args.size() && args.get(flag + 1).equals(port));
    }

    private static void signal(String signal, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
        assertThat(kill.waitFor()).as("kill -%s %d", signal, pid).isZero();
    }
}
