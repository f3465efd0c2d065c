package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EventRecorderTest {

    @Test
    void sameEventIsRecordedOncePerWindow() {
        EventRecorder recorder = new EventRecorder(null);
        assertThat(recorder.firstInWindow("uid|Warning|X|m", 1_000)).isTrue();
        assertThat(recorder.firstInWindow("uid|Warning|X|m", 2_000)).isFalse();
        assertThat(recorder.firstInWindow("uid|Warning|X|other", 2_000)).isTrue();
        assertThat(
                        recorder.firstInWindow(
                                "uid|Warning|X|m", 1_000 + EventRecorder.DEDUPLICATION_MILLIS))
                .isTrue();
    }
}
