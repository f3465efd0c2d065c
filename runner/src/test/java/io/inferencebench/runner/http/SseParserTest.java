package io.inferencebench.runner.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SseParserTest {

    private static final class Collector implements SseParser.Listener {
        final List<String> events = new ArrayList<>();
        final List<Long> instants = new ArrayList<>();
        String malformed;

        @Override
        public void onEvent(byte[] data, int length, long nanos) {
            events.add(new String(data, 0, length, StandardCharsets.UTF_8));
            instants.add(nanos);
        }

        @Override
        public void onMalformed(String reason) {
            malformed = reason;
        }
    }

    private static final String STREAM =
            ": keep-alive comment\n"
                    + "data: {\"a\":1}\n\n"
                    + "event: message\nid: 7\nretry: 100\ndata: {\"b\":2}\n\n"
                    + "data: line one\ndata: line two\n\n"
                    + "data:no-space\r\n\r\n"
                    + "data: [DONE]\n\n";

    private static final List<String> EXPECTED =
            List.of("{\"a\":1}", "{\"b\":2}", "line one\nline two", "no-space", "[DONE]");

    @Test
    void parsesEventsWhenEverythingArrivesInOneRead() {
        Collector c = new Collector();
        SseParser parser = new SseParser(c);
        byte[] bytes = STREAM.getBytes(StandardCharsets.UTF_8);
        parser.feed(bytes, 0, bytes.length);
        assertThat(parser.finish()).isTrue();
        assertThat(c.events).isEqualTo(EXPECTED);
        assertThat(c.malformed).isNull();
    }

    @Test
    void parsesTheSameEventsForEverySplitPointAndByteByByte() {
        byte[] bytes = STREAM.getBytes(StandardCharsets.UTF_8);
        for (int split = 1; split < bytes.length; split++) {
            Collector c = new Collector();
            SseParser parser = new SseParser(c);
            parser.feed(bytes, 0, split);
            parser.feed(bytes, split, bytes.length - split);
            parser.finish();
            assertThat(c.events).as("split at %d", split).isEqualTo(EXPECTED);
        }
        Collector c = new Collector();
        SseParser parser = new SseParser(c);
        for (int i = 0; i < bytes.length; i++) {
            parser.feed(bytes, i, 1);
        }
        parser.finish();
        assertThat(c.events).isEqualTo(EXPECTED);
    }

    @Test
    void anEventIsStampedWhenItsBlankLineArrivesNotWhenItsFirstByteDoes() throws Exception {
        Collector c = new Collector();
        SseParser parser = new SseParser(c);
        byte[] first = "data: {\"x\":".getBytes(StandardCharsets.UTF_8);
        byte[] second = "1}\n\n".getBytes(StandardCharsets.UTF_8);
        parser.feed(first, 0, first.length);
        long between = System.nanoTime();
        Thread.sleep(5);
        parser.feed(second, 0, second.length);
        assertThat(c.events).containsExactly("{\"x\":1}");
        assertThat(c.instants.get(0) - between).isGreaterThanOrEqualTo(5_000_000L);
    }

    @Test
    void aFinalEventWithoutTrailingBlankLineIsDeliveredAtFinish() {
        Collector c = new Collector();
        SseParser parser = new SseParser(c);
        byte[] bytes = "data: a\n\ndata: b".getBytes(StandardCharsets.UTF_8);
        parser.feed(bytes, 0, bytes.length);
        assertThat(c.events).containsExactly("a");
        assertThat(parser.finish()).isTrue();
        assertThat(c.events).containsExactly("a", "b");
    }

    @Test
    void garbageIsReportedAsMalformedAndStopsParsing() {
        Collector c = new Collector();
        SseParser parser = new SseParser(c);
        byte[] bytes =
                "data: ok\n\n<html>oops</html>\ndata: late\n\n".getBytes(StandardCharsets.UTF_8);
        parser.feed(bytes, 0, bytes.length);
        assertThat(c.events).containsExactly("ok");
        assertThat(c.malformed).contains("<html>");
        assertThat(parser.finish()).isFalse();
    }
}
