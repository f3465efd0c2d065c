package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ApiRetryTest {

    private final ApiRetry retry = new ApiRetry(Duration.ofSeconds(5), 10, 40);

    @Test
    void transientFailuresAreRetriedUntilTheCallSucceeds() {
        AtomicInteger calls = new AtomicInteger();
        String result =
                retry.call(
                        "patch",
                        () -> {
                            int n = calls.incrementAndGet();
                            if (n == 1) {
                                throw new KubernetesClientException("unavailable", 503, null);
                            }
                            if (n == 2) {
                                throw new KubernetesClientException("connection reset", 0, null);
                            }
                            if (n == 3) {
                                throw new KubernetesClientException("throttled", 429, null);
                            }
                            if (n == 4) {
                                // what the client reports while the API server restarts
                                throw new KubernetesClientException(
                                        "Connection was closed", -1, null);
                            }
                            return "ok";
                        });
        assertThat(result).isEqualTo("ok");
        assertThat(calls).hasValue(5);
    }

    @Test
    void permanentFailuresFailAtOnceNamingTheCall() {
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(
                        () ->
                                retry.call(
                                        "creating ConfigMap ns/r-part-0",
                                        () -> {
                                            calls.incrementAndGet();
                                            throw new KubernetesClientException(
                                                    "configmaps is forbidden", 403, null);
                                        }))
                .isInstanceOf(PodFailure.class)
                .hasMessageContaining("creating ConfigMap ns/r-part-0")
                .hasMessageContaining("403");
        assertThat(calls).hasValue(1);
    }

    @Test
    void theBudgetBoundsRetries() {
        ApiRetry short_ = new ApiRetry(Duration.ofMillis(200), 20, 50);
        AtomicInteger calls = new AtomicInteger();
        long start = System.nanoTime();
        assertThatThrownBy(
                        () ->
                                short_.call(
                                        "get",
                                        () -> {
                                            calls.incrementAndGet();
                                            throw new KubernetesClientException("down", 500, null);
                                        }))
                .isInstanceOf(PodFailure.class);
        assertThat(calls.get()).isGreaterThan(1);
        assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(2).toNanos());
    }
}
