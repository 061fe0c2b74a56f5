/* fingerprint_cut(text, segmenter, node_ids, tables, use_tf, weak_bits, with_numbers):
 * fingerprint_nodes of the C segmenter's cut_nodes(text), the segmenter called through
 * its capsule (_cut.h) instead of from Python: the same bytes, without the two arrays,
 * the tuple and the Python calls between the cut and the fingerprint. Included by
 * _kernel.c after fingerprint_core. */
#ifndef DEDUP_FINGERPRINT_CUT_H
#define DEDUP_FINGERPRINT_CUT_H

#include "_cut.h"

static const CutApi *segment_cut; /* imported on first use: _segment may not be built */

static PyObject *fingerprint_cut(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7 || !PyUnicode_Check(args[0]) || !PyObject_TypeCheck(args[3], &TablesType)) {
        PyErr_SetString(PyExc_TypeError,
                        "fingerprint_cut(text: str, segmenter: _segment.Segmenter, node_ids: "
                        "writable buffer of int32, tables: Tables, use_tf, weak_bits, "
                        "with_numbers)");
        return NULL;
    }
    if (!segment_cut) {
        segment_cut = PyCapsule_Import(CUT_CAPSULE, 0);
        if (!segment_cut) return NULL;
    }
    PyObject *text = args[0];
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    Py_buffer mb;
    if (PyObject_GetBuffer(args[2], &mb, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
        return NULL;
    PyObject *result = NULL;
    if (!int32_buffer(&mb)) {
        PyErr_SetString(PyExc_TypeError, "node_ids must be int32");
    } else {
        SegmentCut cut;
        if (segment_cut->cut(args[1], text, &cut) == 0) {
            result = fingerprint_core(NULL, text, cut.spans, cut.nodes, mb.buf, mb.len / 4,
                                      (Py_ssize_t)cut.count, args + 3);
            segment_cut->release(&cut);
        }
    }
    PyBuffer_Release(&mb);
    return result;
}

#endif
