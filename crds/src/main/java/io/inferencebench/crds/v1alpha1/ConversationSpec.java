package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/**
 * Synthetic conversations: sessions of several turns whose requests carry the whole history (chat
 * API), a user thinking between a reply and the next question. Each turn's question has the
 * dataset's {@code inputTokens}, each turn asks for its {@code outputTokens}, and the history
 * carries a reply of that length in place of the one the server wrote, so every request is known
 * before the run and its length exactly.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ConversationSpec {

    /** Turns per session when not set. */
    public static final int DEFAULT_TURNS = 5;

    /** The most turns a session may have. */
    public static final int MAX_TURNS = 1000;

    @JsonPropertyDescription("Turns (requests) per session. Default 5.")
    @Min(1)
    @Max(MAX_TURNS)
    private Integer turns;

    @JsonPropertyDescription(
            "Pause between a turn's reply and the session's next request, e.g. 2s or 500ms"
                    + " (the mean with thinkTimeDistribution exponential). Default 0s.")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String thinkTime;

    @JsonPropertyDescription(
            "fixed (every pause is thinkTime) or exponential (drawn with mean thinkTime from the"
                    + " run's seed). Default fixed.")
    private ThinkTimeDistribution thinkTimeDistribution;

    /** A shape with the given figures. */
    public static ConversationSpec of(
            int turns, String thinkTime, ThinkTimeDistribution distribution) {
        ConversationSpec spec = new ConversationSpec();
        spec.setTurns(turns);
        spec.setThinkTime(thinkTime);
        spec.setThinkTimeDistribution(distribution);
        return spec;
    }

    /** Turns per session, defaulted. */
    @JsonIgnore
    public int resolvedTurns() {
        return turns != null ? turns : DEFAULT_TURNS;
    }

    /** The think time, {@code 0s} when not set. */
    @JsonIgnore
    public String resolvedThinkTime() {
        return thinkTime != null ? thinkTime : "0s";
    }

    /** The think-time distribution, fixed when not set. */
    @JsonIgnore
    public ThinkTimeDistribution resolvedThinkTimeDistribution() {
        return thinkTimeDistribution != null ? thinkTimeDistribution : ThinkTimeDistribution.FIXED;
    }

    /** The shape as profiles name it: {@code turns=5 think_time=2s fixed}. */
    public String describe() {
        return describe(
                resolvedTurns(),
                Durations.parse(resolvedThinkTime()),
                resolvedThinkTimeDistribution() == ThinkTimeDistribution.EXPONENTIAL);
    }

    /**
     * A shape as profiles name it, the think time in seconds: {@code turns=5 think_time=0.5s
     * exponential}.
     */
    public static String describe(int turns, java.time.Duration thinkTime, boolean exponential) {
        java.math.BigDecimal seconds =
                java.math.BigDecimal.valueOf(thinkTime.toNanos(), 9).stripTrailingZeros();
        return "turns="
                + turns
                + " think_time="
                + (seconds.signum() == 0 ? "0" : seconds.toPlainString())
                + "s "
                + (exponential
                        ? ThinkTimeDistribution.EXPONENTIAL.wireName()
                        : ThinkTimeDistribution.FIXED.wireName());
    }

    public Integer getTurns() {
        return turns;
    }

    public void setTurns(Integer turns) {
        this.turns = turns;
    }

    public String getThinkTime() {
        return thinkTime;
    }

    public void setThinkTime(String thinkTime) {
        this.thinkTime = thinkTime;
    }

    public ThinkTimeDistribution getThinkTimeDistribution() {
        return thinkTimeDistribution;
    }

    public void setThinkTimeDistribution(ThinkTimeDistribution thinkTimeDistribution) {
        this.thinkTimeDistribution = thinkTimeDistribution;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConversationSpec that
                && Objects.equals(turns, that.turns)
                && Objects.equals(thinkTime, that.thinkTime)
                && thinkTimeDistribution == that.thinkTimeDistribution;
    }

    @Override
    public int hashCode() {
        return Objects.hash(turns, thinkTime, thinkTimeDistribution);
    }
}
