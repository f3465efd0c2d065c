package io.inferencebench.runner.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.inferencebench.crds.v1alpha1.TraceFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Traces in the public layouts: offsets, lengths, hashes, the window, the cap and bad lines. */
class TraceFileTest {

    private static final TraceFile.Window ALL = new TraceFile.Window(null, null, 0, 1000);

    private static Path write(Path dir, String name, String... lines) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, String.join("\n", lines) + "\n");
        return file;
    }

    @Test
    void mooncakeLinesGiveOffsetsFromTheFirstRequestInArrivalOrder(@TempDir Path dir)
            throws IOException {
        Path file =
                write(
                        dir,
                        "mooncake.jsonl",
                        "{\"timestamp\": 27482, \"input_length\": 6955, \"output_length\": 52,"
                                + " \"hash_ids\": [46, 47, 48]}",
                        "",
                        "{\"timestamp\": 30535, \"input_length\": 6472, \"output_length\": 26,"
                                + " \"hash_ids\": [46, 52]}",
                        "{\"timestamp\": 27482.5, \"input_length\": 10, \"output_length\": 3,"
                                + " \"text_input\": \"hello there\"}");
        TraceFile trace = TraceFile.read(file, null, ALL);
        assertThat(trace.format()).isEqualTo(TraceFormat.MOONCAKE);
        assertThat(trace.requests()).hasSize(3);
        assertThat(trace.offsetsNanos()).containsExactly(0L, 500_000L, 3_053_000_000L);
        TraceFile.Request first = trace.requests().get(0);
        assertThat(first.inputTokens()).isEqualTo(6955);
        assertThat(first.outputTokens()).isEqualTo(52);
        assertThat(first.hashIds()).containsExactly(46L, 47L, 48L);
        assertThat(first.line()).isEqualTo(1);
        assertThat(trace.requests().get(1).text()).isEqualTo("hello there");
        assertThat(trace.requests().get(1).hashIds()).isNull();
        assertThat(trace.requests().get(2).line()).isEqualTo(3);
    }

    @Test
    void azureTimestampsAreDatesWithUpToNineDigitsOfASecond(@TempDir Path dir) throws IOException {
        Path file =
                write(
                        dir,
                        "azure.csv",
                        "\"TIMESTAMP\",\"ContextTokens\",\"GeneratedTokens\"",
                        "\"2023-11-16 18:15:46.6805900\",374,44",
                        "2023-11-16 18:15:50.9951690,396,109",
                        "2023-11-16 18:16:06,879,0");
        TraceFile trace = TraceFile.read(file, null, ALL);
        assertThat(trace.format()).isEqualTo(TraceFormat.AZURE);
        assertThat(trace.offsetsNanos()).containsExactly(0L, 4_314_579_000L);
        assertThat(trace.requests().get(1).inputTokens()).isEqualTo(396);
        assertThat(trace.requests().get(1).outputTokens()).isEqualTo(109);
        // The third recorded no output: it cannot be asked for as recorded, and is counted.
        assertThat(trace.skipped()).isEqualTo(1);
        assertThat(trace.windowRequests()).isEqualTo(3);
    }

    @Test
    void burstGptColumnsAreFoundByNameAndFailuresLeftOut(@TempDir Path dir) throws IOException {
        Path file =
                write(
                        dir,
                        "burstgpt.csv",
                        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type",
                        "5,ChatGPT,472,18,490,Conversation log",
                        "45,ChatGPT,1087,0,1087,Conversation log",
                        "118,GPT-4,417,276,693,API log");
        TraceFile trace = TraceFile.read(file, null, ALL);
        assertThat(trace.format()).isEqualTo(TraceFormat.BURSTGPT);
        assertThat(trace.offsetsNanos()).containsExactly(0L, 113_000_000_000L);
        assertThat(trace.requests().get(1).inputTokens()).isEqualTo(417);
        assertThat(trace.requests().get(1).outputTokens()).isEqualTo(276);
        assertThat(trace.skipped()).isEqualTo(1);
    }

    @Test
    void theWindowIsOnTheTracesClockAndTheCapKeepsItsFirstRequests(@TempDir Path dir)
            throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            lines.append(
                    String.format(
                            "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": 1}%n",
                            1000 + i * 500, 10 + i));
        }
        Path file = dir.resolve("t.jsonl");
        Files.writeString(file, lines);
        // [1 s, 3 s) of the trace's clock: the requests at 1.0, 1.5, 2.0, 2.5 s, replayed from
        // the first of them.
        TraceFile window =
                TraceFile.read(
                        file,
                        TraceFormat.MOONCAKE,
                        new TraceFile.Window(Duration.ofSeconds(1), Duration.ofSeconds(3), 0, 100));
        assertThat(window.requests().stream().map(TraceFile.Request::inputTokens).toList())
                .isEqualTo(List.of(12, 13, 14, 15));
        assertThat(window.offsetsNanos())
                .containsExactly(0L, 500_000_000L, 1_000_000_000L, 1_500_000_000L);
        // Two pods: positions 0, 2 and 1, 3, each at its offset in the whole replay.
        assertThat(window.share(0, 2).offsetsNanos()).containsExactly(0L, 1_000_000_000L);
        assertThat(window.share(1, 2).offsetsNanos()).containsExactly(500_000_000L, 1_500_000_000L);
        TraceFile capped =
                TraceFile.read(
                        file, TraceFormat.MOONCAKE, new TraceFile.Window(null, null, 3, 100));
        assertThat(capped.requests()).hasSize(3);
        assertThatThrownBy(
                        () ->
                                TraceFile.read(
                                        file,
                                        TraceFormat.MOONCAKE,
                                        new TraceFile.Window(null, null, 0, 9)))
                .hasMessageContaining("10 requests to replay, more than the 9 held in memory");
        assertThatThrownBy(
                        () ->
                                TraceFile.read(
                                        file,
                                        TraceFormat.MOONCAKE,
                                        new TraceFile.Window(Duration.ofSeconds(60), null, 0, 100)))
                .hasMessageContaining("no request of the trace to replay in the window")
                .hasMessageContaining("the trace spans 4.500 s");
    }

    @Test
    void badLinesAreNamedByLineAndField(@TempDir Path dir) throws IOException {
        assertThatThrownBy(
                        () ->
                                TraceFile.read(
                                        write(
                                                dir,
                                                "a.jsonl",
                                                "{\"timestamp\": 1, \"input_length\": 5,"
                                                        + " \"output_length\": 1}",
                                                "{\"timestamp\": 2, \"output_length\": 1}"),
                                        null,
                                        ALL))
                .hasMessageEndingWith("a.jsonl line 2: input_length is missing");
        assertThatThrownBy(
                        () ->
                                TraceFile.read(
                                        write(
                                                dir,
                                                "b.jsonl",
                                                "{\"timestamp\": 1, \"input_length\": 5.5,"
                                                        + " \"output_length\": 1}"),
                                        null,
                                        ALL))
                .hasMessageContaining("b.jsonl line 1: input_length must be a whole number");
        assertThatThrownBy(
                        () ->
                                TraceFile.read(
                                        write(
                                                dir,
                                                "c.jsonl",
                                                "{\"timestamp\": 1, \"input_length\": 5,"
                                                        + " \"output_length\": 1, \"hash_ids\":"
                                                        + " [1, \"x\"]}"),
                                        null,
                                        ALL))
                .hasMessageContaining("c.jsonl line 1: hash_ids[1] is not an integer");
        assertThatThrownBy(
                        () ->
                                TraceFile.read(
                                        write(
                                                dir,
                                                "d.csv",
                                                "TIMESTAMP,ContextTokens,GeneratedTokens",
                                                "yesterday,5,5"),
                                        null,
                                        ALL))
                .hasMessageContaining("d.csv line 2: TIMESTAMP is not a date and time");
        assertThatThrownBy(
                        () ->
                                TraceFile.read(
                                        write(dir, "e.csv", "Timestamp,Request tokens"),
                                        TraceFormat.BURSTGPT,
                                        ALL))
                .hasMessageContaining("e.csv line 1: the header has no column 'Response tokens'");
        assertThatThrownBy(
                        () ->
                                TraceFile.read(
                                        write(dir, "f.csv", "time,in,out", "1,2,3"), null, ALL))
                .hasMessageContaining("f.csv line 1: not a trace layout this runner knows");
        assertThatThrownBy(() -> TraceFile.read(write(dir, "g.jsonl", ""), null, ALL))
                .hasMessageContaining("the trace is empty");
    }
}
