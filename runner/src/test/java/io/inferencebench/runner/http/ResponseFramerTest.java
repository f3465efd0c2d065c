package io.inferencebench.runner.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** HTTP/1.1 response framing over arbitrary read boundaries. */
class ResponseFramerTest {

    /** What the framer reported, as text. */
    static final class Recorder implements ResponseFramer.Receiver {
        final List<String> events = new ArrayList<>();
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        int stopAfterBytes = Integer.MAX_VALUE;

        @Override
        public void head(int status, String contentType, boolean keepAlive) {
            events.add("head " + status + " " + contentType + " " + keepAlive);
        }

        @Override
        public boolean body(byte[] data, int offset, int length) {
            body.write(data, offset, length);
            return body.size() < stopAfterBytes;
        }

        @Override
        public void end(boolean reusable) {
            events.add(
                    "end body=" + body.toString(StandardCharsets.UTF_8) + " reusable=" + reusable);
        }

        @Override
        public void malformed(String reason) {
            events.add("malformed " + reason);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Feeds {@code wire} in reads of {@code step} bytes. */
    private static Recorder frame(String wire, int step) {
        Recorder r = new Recorder();
        ResponseFramer framer = new ResponseFramer();
        byte[] b = bytes(wire);
        for (int i = 0; i < b.length; i += step) {
            // a copy per read, as the network delivers it: nothing may be kept across reads
            byte[] read = new byte[Math.min(step, b.length - i) + 4];
            System.arraycopy(b, i, read, 2, read.length - 4);
            framer.feed(read, 2, read.length - 4, r);
        }
        return r;
    }

    /** The same events for every way of splitting the bytes into reads. */
    private static List<String> framedAnyHow(String wire) {
        List<String> whole = frame(wire, wire.length()).events;
        for (int step = 1; step < wire.length(); step++) {
            assertThat(frame(wire, step).events).as("reads of %d bytes", step).isEqualTo(whole);
        }
        return whole;
    }

    @Test
    void contentLengthBody() {
        assertThat(
                        framedAnyHow(
                                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                        + "Content-Length: 11\r\n\r\n{\"ok\":true}"))
                .containsExactly(
                        "head 200 application/json true", "end body={\"ok\":true} reusable=true");
    }

    @Test
    void chunkedBodyWithExtensionsAndTrailers() {
        String wire =
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n"
                        + "6\r\ndata: \r\n"
                        + "B;name=value\r\n{\"a\":\"b\"}\n\n\r\n"
                        + "0\r\nX-Trailer: 1\r\n\r\n";
        assertThat(framedAnyHow(wire))
                .containsExactly(
                        "head 200 text/event-stream true",
                        "end body=data: {\"a\":\"b\"}\n\n reusable=true");
    }

    @Test
    void bareLineFeedsAreAccepted() {
        assertThat(
                        framedAnyHow(
                                "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n"
                                        + "3\nabc\n0\n\n"))
                .containsExactly("head 200 null true", "end body=abc reusable=true");
    }

    @Test
    void interimResponsesAreSkipped() {
        assertThat(
                        framedAnyHow(
                                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n"
                                        + "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"))
                .containsExactly("head 201 null true", "end body=ok reusable=true");
    }

    @Test
    void noBodyResponses() {
        assertThat(framedAnyHow("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"))
                .containsExactly("head 204 null true", "end body= reusable=true");
        assertThat(framedAnyHow("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
                .containsExactly("head 200 null true", "end body= reusable=true");
    }

    @Test
    void keepAliveFollowsTheVersionAndTheConnectionHeader() {
        assertThat(
                        frame(
                                        "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
                                        99)
                                .events)
                .containsExactly("head 200 null false", "end body=x reusable=false");
        assertThat(frame("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 99).events)
                .containsExactly("head 200 null false", "end body=x reusable=false");
        assertThat(
                        frame(
                                        "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx",
                                        99)
                                .events)
                .containsExactly("head 200 null true", "end body=x reusable=true");
        assertThat(
                        frame(
                                        "HTTP/1.1 200 OK\r\nConnection: upgrade, Close\r\nContent-Length: 1\r\n\r\nx",
                                        99)
                                .events)
                .containsExactly("head 200 null false", "end body=x reusable=false");
    }

    @Test
    void bytesAfterTheResponseMakeTheConnectionUnusable() {
        assertThat(frame("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200", 999).events)
                .containsExactly("head 200 null true", "end body=x reusable=false");
    }

    @Test
    void aBodyWithoutLengthRunsUntilTheConnectionCloses() {
        Recorder r = new Recorder();
        ResponseFramer framer = new ResponseFramer();
        byte[] head = bytes("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome ");
        framer.feed(head, 0, head.length, r);
        byte[] more = bytes("more");
        framer.feed(more, 0, more.length, r);
        assertThat(framer.bodyUntilClose()).isTrue();
        assertThat(r.events).containsExactly("head 200 text/plain false");
        assertThat(r.body.toString(StandardCharsets.UTF_8)).isEqualTo("some more");
        // Transfer codings without chunked at the end are read the same way.
        assertThat(
                        frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nzz", 99)
                                .events)
                .containsExactly("head 200 null false");
    }

    @Test
    void chunkedWinsOverContentLength() {
        assertThat(
                        framedAnyHow(
                                "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n"
                                        + "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"))
                .containsExactly("head 200 null true", "end body=hi reusable=true");
    }

    @Test
    void malformedResponsesAreReportedOnceAndStopFraming() {
        assertThat(frame("SSH-2.0-OpenSSH_9.2\r\n", 99).events)
                .containsExactly("malformed not an HTTP/1.x status line: SSH-2.0-OpenSSH_9.2");
        assertThat(frame("HTTP/1.1 2OO OK\r\n\r\n", 99).events)
                .containsExactly("malformed not an HTTP/1.x status line: HTTP/1.1 2OO OK");
        assertThat(frame("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", 99).events)
                .containsExactly("malformed bad header line: no colon here");
        assertThat(
                        frame(
                                        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
                                        99)
                                .events)
                .containsExactly("malformed bad Content-Length: 3");
        assertThat(frame("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 99).events)
                .containsExactly("malformed bad Content-Length: -1");
        List<String> badChunk =
                frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nmore", 99).events;
        assertThat(badChunk)
                .containsExactly("head 200 null true", "malformed bad chunk size line: zz");
        List<String> longChunk =
                frame(
                                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
                                99)
                        .events;
        assertThat(longChunk)
                .containsExactly("head 200 null true", "malformed chunk data longer than its size");
    }

    @Test
    void aHeadLongerThanTheLimitIsRefused() {
        StringBuilder wire = new StringBuilder("HTTP/1.1 200 OK\r\n");
        while (wire.length() <= ResponseFramer.MAX_HEAD_BYTES) {
            wire.append("X-Filler: ").append("x".repeat(1000)).append("\r\n");
        }
        // in one read and byte by byte alike: the limit counts partial lines too
        for (int step : new int[] {wire.length(), 1, 4096}) {
            List<String> events = frame(wire.toString(), step).events;
            assertThat(events)
                    .containsExactly(
                            "malformed status line and headers longer than "
                                    + ResponseFramer.MAX_HEAD_BYTES
                                    + " bytes");
        }
    }

    @Test
    void theReceiverCanStopTheBody() {
        Recorder r = new Recorder();
        r.stopAfterBytes = 3;
        ResponseFramer framer = new ResponseFramer();
        byte[] wire = bytes("HTTP/1.1 500 Oops\r\nContent-Length: 10\r\n\r\n0123456789");
        for (byte b : wire) {
            framer.feed(new byte[] {b}, 0, 1, r);
        }
        assertThat(r.events).containsExactly("head 500 null true");
        assertThat(r.body.toString(StandardCharsets.UTF_8)).isEqualTo("012");
    }

    @Test
    void responsesFollowEachOtherOnOneFramer() {
        Recorder r = new Recorder();
        ResponseFramer framer = new ResponseFramer();
        for (int i = 0; i < 3; i++) {
            framer.reset();
            byte[] wire =
                    bytes(
                            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n"
                                    + i
                                    + "\r\n0\r\n\r\n");
            framer.feed(wire, 0, wire.length, r);
        }
        assertThat(r.events)
                .containsExactly(
                        "head 200 null true",
                        "end body=0 reusable=true",
                        "head 200 null true",
                        "end body=01 reusable=true",
                        "head 200 null true",
                        "end body=012 reusable=true");
    }

    @Test
    void randomChunkingOfRandomBodiesKeepsEveryByte() {
        Random random = new Random(7);
        for (int round = 0; round < 200; round++) {
            byte[] payload = new byte[random.nextInt(3000)];
            random.nextBytes(payload);
            StringBuilder wire =
                    new StringBuilder("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
            int at = 0;
            while (at < payload.length) {
                int n = Math.min(payload.length - at, 1 + random.nextInt(400));
                wire.append(Integer.toHexString(n)).append("\r\n");
                wire.append(new String(payload, at, n, StandardCharsets.ISO_8859_1));
                wire.append("\r\n");
                at += n;
            }
            wire.append("0\r\n\r\n");
            Recorder r = frame(wire.toString(), 1 + random.nextInt(700));
            assertThat(r.body.toByteArray()).isEqualTo(payload);
            assertThat(r.events).last().asString().endsWith("reusable=true");
        }
    }
}
