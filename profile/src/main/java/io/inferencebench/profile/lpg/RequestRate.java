package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializerProvider;
import java.io.IOException;
import java.math.BigDecimal;

/**
 * Request rates as LPG writes them: a JSON number, or the string {@code "inf"} for an unbounded
 * rate ({@link Double#POSITIVE_INFINITY}).
 */
public final class RequestRate {

    /** The JSON spelling of an unbounded rate. */
    public static final String UNBOUNDED = "inf";

    private RequestRate() {}

    /**
     * Whether a rate is unbounded.
     *
     * @param rate a rate in requests per second
     * @return {@code true} for {@code +Inf}
     */
    public static boolean isUnbounded(double rate) {
        return rate == Double.POSITIVE_INFINITY;
    }

    /**
     * Formats a rate as Python's {@code str(float)} does, which LPG uses in file names: {@code
     * 20.0}, {@code 0.5}, {@code inf}.
     *
     * @param rate a rate in requests per second
     * @return the formatted rate
     */
    public static String pythonString(double rate) {
        if (isUnbounded(rate)) {
            return UNBOUNDED;
        }
        if (Double.isNaN(rate)) {
            return "nan";
        }
        if (rate == Math.rint(rate) && Math.abs(rate) < 1e16) {
            return new BigDecimal(rate).toPlainString() + ".0";
        }
        return Double.toString(rate);
    }

    /**
     * Parses {@code "inf"} (any case, also {@code "+inf"}, {@code "infinity"}) or a decimal number.
     *
     * @param text the text
     * @return the rate
     * @throws NumberFormatException when the text is neither
     */
    public static double parse(String text) {
        String t = text.trim().toLowerCase(java.util.Locale.ROOT);
        if (t.equals("inf") || t.equals("+inf") || t.equals("infinity") || t.equals("+infinity")) {
            return Double.POSITIVE_INFINITY;
        }
        double v = Double.parseDouble(t);
        if (!Double.isFinite(v)) {
            throw new NumberFormatException("not a rate: " + text);
        }
        return v;
    }

    /** Jackson serializer writing {@code "inf"} for an unbounded rate. */
    public static final class Serializer extends JsonSerializer<Double> {
        /** Creates the serializer (Jackson instantiates it). */
        public Serializer() {}

        @Override
        public void serialize(Double value, JsonGenerator gen, SerializerProvider serializers)
                throws IOException {
            if (value == null) {
                gen.writeNull();
            } else if (isUnbounded(value)) {
                gen.writeString(UNBOUNDED);
            } else if (!Double.isFinite(value)) {
                throw new IOException("request rate must be finite or +Inf, got " + value);
            } else {
                gen.writeNumber(value);
            }
        }
    }

    /** Jackson deserializer accepting numbers and {@code "inf"}. */
    public static final class Deserializer extends JsonDeserializer<Double> {
        /** Creates the deserializer (Jackson instantiates it). */
        public Deserializer() {}

        @Override
        public Double deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (p.currentToken() == JsonToken.VALUE_STRING) {
                try {
                    return parse(p.getText());
                } catch (NumberFormatException e) {
                    return (Double)
                            ctxt.handleWeirdStringValue(Double.class, p.getText(), "not a rate");
                }
            }
            return p.getDoubleValue();
        }
    }
}
