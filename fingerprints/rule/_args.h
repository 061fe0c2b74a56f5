/* The arguments of the kernel's per-article METH_FASTCALL functions, checked as
 * PyArg_ParseTuple's codes check them ("U", "n", "i", "k", "K", "w*", "y*"), without the argument tuple
 * a METH_VARARGS call makes and the format string it reads: about a thousand
 * instructions a call, several calls an article; and their result tuples made without
 * Py_BuildValue. Included by _kernel.c. */
#ifndef DEDUP_ARGS_H
#define DEDUP_ARGS_H

#include <Python.h>
#include <limits.h>
#include <stdarg.h>

static int args_count(const char *name, Py_ssize_t nargs, Py_ssize_t want) {
    if (nargs == want) return 1;
    PyErr_Format(PyExc_TypeError, "%s() takes exactly %zd arguments (%zd given)", name, want,
                 nargs);
    return 0;
}

/* "U": a str (ready) */
static int arg_str(const char *name, PyObject *const *args, int i, PyObject **out) {
    if (!PyUnicode_Check(args[i])) {
        PyErr_Format(PyExc_TypeError, "%s() argument %d must be str, not %.50s", name, i + 1,
                     Py_TYPE(args[i])->tp_name);
        return 0;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(args[i]) < 0) return 0;
#endif
    *out = args[i];
    return 1;
}

/* "n": an integer (or an object with __index__) as a Py_ssize_t */
static int arg_ssize(PyObject *arg, Py_ssize_t *out) {
    Py_ssize_t value = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    if (value == -1 && PyErr_Occurred()) return 0;
    *out = value;
    return 1;
}

/* "k": an int, its low bits as an unsigned long */
static int arg_ulong_mask(PyObject *arg, unsigned long *out) {
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "an integer is required, not %.50s", Py_TYPE(arg)->tp_name);
        return 0;
    }
    unsigned long value = PyLong_AsUnsignedLongMask(arg);
    if (value == (unsigned long)-1 && PyErr_Occurred()) return 0;
    *out = value;
    return 1;
}

/* "i": an integer (or an object with __index__) as an int */
static int arg_int(PyObject *arg, int *out) {
    long value = PyLong_AsLong(arg);
    if (value == -1 && PyErr_Occurred()) return 0;
    if (value > INT_MAX || value < INT_MIN) {
        PyErr_SetString(PyExc_OverflowError, "signed integer is greater than maximum");
        return 0;
    }
    *out = (int)value;
    return 1;
}

/* "K": an int, its low bits as an unsigned long long */
static int arg_ull_mask(PyObject *arg, unsigned long long *out) {
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "an integer is required, not %.50s", Py_TYPE(arg)->tp_name);
        return 0;
    }
    unsigned long long value = PyLong_AsUnsignedLongLongMask(arg);
    if (value == (unsigned long long)-1 && PyErr_Occurred()) return 0;
    *out = value;
    return 1;
}

/* A C-contiguous buffer of arg got with flags, a TypeError naming what is required else */
static int arg_view(PyObject *arg, Py_buffer *view, int flags, const char *what) {
    if (PyObject_GetBuffer(arg, view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "a %s is required, not %.50s", what, Py_TYPE(arg)->tp_name);
        return 0;
    }
    if (!PyBuffer_IsContiguous(view, 'C')) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "a contiguous buffer is required");
        return 0;
    }
    return 1;
}

/* "w*": a writable C-contiguous buffer (release it with PyBuffer_Release) */
static int arg_writable(PyObject *arg, Py_buffer *view) {
    return arg_view(arg, view, PyBUF_WRITABLE, "read-write bytes-like object");
}

/* "y*": a C-contiguous buffer that is not a str (release it with PyBuffer_Release) */
static int arg_buffer(PyObject *arg, Py_buffer *view) {
    if (PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "a bytes-like object is required, not 'str'");
        return 0;
    }
    return arg_view(arg, view, PyBUF_SIMPLE, "bytes-like object");
}

/* A tuple of n new references, made directly (Py_BuildValue reads its format on every
 * call): NULL, and every reference released, when an item or the tuple could not be made */
static PyObject *tuple_steal(Py_ssize_t n, ...) {
    va_list items;
    va_start(items, n);
    PyObject *tuple = PyTuple_New(n);
    int failed = tuple == NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = va_arg(items, PyObject *);
        if (!item) failed = 1;
        if (tuple)
            PyTuple_SET_ITEM(tuple, i, item);
        else
            Py_XDECREF(item);
    }
    va_end(items);
    if (failed) Py_CLEAR(tuple);
    return tuple;
}

#endif
