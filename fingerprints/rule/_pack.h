/* Values joined into bytes by a layout: fingerprints/rule/features.py's pack_py in C, the
 * same bytes or the same refusal, one call for a whole Features (the batch command
 * writes every article's bytes; the Python of struct.pack and b"".join cost about 20
 * thousand instructions a row).
 *
 * pack(layout, *values) -> bytes
 *
 * The layout is a str of codes, one per value, in order; values beyond the layout's
 * codes are not read (a features version's layout is a prefix of the next's):
 *
 *   B, H, I, Q     an int as an unsigned little-endian integer of 1, 2, 4 or 8 bytes
 *                  (OverflowError when it does not fit)
 *   b1, b4, h1, h4 a bytes-like value (a str: its UTF-8) after its count in units of
 *                  1 or 4 bytes, as a <B (b) or <H (h) (a length not a multiple of the
 *                  unit, or a count that does not fit: ValueError)
 *   b8             a sequence of ints after its <B count, each as a Q
 *
 * Nothing here knows the features' fields: the layout and the values come from Python.
 * Included by _kernel.c. */

typedef struct {
    const char *data;
    Py_ssize_t size;
    Py_buffer view; /* held when the value is not bytes or str */
    int held;
    PyObject *items; /* a b8 value as a tuple or list (a new reference) */
} PackPart;

static int pack_width(char code) {
    switch (code) {
    case 'B': case 'b': return 1;
    case 'H': case 'h': return 2;
    case 'I': return 4;
    case 'Q': return 8;
    default: return 0;
    }
}

static void pack_uint(char *at, unsigned long long value, int width) {
    for (int i = 0; i < width; i++) at[i] = (char)((value >> (8 * i)) & 0xFF);
}

/* the value of an integer code (an int, or what has __index__, as struct.pack takes), or
 * -1 with an error set (OverflowError for a negative int or one that does not fit) */
static int pack_int_value(PyObject *value, int width, unsigned long long *out) {
    unsigned long long number;
    if (PyLong_Check(value)) {
        number = PyLong_AsUnsignedLongLong(value);
    } else {
        PyObject *index = PyNumber_Index(value);
        if (!index) return -1;
        number = PyLong_AsUnsignedLongLong(index);
        Py_DECREF(index);
    }
    if (number == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    if (width < 8 && number >> (8 * width)) {
        PyErr_Format(PyExc_OverflowError, "%llu does not fit in %d bytes", number, width);
        return -1;
    }
    *out = number;
    return 0;
}

/* the bytes of a b1/b4/h1/h4 value: a str's UTF-8 (kept in the str), bytes as they
 * are, any other buffer held until pack_release */
static int pack_bytes_of(PyObject *value, PackPart *part) {
    part->held = 0;
    if (PyBytes_Check(value)) {
        part->data = PyBytes_AS_STRING(value);
        part->size = PyBytes_GET_SIZE(value);
        return 0;
    }
    if (PyUnicode_Check(value)) {
        part->data = PyUnicode_AsUTF8AndSize(value, &part->size);
        return part->data ? 0 : -1;
    }
    if (PyObject_GetBuffer(value, &part->view, PyBUF_SIMPLE) < 0) return -1;
    part->held = 1;
    part->data = part->view.buf;
    part->size = part->view.len;
    return 0;
}

static void pack_release(PackPart *parts, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        if (parts[i].held) PyBuffer_Release(&parts[i].view);
        Py_XDECREF(parts[i].items);
    }
}

#define PACK_MAX_VALUES 64

static PyObject *pack(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "pack(layout: str, *values)");
        return NULL;
    }
    Py_ssize_t layout_size;
    const char *layout = PyUnicode_AsUTF8AndSize(args[0], &layout_size);
    if (!layout) return NULL;
    PackPart parts[PACK_MAX_VALUES];
    char codes[PACK_MAX_VALUES];
    int units[PACK_MAX_VALUES];
    Py_ssize_t n = 0, total = 0;
    /* first pass: each value's size (and bytes), checked */
    for (Py_ssize_t at = 0; at < layout_size; at++) {
        char code = layout[at];
        int width = pack_width(code);
        int unit = 0;
        if (!width || n >= PACK_MAX_VALUES) goto bad_layout;
        if (code == 'b' || code == 'h') {
            if (++at >= layout_size) goto bad_layout;
            unit = layout[at] - '0';
            if (unit != 1 && unit != 4 && !(unit == 8 && code == 'b')) goto bad_layout;
        }
        if (1 + n >= nargs) {
            PyErr_Format(PyExc_TypeError, "the layout %s has more codes than the %zd values",
                         layout, nargs - 1);
            goto fail;
        }
        PyObject *value = args[1 + n];
        parts[n].held = 0;
        parts[n].items = NULL;
        codes[n] = code;
        units[n] = unit;
        if (!unit) {
            total += width;
        } else if (unit == 8) {
            parts[n].items = PySequence_Fast(value, "a b8 value is a sequence of ints");
            if (!parts[n].items) goto fail;
            Py_ssize_t count = PySequence_Fast_GET_SIZE(parts[n].items);
            if (count > 0xFF) {
                PyErr_Format(PyExc_ValueError, "value %zd: %zd ints do not fit a <B count",
                             n, count);
                n++;
                goto fail;
            }
            parts[n].size = 8 * count;
            total += 1 + parts[n].size;
        } else {
            if (pack_bytes_of(value, &parts[n]) < 0) goto fail;
            Py_ssize_t size = parts[n].size;
            if (size % unit || size / unit > (width == 1 ? 0xFF : 0xFFFF)) {
                PyErr_Format(PyExc_ValueError,
                             "value %zd: %zd bytes are not a count of %d-byte units in %d "
                             "byte(s)", n, size, unit, width);
                n++;
                goto fail;
            }
            total += width + size;
        }
        n++;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (!out) goto fail;
    char *at = PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        int width = pack_width(codes[i]);
        unsigned long long number;
        if (!units[i]) {
            if (pack_int_value(args[1 + i], width, &number) < 0) goto fail_out;
            pack_uint(at, number, width);
            at += width;
        } else if (units[i] == 8) {
            PyObject *items = parts[i].items;
            Py_ssize_t count = PySequence_Fast_GET_SIZE(items);
            *at++ = (char)count;
            for (Py_ssize_t j = 0; j < count; j++) {
                if (pack_int_value(PySequence_Fast_GET_ITEM(items, j), 8, &number) < 0)
                    goto fail_out;
                pack_uint(at, number, 8);
                at += 8;
            }
        } else {
            pack_uint(at, (unsigned long long)(parts[i].size / units[i]), width);
            at += width;
            memcpy(at, parts[i].data, (size_t)parts[i].size);
            at += parts[i].size;
        }
    }
    pack_release(parts, n);
    return out;

fail_out:
    Py_DECREF(out);
    goto fail;
bad_layout:
    PyErr_Format(PyExc_ValueError, "bad layout %R", args[0]);
fail:
    pack_release(parts, n);
    return NULL;
}
