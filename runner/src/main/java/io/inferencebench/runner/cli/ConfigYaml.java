package io.inferencebench.runner.cli;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.IOContext;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import io.inferencebench.profile.lpg.RequestRate;
import java.io.IOException;
import java.io.Reader;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.events.AliasEvent;
import org.yaml.snakeyaml.events.CollectionEndEvent;
import org.yaml.snakeyaml.events.CollectionStartEvent;
import org.yaml.snakeyaml.events.Event;
import org.yaml.snakeyaml.events.NodeEvent;
import org.yaml.snakeyaml.events.ScalarEvent;

/**
 * The YAML reading of {@code --config} where Jackson's YAML parser alone is too lenient or too
 * strict: a key given twice in one mapping is refused (Jackson keeps the last value, so {@code
 * numPrompts: 5} then {@code numPrompts: 50000} sent 50,000 requests), and aliases ({@code -
 * *stage} after {@code - &stage {...}}) are expanded (Jackson hands the alias's name over as a
 * string). Expansion is bounded like SnakeYAML's own composer (its limit of aliases to collections,
 * plus a cap on the events they expand to), so a "billion laughs" document is refused, not
 * expanded.
 */
final class ConfigYaml {

    /** Most YAML events aliases may expand to; a real config has a few hundred. */
    static final int MAX_EXPANDED_EVENTS = 100_000;

    private ConfigYaml() {}

    /** A YAML factory whose parsers expand aliases and refuse duplicate keys. */
    static final class Factory extends YAMLFactory {
        private static final long serialVersionUID = 1L;

        @Override
        protected YAMLParser _createParser(Reader r, IOContext ctxt) throws IOException {
            return new Parser(
                    ctxt, _parserFeatures, _yamlParserFeatures, _loaderOptions, _objectCodec, r);
        }

        @Override
        protected YAMLParser _createParser(
                char[] data, int offset, int len, IOContext ctxt, boolean recyclable)
                throws IOException {
            return _createParser(new java.io.CharArrayReader(data, offset, len), ctxt);
        }
    }

    /**
     * A problem found while reading the YAML (not by SnakeYAML, not by binding): where it is and
     * what, in the YAML's own terms.
     */
    static final class Problem extends JsonParseException {
        private static final long serialVersionUID = 1L;

        private final int line;
        private final int column;
        private final String field;
        private final String reason;

        Problem(JsonParser p, int line, int column, String field, String reason) {
            super(p, reason);
            this.line = line;
            this.column = column;
            this.field = field;
            this.reason = reason;
        }

        int line() {
            return line;
        }

        int column() {
            return column;
        }

        /** The field path, e.g. {@code load.numPrompts}, or empty. */
        String field() {
            return field;
        }

        String reason() {
            return reason;
        }
    }

    static final class Parser extends YAMLParser {

        private final int maxCollectionAliases;

        /** Events of aliases being replayed, in order. */
        private final Deque<Event> replay = new ArrayDeque<>();

        /** Complete anchored nodes: their events, anchors of nested nodes included. */
        private final Map<String, List<Event>> anchors = new HashMap<>();

        /** Anchored collections still being read. */
        private final List<Recording> open = new ArrayList<>();

        private int collectionAliases;
        private long expandedEvents;

        /** The keys of each mapping being read, with the line each first appeared on. */
        private final Deque<Map<String, Integer>> keys = new ArrayDeque<>();

        private static final class Recording {
            final String anchor;
            final List<Event> events = new ArrayList<>();
            int depth;

            Recording(String anchor) {
                this.anchor = anchor;
            }
        }

        Parser(
                IOContext ctxt,
                int parserFeatures,
                int yamlFeatures,
                LoaderOptions options,
                com.fasterxml.jackson.core.ObjectCodec codec,
                Reader reader) {
            super(ctxt, parserFeatures, yamlFeatures, options, codec, reader);
            this.maxCollectionAliases =
                    options == null
                            ? new LoaderOptions().getMaxAliasesForCollections()
                            : options.getMaxAliasesForCollections();
        }

        @Override
        protected Event getEvent() throws IOException {
            Event event;
            boolean replayed = !replay.isEmpty();
            if (replayed) {
                event = replay.poll();
            } else {
                event = super.getEvent();
                if (event instanceof AliasEvent alias) {
                    expand(alias);
                    event = replay.poll();
                    replayed = true;
                }
            }
            if (event == null) {
                return null;
            }
            for (int i = open.size() - 1; i >= 0; i--) {
                Recording r = open.get(i);
                r.events.add(event);
                if (event instanceof CollectionStartEvent) {
                    r.depth++;
                } else if (event instanceof CollectionEndEvent && --r.depth == 0) {
                    anchors.put(r.anchor, List.copyOf(r.events));
                    open.remove(i);
                }
            }
            if (!replayed && event instanceof NodeEvent node && node.getAnchor() != null) {
                if (event instanceof ScalarEvent) {
                    anchors.put(node.getAnchor(), List.of(event));
                } else if (event instanceof CollectionStartEvent) {
                    Recording r = new Recording(node.getAnchor());
                    r.events.add(event);
                    r.depth = 1;
                    open.add(r);
                }
            }
            return event;
        }

