package io.inferencebench.crds.v1alpha1;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a BenchmarkSchedule's {@code spec.schedule} and {@code spec.timeZone} may look like, in one
 * place for both checks: the CRD's CEL rules (the constants below, used by {@link
 * BenchmarkScheduleSpec}'s annotations) refuse a malformed value at {@code kubectl apply}, and
 * {@link #scheduleProblem(String)} / {@link #timeZoneProblem(String)} say the same in Java with the
 * same messages (the operator checks with them before it parses). The regular expressions use no
 * backslash and mean the same in RE2 (CEL's {@code matches}) and in {@link Pattern}.
 *
 * <p>A schedule is one of the macros a Kubernetes CronJob accepts ({@code @yearly}, {@code
 * @annually}, {@code @monthly}, {@code @weekly}, {@code @daily}, {@code @midnight}, {@code
 * @hourly}) or five fields separated by spaces: minute 0-59, hour 0-23, day of the month 1-31, month
 * 1-12 or JAN-DEC, day of the week 0-7 (0 and 7 are Sunday) or SUN-SAT (names in any case). A field
 * is a comma-separated list of items; an item is {@code *}, a value or a range {@code a-b} (not
 * ending before it starts), optionally with a step {@code /n} (1 up to the field's largest value).
 *
 * <p>A time zone has the shape of an IANA name: {@code UTC}, {@code GMT}, or {@code Area/Location}
 * with an optional third part ({@code Europe/Berlin}, {@code America/Argentina/Buenos_Aires},
 * {@code Etc/GMT+2}). Whether the zone exists is not a question of shape: the operator decides it
 * with {@link java.time.ZoneId} and reports an unknown one in the schedule's status.
 */
public final class CronSyntax {

    private CronSyntax() {}

    /** The macros of a Kubernetes CronJob, as the five fields they stand for. */
    public static final Map<String, String> MACROS =
            Map.of(
                    "@yearly", "0 0 1 1 *",
                    "@annually", "0 0 1 1 *",
                    "@monthly", "0 0 1 * *",
                    "@weekly", "0 0 * * 0",
                    "@daily", "0 0 * * *",
                    "@midnight", "0 0 * * *",
                    "@hourly", "0 * * * *");

    private static final String MINUTE_VALUE = "[0-5]?[0-9]";
    private static final String MINUTE_STEP = "0?[1-9]|[1-5][0-9]";
    private static final String HOUR_VALUE = "[01]?[0-9]|2[0-3]";
    private static final String HOUR_STEP = "0?[1-9]|1[0-9]|2[0-3]";
    private static final String DAY_VALUE = "0?[1-9]|[12][0-9]|3[01]";
    private static final String DAY_STEP = DAY_VALUE;
    private static final String MONTH_VALUE =
            "0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)";
    private static final String MONTH_STEP = "0?[1-9]|1[0-2]";
    private static final String WEEKDAY_VALUE = "0?[0-7]|(?i:sun|mon|tue|wed|thu|fri|sat)";
    private static final String WEEKDAY_STEP = "0?[1-6]";

    private static final String ITEM_START = "(?:[*]|(?:";
    private static final String ANY_FIELD = "[^ ]+";

    /** One field: items {@code *}, {@code v}, {@code a-b}, each with an optional step. */
    private static final String MINUTE =
            ITEM_START
                    + MINUTE_VALUE
                    + ")(?:-(?:"
                    + MINUTE_VALUE
                    + "))?)(?:/(?:"
                    + MINUTE_STEP
                    + "))?(?:,"
                    + ITEM_START
                    + MINUTE_VALUE
                    + ")(?:-(?:"
                    + MINUTE_VALUE
                    + "))?)(?:/(?:"
                    + MINUTE_STEP
                    + "))?)*";

    private static final String HOUR =
            ITEM_START
                    + HOUR_VALUE
                    + ")(?:-(?:"
                    + HOUR_VALUE
                    + "))?)(?:/(?:"
                    + HOUR_STEP
                    + "))?(?:,"
                    + ITEM_START
                    + HOUR_VALUE
                    + ")(?:-(?:"
                    + HOUR_VALUE
                    + "))?)(?:/(?:"
                    + HOUR_STEP
                    + "))?)*";

    private static final String DAY =
            ITEM_START
                    + DAY_VALUE
                    + ")(?:-(?:"
                    + DAY_VALUE
                    + "))?)(?:/(?:"
                    + DAY_STEP
                    + "))?(?:,"
                    + ITEM_START
                    + DAY_VALUE
                    + ")(?:-(?:"
                    + DAY_VALUE
                    + "))?)(?:/(?:"
                    + DAY_STEP
                    + "))?)*";

    private static final String MONTH =
            ITEM_START
                    + MONTH_VALUE
                    + ")(?:-(?:"
                    + MONTH_VALUE
                    + "))?)(?:/(?:"
                    + MONTH_STEP
                    + "))?(?:,"
                    + ITEM_START
                    + MONTH_VALUE
                    + ")(?:-(?:"
                    + MONTH_VALUE
                    + "))?)(?:/(?:"
                    + MONTH_STEP
                    + "))?)*";

    private static final String WEEKDAY =
            ITEM_START
                    + WEEKDAY_VALUE
                    + ")(?:-(?:"
                    + WEEKDAY_VALUE
                    + "))?)(?:/(?:"
                    + WEEKDAY_STEP
                    + "))?(?:,"
                    + ITEM_START
                    + WEEKDAY_VALUE
                    + ")(?:-(?:"
                    + WEEKDAY_VALUE
                    + "))?)(?:/(?:"
                    + WEEKDAY_STEP
                    + "))?)*";

    /** Five fields separated by spaces, whatever they hold. */
    public static final String FIVE_FIELDS_REGEX =
            "^ *" + ANY_FIELD + " +" + ANY_FIELD + " +" + ANY_FIELD + " +" + ANY_FIELD + " +"
                    + ANY_FIELD + " *$";

    /** The minute field checked, the other four taken as they are. */
    public static final String MINUTE_REGEX =
            "^ *(?:" + MINUTE + ") +" + ANY_FIELD + " +" + ANY_FIELD + " +" + ANY_FIELD + " +"
                    + ANY_FIELD + " *$";

    /** The hour field checked. */
    public static final String HOUR_REGEX =
            "^ *" + ANY_FIELD + " +(?:" + HOUR + ") +" + ANY_FIELD + " +" + ANY_FIELD + " +"
                    + ANY_FIELD + " *$";

    /** The day-of-the-month field checked. */
    public static final String DAY_REGEX =
            "^ *" + ANY_FIELD + " +" + ANY_FIELD + " +(?:" + DAY + ") +" + ANY_FIELD + " +"
                    + ANY_FIELD + " *$";

    /** The month field checked. */
    public static final String MONTH_REGEX =
            "^ *" + ANY_FIELD + " +" + ANY_FIELD + " +" + ANY_FIELD + " +(?:" + MONTH + ") +"
                    + ANY_FIELD + " *$";

    /** The day-of-the-week field checked. */
    public static final String WEEKDAY_REGEX =
            "^ *" + ANY_FIELD + " +" + ANY_FIELD + " +" + ANY_FIELD + " +" + ANY_FIELD + " +(?:"
                    + WEEKDAY + ") *$";

    /** All five fields checked. */
    public static final String SCHEDULE_REGEX =
            "^ *(?:" + MINUTE + ") +(?:" + HOUR + ") +(?:" + DAY + ") +(?:" + MONTH + ") +(?:"
                    + WEEKDAY + ") *$";

    /** A range {@code a-b} anywhere in a schedule (names or numbers). */
    public static final String RANGE_REGEX = "[0-9A-Za-z]+-[0-9A-Za-z]+";

    /** Month and weekday names as numbers (Sunday 0, as in a CronJob; 7 is Sunday too). */
    public static final Map<String, Integer> NAMES =
            Map.ofEntries(
                    Map.entry("JAN", 1),
                    Map.entry("FEB", 2),
                    Map.entry("MAR", 3),
                    Map.entry("APR", 4),
                    Map.entry("MAY", 5),
                    Map.entry("JUN", 6),
                    Map.entry("JUL", 7),
                    Map.entry("AUG", 8),
                    Map.entry("SEP", 9),
                    Map.entry("OCT", 10),
                    Map.entry("NOV", 11),
                    Map.entry("DEC", 12),
                    Map.entry("SUN", 0),
                    Map.entry("MON", 1),
                    Map.entry("TUE", 2),
                    Map.entry("WED", 3),
                    Map.entry("THU", 4),
                    Map.entry("FRI", 5),
                    Map.entry("SAT", 6));

    private static final String CEL_NAMES =
            "{'JAN': 1, 'FEB': 2, 'MAR': 3, 'APR': 4, 'MAY': 5, 'JUN': 6, 'JUL': 7, 'AUG': 8,"
                    + " 'SEP': 9, 'OCT': 10, 'NOV': 11, 'DEC': 12, 'SUN': 0, 'MON': 1, 'TUE': 2,"
                    + " 'WED': 3, 'THU': 4, 'FRI': 5, 'SAT': 6}";

    private static final String CEL_MACROS =
            "['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']";

    // ---------------------------------------------------------------- CEL rules on spec.schedule

    /** CEL: no {@code TZ=} or {@code CRON_TZ=} prefix. */
    public static final String CEL_NO_TZ = "!self.contains('TZ=')";

    /** Message of {@link #CEL_NO_TZ}. */
    public static final String NO_TZ_MESSAGE =
            "a time zone goes in spec.timeZone: CRON_TZ= and TZ= are not allowed in the schedule"
                    + " (as in a CronJob)";

    /** CEL: a macro or five fields. */
    public static final String CEL_SHAPE =
            "self in " + CEL_MACROS + " || self.matches('" + FIVE_FIELDS_REGEX + "')";

    /** Message of {@link #CEL_SHAPE}. */
    public static final String SHAPE_MESSAGE =
            "must be five fields separated by spaces, 'minute hour day-of-month month"
                    + " day-of-week' as in a Kubernetes CronJob (e.g. '0 3 * * *'), or one of"
                    + " @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly";

    private static final String ONLY_IF_FIVE_FIELDS =
            "!self.matches('" + FIVE_FIELDS_REGEX + "') || self.matches('";

    /** CEL: the minute field. */
    public static final String CEL_MINUTE = ONLY_IF_FIVE_FIELDS + MINUTE_REGEX + "')";

    /** Message of {@link #CEL_MINUTE}. */
    public static final String MINUTE_MESSAGE =
            "the minute (1st field) must be *, 0-59, a range such as 0-29, a step such as */15 or"
                    + " 0-29/5 (1-59), or a list of these such as 0,30";

    /** CEL: the hour field. */
    public static final String CEL_HOUR = ONLY_IF_FIVE_FIELDS + HOUR_REGEX + "')";

    /** Message of {@link #CEL_HOUR}. */
    public static final String HOUR_MESSAGE =
            "the hour (2nd field) must be *, 0-23, a range such as 9-17, a step such as */6 or"
                    + " 9-17/2 (1-23), or a list of these such as 3,15";

    /** CEL: the day-of-the-month field. */
    public static final String CEL_DAY = ONLY_IF_FIVE_FIELDS + DAY_REGEX + "')";

    /** Message of {@link #CEL_DAY}. */
    public static final String DAY_MESSAGE =
            "the day of the month (3rd field) must be *, 1-31, a range such as 1-15, a step such"
                    + " as */7 (1-31), or a list of these such as 1,15";

    /** CEL: the month field. */
    public static final String CEL_MONTH = ONLY_IF_FIVE_FIELDS + MONTH_REGEX + "')";

    /** Message of {@link #CEL_MONTH}. */
    public static final String MONTH_MESSAGE =
            "the month (4th field) must be *, 1-12 or JAN-DEC, a range such as 1-6 or JAN-JUN, a"
                    + " step such as */3 (1-12), or a list of these such as JAN,JUL";

    /** CEL: the day-of-the-week field. */
    public static final String CEL_WEEKDAY = ONLY_IF_FIVE_FIELDS + WEEKDAY_REGEX + "')";

    /** Message of {@link #CEL_WEEKDAY}. */
    public static final String WEEKDAY_MESSAGE =
            "the day of the week (5th field) must be *, 0-7 (0 and 7 are Sunday) or SUN-SAT, a"
                    + " range such as 1-5 or MON-FRI, a step such as */2 (1-6), or a list of"
                    + " these such as SAT,SUN";

    private static final String CEL_VALUE_OF_START =
            "(r.split('-')[0].matches('^[0-9]+$') ? int(r.split('-')[0]) : "
                    + CEL_NAMES
                    + "[r.split('-')[0].upperAscii()])";
    private static final String CEL_VALUE_OF_END =
            "(r.split('-')[1].matches('^[0-9]+$') ? int(r.split('-')[1]) : "
                    + CEL_NAMES
                    + "[r.split('-')[1].upperAscii()])";

    /** CEL: no range ends before it starts (checked once the fields are well formed). */
    public static final String CEL_RANGES =
            "!self.matches('"
                    + SCHEDULE_REGEX
                    + "') || self.findAll('"
                    + RANGE_REGEX
                    + "').all(r, "
                    + CEL_VALUE_OF_START
                    + " <= "
                    + CEL_VALUE_OF_END
                    + ")";

    /** Message of {@link #CEL_RANGES}. */
    public static final String RANGES_MESSAGE =
            "a range must not end before it starts (e.g. not 5-1, nor SAT-SUN: Sunday is 0; for"
                    + " the weekend write SAT,SUN)";

    // ---------------------------------------------------------------- CEL rule on spec.timeZone

    /** The shape of an IANA time zone name. */
    public static final String TIME_ZONE_REGEX =
            "^(?:UTC|GMT|[A-Z][A-Za-z_]*/[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)?)$";

    /** CEL: the time zone's shape. */
    public static final String CEL_TIME_ZONE = "self.matches('" + TIME_ZONE_REGEX + "')";

    /** Message of {@link #CEL_TIME_ZONE}. */
    public static final String TIME_ZONE_MESSAGE =
            "must be an IANA time zone name: UTC, or Area/Location such as Europe/Berlin,"
                    + " America/New_York or Etc/GMT+2";

    private static final List<Check> CHECKS =
            List.of(
                    new Check(Pattern.compile(MINUTE_REGEX), MINUTE_MESSAGE),
                    new Check(Pattern.compile(HOUR_REGEX), HOUR_MESSAGE),
                    new Check(Pattern.compile(DAY_REGEX), DAY_MESSAGE),
                    new Check(Pattern.compile(MONTH_REGEX), MONTH_MESSAGE),
                    new Check(Pattern.compile(WEEKDAY_REGEX), WEEKDAY_MESSAGE));

    private record Check(Pattern pattern, String message) {}

    private static final Pattern FIVE_FIELDS = Pattern.compile(FIVE_FIELDS_REGEX);
    private static final Pattern SCHEDULE = Pattern.compile(SCHEDULE_REGEX);
    private static final Pattern RANGE = Pattern.compile(RANGE_REGEX);
    private static final Pattern TIME_ZONE = Pattern.compile(TIME_ZONE_REGEX);

    /**
     * What the CEL rules on {@code spec.schedule} say of a value, in their order.
     *
     * @param schedule the value
     * @return the first failing rule's message, or empty when they admit it
     */
    public static Optional<String> scheduleProblem(String schedule) {
        if (schedule == null || schedule.isEmpty()) {
            return Optional.of(SHAPE_MESSAGE);
        }
        if (schedule.contains("TZ=")) {
            return Optional.of(NO_TZ_MESSAGE);
        }
        if (MACROS.containsKey(schedule)) {
            return Optional.empty();
        }
        if (!FIVE_FIELDS.matcher(schedule).matches()) {
            return Optional.of(SHAPE_MESSAGE);
        }
        for (Check check : CHECKS) {
            if (!check.pattern().matcher(schedule).matches()) {
                return Optional.of(check.message());
            }
        }
        if (SCHEDULE.matcher(schedule).matches()) {
            Matcher ranges = RANGE.matcher(schedule);
            while (ranges.find()) {
                String[] ends = ranges.group().split("-");
                if (value(ends[0]) > value(ends[1])) {
                    return Optional.of(RANGES_MESSAGE);
                }
            }
        }
        return Optional.empty();
    }

    /**
     * The five fields of an admitted schedule, macros expanded and names replaced by their numbers
     * (Sunday 0), single spaces between them.
     *
     * @param schedule a value {@link #scheduleProblem(String)} admits
     * @return the fields
     */
    public static String numericFields(String schedule) {
        String fields = MACROS.getOrDefault(schedule, schedule).trim();
        StringBuilder out = new StringBuilder();
        Matcher names = Pattern.compile("[A-Za-z]+").matcher(String.join(" ", fields.split(" +")));
        while (names.find()) {
            names.appendReplacement(
                    out, Integer.toString(NAMES.get(names.group().toUpperCase(Locale.ROOT))));
        }
        names.appendTail(out);
        return out.toString();
    }

    private static int value(String end) {
        return end.chars().allMatch(Character::isDigit)
                ? Integer.parseInt(end)
                : NAMES.get(end.toUpperCase(Locale.ROOT));
    }

    /**
     * What the CEL rule on {@code spec.timeZone} says of a value.
     *
     * @param timeZone the value, {@code null} when unset (UTC)
     * @return the rule's message, or empty when it has an IANA name's shape (which does not make it
     *     a zone that exists)
     */
    public static Optional<String> timeZoneProblem(String timeZone) {
        if (timeZone == null || TIME_ZONE.matcher(timeZone).matches()) {
            return Optional.empty();
        }
        return Optional.of(TIME_ZONE_MESSAGE);
    }
}
