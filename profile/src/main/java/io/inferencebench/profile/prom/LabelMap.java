package io.inferencebench.profile.prom;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * An immutable, insertion-ordered label map backed by one array: samples have few labels, so a
 * linear scan beats hashing and the footprint is a fraction of a {@code LinkedHashMap}'s.
 */
final class LabelMap extends AbstractMap<String, String> {

    /** Alternating names and values. */
    private final String[] entries;

    private final int size;

    LabelMap(String[] entries, int size) {
        this.entries = entries.length == size * 2 ? entries : Arrays.copyOf(entries, size * 2);
        this.size = size;
    }

    @Override
    public String get(Object key) {
        for (int i = 0; i < size * 2; i += 2) {
            if (entries[i].equals(key)) {
                return entries[i + 1];
            }
        }
        return null;
    }

    @Override
    public boolean containsKey(Object key) {
        return get(key) != null;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public Set<Entry<String, String>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Entry<String, String>> iterator() {
                return new Iterator<>() {
                    private int next;

                    @Override
                    public boolean hasNext() {
                        return next < size;
                    }

                    @Override
                    public Entry<String, String> next() {
                        if (next >= size) {
                            throw new NoSuchElementException();
                        }
                        int i = 2 * next++;
                        return new SimpleImmutableEntry<>(entries[i], entries[i + 1]);
                    }
                };
            }

            @Override
            public int size() {
                return size;
            }
        };
    }
}
