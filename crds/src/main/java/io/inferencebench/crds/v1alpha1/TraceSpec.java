package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import java.util.Locale;
import java.util.Objects;

/**
 * How a request trace is read and replayed: its layout, the part of its clock replayed, how fast,
 * and the token block its prefix-block hashes stand for.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TraceSpec {

    /** Tokens per prefix block of a Mooncake trace's {@code hash_ids} when not set (Mooncake's). */
    public static final int DEFAULT_BLOCK_TOKENS = 512;

    /** The fastest and slowest replay accepted: offsets multiplied by 10^-4 to 10^4. */
    public static final double MIN_TIME_SCALE = 1e-4;

    public static final double MAX_TIME_SCALE = 1e4;

    @JsonPropertyDescription(
            "mooncake (JSON Lines: timestamp in ms, input_length, output_length, hash_ids), azure"
                    + " (CSV: TIMESTAMP, ContextTokens, GeneratedTokens) or burstgpt (CSV:"
                    + " Timestamp in s, Request tokens, Response tokens). Default: found from the"
                    + " file's first line.")
    private TraceFormat format;

    @JsonPropertyDescription(
            "Every recorded arrival offset is multiplied by this: 0.5 replays twice as fast, 2"
                    + " half as fast. Default 1.")
    @Min(MIN_TIME_SCALE)
    @Max(MAX_TIME_SCALE)
    private Double timeScale;

    @JsonPropertyDescription(
            "Replay only requests recorded at or after this point of the trace's clock (from its"
                    + " first request), e.g. 10m.")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String start;

    @JsonPropertyDescription(
            "Replay only requests recorded before this point of the trace's clock (from its first"
                    + " request), e.g. 1h.")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String end;

    @JsonPropertyDescription(
            "Tokens each of a Mooncake trace's hash_ids stands for: requests that share a hash id"
                    + " at a position share that block of their prompt. Default 512 (Mooncake's).")
    @Min(1)
    @Max(TokenDistribution.MAX_TOKENS)
    private Integer blockTokens;

    /** The time scale, 1 when not set. */
    @JsonIgnore
    public double resolvedTimeScale() {
        return timeScale == null ? 1.0 : timeScale;
    }

    /** The block size of hash ids, {@value #DEFAULT_BLOCK_TOKENS} when not set. */
    @JsonIgnore
    public int resolvedBlockTokens() {
        return blockTokens == null ? DEFAULT_BLOCK_TOKENS : blockTokens;
    }

    /** The replay as profiles name it, e.g. {@code format=mooncake time_scale=0.5 start=10m}. */
    public String describe(String detectedFormat) {
        StringBuilder sb = new StringBuilder();
        sb.append("format=").append(format != null ? format.wireName() : detectedFormat);
        sb.append(String.format(Locale.ROOT, " time_scale=%s", shortNumber(resolvedTimeScale())));
        if (start != null) {
            sb.append(" start=").append(start);
        }
        if (end != null) {
            sb.append(" end=").append(end);
        }
        return sb.toString();
    }

    private static String shortNumber(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15
                ? Long.toString((long) v)
                : Double.toString(v);
    }

    public TraceFormat getFormat() {
        return format;
    }

    public void setFormat(TraceFormat format) {
        this.format = format;
    }

    public Double getTimeScale() {
        return timeScale;
    }

    public void setTimeScale(Double timeScale) {
        this.timeScale = timeScale;
    }

    public String getStart() {
        return start;
    }

    public void setStart(String start) {
        this.start = start;
    }

    public String getEnd() {
        return end;
    }

    public void setEnd(String end) {
        this.end = end;
    }

    public Integer getBlockTokens() {
        return blockTokens;
    }

    public void setBlockTokens(Integer blockTokens) {
        this.blockTokens = blockTokens;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof TraceSpec that)) {
            return false;
        }
        return format == that.format
                && Objects.equals(timeScale, that.timeScale)
                && Objects.equals(start, that.start)
                && Objects.equals(end, that.end)
                && Objects.equals(blockTokens, that.blockTokens);
    }

    @Override
    public int hashCode() {
        return Objects.hash(format, timeScale, start, end, blockTokens);
    }
}
