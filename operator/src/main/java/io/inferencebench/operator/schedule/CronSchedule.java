package io.inferencebench.operator.schedule;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A BenchmarkSchedule's {@code spec.schedule} read as a Kubernetes CronJob reads its schedule: five
 * fields (minute hour day-of-month month day-of-week) or a nickname, in {@code spec.timeZone} (UTC
 * when unset).
 */
public final class CronSchedule {

    private static final CronParser PARSER =
            new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));

    /** The nicknames CronJob accepts, as the five-field expressions they stand for. */
    private static final Map<String, String> NICKNAMES =
            Map.of(
                    "@yearly", "0 0 1 1 *",
                    "@annually", "0 0 1 1 *",
                    "@monthly", "0 0 1 * *",
                    "@weekly", "0 0 * * 0",
                    "@daily", "0 0 * * *",
                    "@midnight", "0 0 * * *",
                    "@hourly", "0 * * * *");

    private final ExecutionTime executions;
    private final ZoneId zone;

    private CronSchedule(ExecutionTime executions, ZoneId zone) {
        this.executions = executions;
        this.zone = zone;
    }

    /**
     * Reads a schedule.
     *
     * @param expression {@code spec.schedule}
     * @param timeZone {@code spec.timeZone}, or {@code null} for UTC
     * @return the schedule, or why it is not one (naming the field and what is allowed)
     */
    public static Parsed parse(String expression, String timeZone) {
        ZoneId zone;
        try {
            zone = timeZone == null || timeZone.isBlank() ? ZoneOffset.UTC : ZoneId.of(timeZone);
        } catch (DateTimeException e) {
            return new Parsed(
                    null,
                    "spec.timeZone: '"
                            + timeZone
                            + "' is not an IANA time zone name (e.g. UTC, Europe/Berlin,"
                            + " America/New_York)");
        }
        if (expression == null || expression.isBlank()) {
            return new Parsed(null, "spec.schedule: must be set" + ALLOWED);
        }
        String trimmed = expression.trim();
        String fields = NICKNAMES.getOrDefault(trimmed.toLowerCase(Locale.ROOT), trimmed);
        if (fields.split("\\s+").length != 5) {
            return new Parsed(
                    null,
                    "spec.schedule: '"
                            + expression
                            + "' has "
                            + fields.split("\\s+").length
                            + " field(s), not 5"
                            + ALLOWED);
        }
        try {
            Cron cron = PARSER.parse(fields).validate();
            return new Parsed(new CronSchedule(ExecutionTime.forCron(cron), zone), null);
        } catch (IllegalArgumentException e) {
            return new Parsed(
                    null,
                    "spec.schedule: '"
                            + expression
                            + "' is not a valid cron: "
                            + e.getMessage()
                            + ALLOWED);
        }
    }

    private static final String ALLOWED =
            " (allowed: five fields 'minute hour day-of-month month day-of-week' as in a"
                    + " Kubernetes CronJob, e.g. '0 3 * * *', or @hourly, @daily, @weekly,"
                    + " @monthly, @yearly)";

    /**
     * The first fire time strictly after an instant.
     *
     * @param after the instant
     * @return the next fire time, if the schedule ever fires again
     */
    public Optional<Instant> next(Instant after) {
        return executions.nextExecution(ZonedDateTime.ofInstant(after, zone)).map(Instant::from);
    }

    /**
     * The most recent fire time after {@code since} and at or before {@code now}: the run that is
     * due. Fire times missed in between are not made up (one run, for the latest).
     *
     * @param since the last fire time handled (or the schedule's creation)
     * @param now the current instant
     * @return the due fire time, if any
     */
    public Optional<Instant> due(Instant since, Instant now) {
        Optional<Instant> first = next(since);
        if (first.isEmpty() || first.get().isAfter(now)) {
            return Optional.empty();
        }
        Instant latest = first.get();
        Optional<Instant> last =
                executions.lastExecution(ZonedDateTime.ofInstant(now, zone)).map(Instant::from);
        if (last.isPresent() && last.get().isAfter(latest) && !last.get().isAfter(now)) {
            latest = last.get();
        }
        return Optional.of(latest);
    }

    /**
     * A parsed schedule or the reason it is not one.
     *
     * @param schedule the schedule, when valid
     * @param problem the message for condition and Event, when not
     */
    public record Parsed(CronSchedule schedule, String problem) {
        public boolean valid() {
            return schedule != null;
        }
    }
}
