/* The C segmenter's cut as the kernel calls it, C to C: a capsule of _segment.c
 * (fingerprints.rule._segment.CUT) that the kernel's fingerprint_cut imports on first
 * use. The spans and nodes stay in the segmenter's scratch buffers: no array('I') per
 * body, no tuple, no Python call between the cut and the fingerprint. */
#ifndef DEDUP_CUT_H
#define DEDUP_CUT_H

#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#define CUT_CAPSULE "fingerprints.rule._segment.CUT"

typedef struct {
    const uint32_t *spans; /* count (start, end) code-point pairs: cut_ids's */
    const uint32_t *nodes; /* count trie nodes: cut_nodes's */
    size_t count;
} SegmentCut;

typedef struct {
    /* cut_nodes(text) of a _segment.Segmenter into *out: 0, or -1 with an exception
     * (a segmenter of another type, a text that is not a str). */
    int (*cut)(PyObject *segmenter, PyObject *text, SegmentCut *out);
    /* gives the buffers of a cut that returned 0 back; each cut needs its release */
    void (*release)(SegmentCut *cut);
} CutApi;

#endif
