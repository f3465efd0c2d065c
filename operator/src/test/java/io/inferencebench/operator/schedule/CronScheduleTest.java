package io.inferencebench.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CronScheduleTest {

    private static CronSchedule cron(String expression, String zone) {
        CronSchedule.Parsed parsed = CronSchedule.parse(expression, zone);
        assertThat(parsed.problem()).isNull();
        return parsed.schedule();
    }

    @Test
    void nextFireOfADailyScheduleIsTheNextThreeOClockInUtc() {
        CronSchedule daily = cron("0 3 * * *", null);
        assertThat(daily.next(Instant.parse("2026-12-02T02:10:00Z")))
                .contains(Instant.parse("2026-12-02T03:00:00Z"));
        assertThat(daily.next(Instant.parse("2026-12-02T03:00:00Z")))
                .as("strictly after")
                .contains(Instant.parse("2026-12-03T03:00:00Z"));
    }

    @Test
    void theTimeZoneMovesTheFireTimeAndFollowsDaylightSaving() {
        CronSchedule berlin = cron("0 3 * * *", "Europe/Berlin");
        // Winter: UTC+1
        assertThat(berlin.next(Instant.parse("2026-12-02T00:00:00Z")))
                .contains(Instant.parse("2026-12-02T02:00:00Z"));
        // Summer: UTC+2
        assertThat(berlin.next(Instant.parse("2026-07-01T00:00:00Z")))
                .contains(Instant.parse("2026-07-01T01:00:00Z"));
    }

    @Test
    void nicknamesMeanWhatCronJobMeans() {
        assertThat(cron("@hourly", null).next(Instant.parse("2026-12-02T02:10:00Z")))
                .contains(Instant.parse("2026-12-02T03:00:00Z"));
        assertThat(cron("@weekly", null).next(Instant.parse("2026-12-02T02:10:00Z")))
                .as("Sunday midnight")
                .contains(Instant.parse("2026-12-06T00:00:00Z"));
    }

    @Test
    void dueIsTheLatestMissedFireTimeOnlyOnce() {
        CronSchedule everyMinute = cron("* * * * *", null);
        Instant since = Instant.parse("2026-12-02T02:00:00Z");
        assertThat(everyMinute.due(since, Instant.parse("2026-12-02T02:00:59Z"))).isEmpty();
        assertThat(everyMinute.due(since, Instant.parse("2026-12-02T02:01:00Z")))
                .contains(Instant.parse("2026-12-02T02:01:00Z"));
        assertThat(everyMinute.due(since, Instant.parse("2026-12-02T02:05:30Z")))
                .as("five missed: one run, for the latest")
                .contains(Instant.parse("2026-12-02T02:05:00Z"));
        assertThat(
                        everyMinute.due(
                                Instant.parse("2026-12-02T02:05:00Z"),
                                Instant.parse("2026-12-02T02:05:30Z")))
                .isEmpty();
    }

    @Test
    void stepsAndListsAreRead() {
        CronSchedule quarterly = cron("*/15 9-17 * * 1-5", null);
        // 2026-12-05 is a Saturday: the next is Monday 09:00.
        assertThat(quarterly.next(Instant.parse("2026-12-04T17:50:00Z")))
                .contains(Instant.parse("2026-12-07T09:00:00Z"));
        assertThat(quarterly.next(Instant.parse("2026-12-07T09:00:00Z")))
                .contains(Instant.parse("2026-12-07T09:15:00Z"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"61 * * * *", "* * * *", "0 0 3 * * *", "every day", "0 25 * * *"})
    void invalidSchedulesAreRefusedNamingTheFieldAndWhatIsAllowed(String expression) {
        CronSchedule.Parsed parsed = CronSchedule.parse(expression, null);
        assertThat(parsed.valid()).isFalse();
        assertThat(parsed.problem())
                .startsWith("spec.schedule: '" + expression + "'")
                .contains("five fields 'minute hour day-of-month month day-of-week'");
    }

    @Test
    void anUnknownTimeZoneIsRefusedNamingTheField() {
        CronSchedule.Parsed parsed = CronSchedule.parse("0 3 * * *", "Mars/Olympus");
        assertThat(parsed.valid()).isFalse();
        assertThat(parsed.problem()).startsWith("spec.timeZone: 'Mars/Olympus'");
    }
}
