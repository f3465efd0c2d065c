package io.inferencebench.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.CronSyntax;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
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
    @CsvSource(
            delimiter = '|',
            value = {
                "61 * * * *     | the minute (1st field) must be *, 0-59",
                "* * * *        | must be five fields separated by spaces",
                "0 0 3 * * *    | must be five fields separated by spaces",
                "every day      | must be five fields separated by spaces",
                "0 25 * * *     | the hour (2nd field) must be *, 0-23",
                "0 0 0 * *      | the day of the month (3rd field) must be *, 1-31",
                "0 0 * 13 *     | the month (4th field) must be *, 1-12 or JAN-DEC",
                "0 0 * * 8      | the day of the week (5th field) must be *, 0-7",
                "*/0 * * * *    | the minute (1st field)",
                "0 0 * * FRI-MON | a range must not end before it starts",
                "@DAILY         | must be five fields separated by spaces",
                "@every 1h      | must be five fields separated by spaces",
            })
    void invalidSchedulesAreRefusedNamingTheFieldAndWhatIsAllowed(
            String expression, String message) {
        CronSchedule.Parsed parsed = CronSchedule.parse(expression, null);
        assertThat(parsed.valid()).isFalse();
        assertThat(parsed.reason()).isEqualTo(CronSchedule.INVALID_SCHEDULE);
        assertThat(parsed.problem())
                .startsWith("spec.schedule: '" + expression + "' is not a schedule: ")
                .contains(message);
        assertThat(parsed.problem())
                .as("the words of the CRD's CEL rule")
                .endsWith(CronSyntax.scheduleProblem(expression).orElseThrow());
    }

    @Test
    void aTimeZoneInTheScheduleIsSentToTimeZone() {
        CronSchedule.Parsed parsed = CronSchedule.parse("CRON_TZ=Europe/Berlin 0 3 * * *", null);
        assertThat(parsed.valid()).isFalse();
        assertThat(parsed.problem()).contains("a time zone goes in spec.timeZone");
    }

    @Test
    void aWellFormedButUnknownTimeZoneIsItsOwnReasonNamingTheField() {
        CronSchedule.Parsed parsed = CronSchedule.parse("0 3 * * *", "Mars/Olympus_Mons");
        assertThat(CronSyntax.timeZoneProblem("Mars/Olympus_Mons"))
                .as("well formed: admitted by the CRD")
                .isEmpty();
        assertThat(parsed.valid()).isFalse();
        assertThat(parsed.reason()).isEqualTo(CronSchedule.UNKNOWN_TIME_ZONE);
        assertThat(parsed.problem())
                .startsWith("spec.timeZone: 'Mars/Olympus_Mons' is not a time zone of the IANA")
                .contains("tzdata 20")
                .contains("nothing is scheduled");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Local", "+02:00", "europe/berlin", "Europe Berlin", "EST5EDT", ""})
    void aMalformedTimeZoneIsRefusedWithTheWordsOfTheCrd(String zone) {
        CronSchedule.Parsed parsed = CronSchedule.parse("0 3 * * *", zone);
        assertThat(parsed.valid()).isFalse();
        assertThat(parsed.reason()).isEqualTo(CronSchedule.INVALID_SCHEDULE);
        assertThat(parsed.problem())
                .isEqualTo("spec.timeZone: '" + zone + "' " + CronSyntax.TIME_ZONE_MESSAGE);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "UTC",
                "GMT",
                "Europe/Berlin",
                "America/New_York",
                "America/Argentina/Buenos_Aires",
                "America/Port-au-Prince",
                "Etc/GMT+2",
                "Etc/UTC",
                "US/Eastern"
            })
    void ianaZonesAreRead(String zone) {
        assertThat(CronSchedule.parse("0 3 * * *", zone).problem()).isNull();
    }

    @Test
    void namesAndSevenMeanWhatCronJobMeans() {
        Instant wednesday = Instant.parse("2026-12-02T12:00:00Z");
        Instant sunday = Instant.parse("2026-12-06T00:00:00Z");
        assertThat(cron("0 0 * * 7", null).next(wednesday)).contains(sunday);
        assertThat(cron("0 0 * * sun", null).next(wednesday)).contains(sunday);
        assertThat(cron("0 0 * * SUN-MON", null).next(wednesday)).contains(sunday);
        assertThat(cron("0 0 * * SAT,SUN", null).next(wednesday))
                .contains(Instant.parse("2026-12-05T00:00:00Z"));
        assertThat(cron("0 0 1 jan-mar/2 *", null).next(wednesday))
                .contains(Instant.parse("2027-01-01T00:00:00Z"));
        assertThat(cron("0 0 1 * *", null).next(wednesday))
                .isEqualTo(cron("@monthly", null).next(wednesday));
    }

    /**
     * Every schedule the CRD admits is one the parser reads: random expressions from the pieces a
     * cron is made of, in range and out of it, well formed and not. (The other direction holds by
     * construction: the parser refuses first what {@link CronSyntax} refuses.)
     */
    @Test
    void everyScheduleTheCrdAdmitsIsOneTheParserReads() {
        java.util.Random random = new java.util.Random(20261204);
        int admitted = 0;
        int refused = 0;
        for (int i = 0; i < 30_000; i++) {
            String expression = randomSchedule(random);
            if (CronSyntax.scheduleProblem(expression).isPresent()) {
                refused++;
                continue;
            }
            admitted++;
            CronSchedule.Parsed parsed = CronSchedule.parse(expression, null);
            assertThat(parsed.problem()).as("admitted '%s'", expression).isNull();
            // reads its fire times (0 0 31 2 * has none)
            parsed.schedule().next(Instant.parse("2026-12-02T00:00:00Z"));
        }
        assertThat(admitted).as("admitted samples").isGreaterThan(2_000);
        assertThat(refused).as("refused samples").isGreaterThan(3_000);
    }

    private static final String[][] NAMES = {
        {},
        {},
        {},
        {"jan", "FEB", "Mar", "dec", "JUN", "foo", "JANUARY"},
        {"sun", "MON", "Fri", "SAT", "thu", "xyz", "SUNDAY"}
    };
    private static final int[] MAX = {59, 23, 31, 12, 7};

    private static String randomSchedule(java.util.Random r) {
        if (r.nextInt(40) == 0) {
            String[] specials = {
                "@hourly", "@daily", "@weekly", "@monthly", "@yearly", "@annually", "@midnight",
                "@every 1h", "@DAILY", " @daily", "@reboot", "", " ", "CRON_TZ=UTC 0 3 * * *"
            };
            return specials[r.nextInt(specials.length)];
        }
        int fields = r.nextInt(20) == 0 ? 4 + r.nextInt(3) : 5;
        StringBuilder out = new StringBuilder(r.nextInt(10) == 0 ? " " : "");
        for (int f = 0; f < fields; f++) {
            if (f > 0) {
                out.append(r.nextInt(15) == 0 ? "  " : r.nextInt(40) == 0 ? "\t" : " ");
            }
            out.append(randomField(r, Math.min(f, 4)));
        }
        return out.append(r.nextInt(10) == 0 ? " " : "").toString();
    }

    private static String randomField(java.util.Random r, int field) {
        int items = 1 + (r.nextInt(4) == 0 ? r.nextInt(3) : 0);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < items; i++) {
            if (i > 0) {
                out.append(',');
            }
            switch (r.nextInt(9)) {
                case 0 -> out.append('*');
                case 1 -> out.append(r.nextInt(30) == 0 ? "?" : "*/").append(step(r, field));
                case 2, 3 -> out.append(value(r, field));
                case 4, 5 -> out.append(value(r, field)).append('-').append(value(r, field));
                case 6 ->
                        out.append(value(r, field))
                                .append('-')
                                .append(value(r, field))
                                .append('/')
                                .append(step(r, field));
                case 7 -> out.append(value(r, field)).append('/').append(step(r, field));
                default -> {
                    String[] junk = {"L", "1W", "5#2", "", "-", "**", "1-", "-1", "1/", "a", "007"};
                    out.append(r.nextInt(3) == 0 ? junk[r.nextInt(junk.length)] : "*");
                }
            }
        }
        return out.toString();
    }

    private static String value(java.util.Random r, int field) {
        if (NAMES[field].length > 0 && r.nextInt(3) == 0) {
            return NAMES[field][r.nextInt(NAMES[field].length)];
        }
        int v = r.nextInt(MAX[field] + 3) - 1;
        return r.nextInt(12) == 0 && v >= 0 && v < 10 ? "0" + v : Integer.toString(v);
    }

    private static String step(java.util.Random r, int field) {
        int s = r.nextInt(MAX[field] + 3);
        return r.nextInt(12) == 0 && s < 10 ? "0" + s : Integer.toString(s);
    }

    @Test
    void anUnknownTimeZoneIsRefusedNamingTheField() {
        CronSchedule.Parsed parsed = CronSchedule.parse("0 3 * * *", "Mars/Olympus");
        assertThat(parsed.valid()).isFalse();
        assertThat(parsed.problem()).startsWith("spec.timeZone: 'Mars/Olympus'");
    }
}