        private void expand(AliasEvent alias) throws Problem {
            String name = alias.getAnchor();
            List<Event> events = anchors.get(name);
            int line = alias.getStartMark().getLine() + 1;
            int column = alias.getStartMark().getColumn() + 1;
            if (events == null) {
                boolean inside = open.stream().anyMatch(r -> r.anchor.equals(name));
                throw new Problem(
                        this,
                        line,
                        column,
                        fieldPath(getParsingContext()),
                        inside
                                ? "alias *" + name + " refers to the node that contains it"
                                : "alias *" + name + " has no anchor &" + name + " before it");
            }
            if (events.size() > 1 && ++collectionAliases > maxCollectionAliases) {
                throw new Problem(
                        this,
                        line,
                        column,
                        fieldPath(getParsingContext()),
                        "more than " + maxCollectionAliases + " aliases of mappings or lists");
            }
            expandedEvents += events.size();
            if (expandedEvents > MAX_EXPANDED_EVENTS) {
                throw new Problem(
                        this,
                        line,
                        column,
                        fieldPath(getParsingContext()),
                        "aliases expand to more than " + MAX_EXPANDED_EVENTS + " YAML nodes");
            }
            replay.addAll(events);
        }

        @Override
        public JsonToken nextToken() throws IOException {
            JsonToken token = super.nextToken();
            if (token == JsonToken.START_OBJECT) {
                keys.push(new HashMap<>());
            } else if (token == JsonToken.END_OBJECT) {
                keys.poll();
            } else if (token == JsonToken.FIELD_NAME && !keys.isEmpty()) {
                String name = currentName();
                int line = currentTokenLocation().getLineNr();
                Integer first = keys.peek().putIfAbsent(name, line);
                if (first != null) {
                    throw new Problem(
                            this,
                            line,
                            currentTokenLocation().getColumnNr(),
                            fieldPath(getParsingContext()),
                            "duplicate key '"
                                    + name
                                    + "' (first on line "
                                    + first
                                    + "); each key may appear once in a mapping");
                }
            }
            return token;
        }
    }

    /** {@code load.stages[1].numPrompts}: the path of a parsing context in the YAML's names. */
    static String fieldPath(JsonStreamContext context) {
        List<String> parts = new ArrayList<>();
        for (JsonStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inArray()) {
                parts.add("[" + Math.max(0, c.getCurrentIndex()) + "]");
            } else if (c.getCurrentName() != null) {
                parts.add(c.getCurrentName());
            }
        }
        StringBuilder path = new StringBuilder();
        for (int i = parts.size() - 1; i >= 0; i--) {
            String part = parts.get(i);
            if (!path.isEmpty() && !part.startsWith("[")) {
                path.append('.');
            }
            path.append(part);
        }
        return path.toString();
    }

    /**
     * A request rate of the config: a number, or {@code inf} as {@code --request-rate} takes it
     * ({@code inf}, {@code infinity}, and YAML's own {@code .inf}), which is every request at once.
     */
    static final class RateValue extends JsonDeserializer<Double> {
        @Override
        public Double deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (p.hasToken(JsonToken.VALUE_NUMBER_FLOAT) || p.hasToken(JsonToken.VALUE_STRING)) {
                String text = p.getText().strip().toLowerCase(Locale.ROOT);
                String sign = text.startsWith("-") ? "-" : "";
                String bare = text.replaceFirst("^[+-]", "").replaceFirst("^\\.", "");
                if (bare.equals("inf") || bare.equals("infinity")) {
                    return sign.isEmpty() ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
                }
                if (bare.equals("nan")) {
                    return Double.NaN;
                }
                if (p.hasToken(JsonToken.VALUE_STRING)) {
                    try {
                        return RequestRate.parse(text);
                    } catch (NumberFormatException e) {
                        return (Double)
                                ctxt.handleWeirdStringValue(
                                        Double.class, p.getText(), "not a number or 'inf'");
                    }
                }
            }
            if (p.currentToken() != null && p.currentToken().isNumeric()) {
                return p.getDoubleValue();
            }
            return (Double) ctxt.handleUnexpectedToken(Double.class, p);
        }
    }

    /** Jackson mix-in: {@code load.requestRates} entries may be {@code inf}. */
    abstract static class LoadRates {
        @com.fasterxml.jackson.databind.annotation.JsonDeserialize(contentUsing = RateValue.class)
        abstract void setRequestRates(List<Double> requestRates);
    }

    /** Jackson mix-in: {@code load.stages[].requestRate} may be {@code inf}. */
    abstract static class StageRate {
        @com.fasterxml.jackson.databind.annotation.JsonDeserialize(using = RateValue.class)
        abstract void setRequestRate(Double requestRate);
    }
}
