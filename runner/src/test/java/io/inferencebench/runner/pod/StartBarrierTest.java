package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class StartBarrierTest {

    @Test
    void parsesUtcAndOffsetInstants() {
        assertThat(StartBarrier.parse("stage-1-start", "2026-01-02T03:04:05.678Z"))
                .isEqualTo(Instant.parse("2026-01-02T03:04:05.678Z"));
        assertThat(StartBarrier.parse("stage-1-start", "2026-01-02T05:04:05+02:00"))
                .isEqualTo(Instant.parse("2026-01-02T03:04:05Z"));
    }

    @Test
    void rejectsGarbageNamingTheKey() {
        assertThatThrownBy(() -> StartBarrier.parse("stage-2-start", "tomorrow"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stage-2-start")
                .hasMessageContaining("tomorrow");
        assertThatThrownBy(() -> StartBarrier.parse("stage-2-start", " "))
                .hasMessageContaining("stage-2-start");
    }

    @Test
    void remainingIsNeverNegative() {
        Instant now = Instant.parse("2026-01-01T00:00:10Z");
        assertThat(StartBarrier.remaining(now.plusMillis(1500), now))
                .isEqualTo(Duration.ofMillis(1500));
        assertThat(StartBarrier.remaining(now.minusSeconds(3), now)).isEqualTo(Duration.ZERO);
    }

    @Test
    void waitsUntilTheWallClockInstantNeverEarlier() {
        Clock clock = Clock.systemUTC();
        Instant start = clock.instant().plusMillis(300);
        long before = System.nanoTime();
        Duration late = new StartBarrier(clock).await(start, () -> false);
        long waited = System.nanoTime() - before;
        // Never early: the stage window must not begin before the operator's instant.
        assertThat(late).isGreaterThanOrEqualTo(Duration.ZERO);
        assertThat(Instant.now()).isAfterOrEqualTo(start);
        assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(290).toNanos());
        // Generous bound: the machine is shared, but a missed wake-up would be far later.
        assertThat(late).isLessThan(Duration.ofMillis(250));
    }

    @Test
    void usesTheGivenClockForTheDistance() {
        // A clock 10 s behind makes an instant 10 s in the past (by the system clock) 0.2 s away.
        Clock behind = Clock.offset(Clock.systemUTC(), Duration.ofSeconds(-10));
        Instant start = Instant.now().minusSeconds(10).plusMillis(200);
        long before = System.nanoTime();
        new StartBarrier(behind).await(start, () -> false);
        assertThat(System.nanoTime() - before)
                .isGreaterThanOrEqualTo(Duration.ofMillis(180).toNanos());
    }

    @Test
    void aPassedInstantReturnsAtOnceAndReportsLateness() {
        Clock fixed = Clock.fixed(Instant.parse("2026-01-01T00:00:05Z"), ZoneOffset.UTC);
        long before = System.nanoTime();
        Duration late =
                new StartBarrier(fixed).await(Instant.parse("2026-01-01T00:00:03Z"), () -> false);
        assertThat(System.nanoTime() - before).isLessThan(Duration.ofMillis(100).toNanos());
        assertThat(late).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void cancellationEndsTheWaitPromptly() throws Exception {
        AtomicBoolean cancelled = new AtomicBoolean();
        Thread canceller =
                Thread.ofPlatform()
                        .start(
                                () -> {
                                    try {
                                        Thread.sleep(100);
                                    } catch (InterruptedException e) {
                                        return;
                                    }
                                    cancelled.set(true);
                                });
        long before = System.nanoTime();
        Duration late =
                new StartBarrier(Clock.systemUTC())
                        .await(Instant.now().plusSeconds(30), cancelled::get);
        canceller.join();
        assertThat(System.nanoTime() - before).isLessThan(Duration.ofSeconds(2).toNanos());
        assertThat(late).isNegative();
    }
}
