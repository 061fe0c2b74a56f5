/* Sorting a sketch's samples (_kernel.c's sketch): at most a few hundred distinct uint32
 * values, all below 2**bits and spread evenly there (they are hash values under the
 * level's cut). One counting pass on their top eight bits puts each in its bucket (on
 * average under one value a bucket), then an insertion sort moves each value within its
 * bucket only: about a third of the instructions of the four-pass radix sort it
 * replaces here, with the same result (a sort). Values crowding one bucket would make
 * the insertion quadratic, in the few hundred values a sketch keeps. */
#ifndef DEDUP_SAMPLES_H
#define DEDUP_SAMPLES_H

#include <Python.h>
#include <stdint.h>

/* values[0:n] = from[0:n] sorted by insertion (from may be values itself: from[i] is read
 * before values[i] is written). Cheap when each value is near its place: after a pass
 * that puts the values in buckets of their top bits, or for a short list. */
static inline void insert_sorted(uint32_t *values, const uint32_t *from, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t v = from[i];
        Py_ssize_t j = i;
        while (j > 0 && values[j - 1] > v) {
            values[j] = values[j - 1];
            j--;
        }
        values[j] = v;
    }
}

/* values[0:n] (each < 2**bits, 1 <= bits <= 32) sorted in place; tmp: scratch of n */
static void sort_samples(uint32_t *values, uint32_t *tmp, Py_ssize_t n, int bits) {
    int shift = bits > 8 ? bits - 8 : 0;
    Py_ssize_t count[257] = {0};
    for (Py_ssize_t i = 0; i < n; i++) count[((values[i] >> shift) & 0xFF) + 1]++;
    for (int b = 0; b < 256; b++) count[b + 1] += count[b];
    for (Py_ssize_t i = 0; i < n; i++) tmp[count[(values[i] >> shift) & 0xFF]++] = values[i];
    insert_sorted(values, tmp, n);
}

#endif
