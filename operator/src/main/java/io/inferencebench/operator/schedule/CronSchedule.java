package io.inferencebench.operator.schedule;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import io.inferencebench.crds.v1alpha1.CronSyntax;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.zone.ZoneRulesProvider;
import java.util.Optional;

/**
 * A BenchmarkSchedule's {@code spec.schedule} read as a Kubernetes CronJob reads its schedule: five
 * fields (minute hour day-of-month month day-of-week) or a macro, in {@code spec.timeZone} (UTC
 * when unset). What the CRD's CEL rules refuse is refused here first with the same words ({@link
 * CronSyntax}), so a schedule admitted by the API server is one this class reads; what CEL cannot
 * know, whether a well-formed zone exists, is decided with {@link ZoneId}.
 */
public final class CronSchedule {

    /** Condition and Event reason: the schedule or the zone's name is malformed. */
    public static final String INVALID_SCHEDULE = "InvalidSchedule";

    /** Condition and Event reason: a well-formed zone name that java.time does not know. */
    public static final String UNKNOWN_TIME_ZONE = "UnknownTimeZone";

    private static final CronParser PARSER =
            new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));

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
        Optional<String> malformed = CronSyntax.scheduleProblem(expression);
        if (malformed.isPresent()) {
            return invalid(
                    INVALID_SCHEDULE,
                    "spec.schedule: '" + expression + "' is not a schedule: " + malformed.get());
        }
        Optional<String> zoneName = CronSyntax.timeZoneProblem(timeZone);
        if (zoneName.isPresent()) {
            return invalid(INVALID_SCHEDULE, "spec.timeZone: '" + timeZone + "' " + zoneName.get());
        }
        ZoneId zone;
        try {
            zone = timeZone == null ? ZoneOffset.UTC : ZoneId.of(timeZone);
        } catch (DateTimeException e) {
            return invalid(
                    UNKNOWN_TIME_ZONE,
                    "spec.timeZone: '"
                            + timeZone
                            + "' is not a time zone of the IANA database the operator has"
                            + " (tzdata "
                            + tzdataVersion()
                            + "), e.g. UTC, Europe/Berlin, America/New_York; nothing is"
                            + " scheduled until it names one");
        }
        try {
            Cron cron = PARSER.parse(CronSyntax.numericFields(expression)).validate();
            return new Parsed(new CronSchedule(ExecutionTime.forCron(cron), zone), null, null);
        } catch (IllegalArgumentException e) {
            // Not expected after CronSyntax: the two are kept in agreement by CronScheduleTest.
            return invalid(
                    INVALID_SCHEDULE,
                    "spec.schedule: '" + expression + "' is not a schedule: " + e.getMessage());
        }
    }

    private static Parsed invalid(String reason, String problem) {
        return new Parsed(null, reason, problem);
    }

    private static String tzdataVersion() {
        try {
            return ZoneRulesProvider.getVersions("UTC").lastKey();
        } catch (RuntimeException e) {
            return "unknown version";
        }
    }

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
     * @param reason the condition's and Event's reason, when not ({@link #INVALID_SCHEDULE} or
     *     {@link #UNKNOWN_TIME_ZONE})
     * @param problem the message for condition and Event, when not
     */
    public record Parsed(CronSchedule schedule, String reason, String problem) {
        public boolean valid() {
            return schedule != null;
        }
    }
}
