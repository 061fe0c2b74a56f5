/* The weight bound in C: fingerprints/rule/weight_bound.py's _bound_py for one pair, the
 * same integer for the same Features and model, without the interpreter (the batch
 * replay refuses about ten thousand pairs a Xinhua pass at the first stage).
 *
 * weight_bound(a, b, tables, pictures, cut) -> int, or None
 *
 * a and b are two Features (their attributes read by name); tables is weight_bound._packed
 * of the model: float64 values,
 *
 *   header: LONG_SHINGLES, CHROME_SHINGLES, SHORT_SHINGLES, OFF_TITLE_SIMILARITY,
 *           script_regimes (0/1), R (len(regime_cuts)), the R regime cuts,
 *           the groups of each of the three stages (6, 11, 1: _STAGES's),
 *           N (regime_count), the N regimes' offsets (indexes into the array);
 *   a regime: rest[3], then every stage's groups in order, each as
 *           n, its n cuts (increasing), its n + 1 sums (centibits).
 *
 * The stages' values are those of _bound_py, in _STAGES's order; a missing one adds
 * nothing. cut: None computes every stage, an int stops at the first stage whose bound
 * is below it. None when the kernel cannot say (a side's samples not strictly
 * increasing, or not bytes: the Python path then decides, as sketch.overlap_counts
 * does). Included by _kernel.c after count_contexts and blocks_of, which it uses. */

#define BOUND_HEADER 5 /* the fixed values before the regime cuts */

typedef struct {
    PyObject *features, *sketch, *samples, *title_key;
    long long shingles;
    int level, off_title, char_shingles, keys, pictures;
} BoundSide;

static PyObject *bound_names[12];
enum {
    B_SKETCH, B_SHINGLES, B_SAMPLES, B_LEVEL, B_TITLE_KEY, B_SHORT_TEXT, B_OFF_TITLE,
    B_CHAR_SHINGLES, B_KEYS, B_PICTURES, B_NUMBERS, B_NUMBER_COUNT
};

static int bound_intern(void) {
    static const char *text[12] = {"sketch", "shingles", "samples", "level", "title_key",
                                   "short_text", "off_title", "char_shingles", "keys",
                                   "pictures", "numbers", "number_count"};
    if (bound_names[11]) return 0;
    for (int i = 0; i < 12; i++)
        if (!bound_names[i] && !(bound_names[i] = PyUnicode_InternFromString(text[i])))
            return -1;
    return 0;
}

/* attribute `name` of obj as a truth value or an integer; -1 with the error set */
static int bound_truth(PyObject *obj, int name) {
    PyObject *value = PyObject_GetAttr(obj, bound_names[name]);
    if (!value) return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

static int bound_integer(PyObject *obj, int name, long long *out) {
    PyObject *value = PyObject_GetAttr(obj, bound_names[name]);
    if (!value) return -1;
    *out = PyLong_AsLongLong(value);
    Py_DECREF(value);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static void bound_release(BoundSide *side) {
    Py_CLEAR(side->sketch);
    Py_CLEAR(side->samples);
    Py_CLEAR(side->title_key);
}

/* 1 read, 0 not the kernel's (samples or title key of another type), -1 error */
static int bound_read(PyObject *features, BoundSide *side, int pictures) {
    long long level;
    side->features = features;
    if (!(side->sketch = PyObject_GetAttr(features, bound_names[B_SKETCH])) ||
        !(side->samples = PyObject_GetAttr(side->sketch, bound_names[B_SAMPLES])) ||
        !(side->title_key = PyObject_GetAttr(features, bound_names[B_TITLE_KEY])) ||
        bound_integer(side->sketch, B_SHINGLES, &side->shingles) < 0 ||
        bound_integer(side->sketch, B_LEVEL, &level) < 0 ||
        (side->off_title = bound_truth(features, B_OFF_TITLE)) < 0 ||
        (side->char_shingles = bound_truth(features, B_CHAR_SHINGLES)) < 0 ||
        (side->keys = bound_truth(features, B_KEYS)) < 0)
        return -1;
    side->pictures = 0;
    if (pictures && (side->pictures = bound_truth(features, B_PICTURES)) < 0) return -1;
    side->level = (int)level;
    return PyBytes_Check(side->samples) && PyBytes_GET_SIZE(side->samples) % 4 == 0 &&
           PyUnicode_Check(side->title_key) && level >= 0 && level <= 32;
}

/* sketch.overlap_counts's (shared, na, nb) of two sides (as the kernel's overlap); 0, or 1
 * when a side's samples are not strictly increasing */
static int bound_overlap(const BoundSide *a, const BoundSide *b, long long counts[3]) {
    Py_ssize_t found[3];
    if (overlap_counts((const unsigned char *)PyBytes_AS_STRING(a->samples),
                       PyBytes_GET_SIZE(a->samples) / 4, a->level,
                       (const unsigned char *)PyBytes_AS_STRING(b->samples),
                       PyBytes_GET_SIZE(b->samples) / 4, b->level, found))
        return 1;
    counts[0] = found[0], counts[1] = found[1], counts[2] = found[2];
    return 0;
}

/* weight_bound._similarity of two str: -1 missing, else difflib's ratio of the smaller
 * string against the larger; -2 with the error set */
static double bound_similarity(PyObject *a, PyObject *b) {
    if (!PyUnicode_GET_LENGTH(a) || !PyUnicode_GET_LENGTH(b)) return -1.0;
    int order = PyUnicode_Compare(a, b);
    if (order == -1 && PyErr_Occurred()) return -2.0;
    if (!order) return 1.0;
    Blocks m = {0};
    double found = -2.0;
    if (blocks_of(order < 0 ? a : b, order < 0 ? b : a, &m) == 0) {
        Py_ssize_t matched = 0;
        for (Py_ssize_t x = 0; x < m.count; x++) matched += m.joined[3 * x + 2];
        found = 2.0 * (double)matched / (double)(m.la + m.lb);
    }
    free_blocks(&m);
    return found;
}

/* The stage's groups from *at (their values, has[g] 0 for a missing one): the sum of
 * each present group's level, *at moved past them; -1 on a malformed table */
static int bound_stage(const double *table, Py_ssize_t size, Py_ssize_t *at, int groups,
                       const double *values, const int *has, long long *total) {
    for (int g = 0; g < groups; g++) {
        if (*at >= size) return -1;
        Py_ssize_t n = (Py_ssize_t)table[*at];
        if (n < 0 || *at + 2 + 2 * n > size) return -1;
        const double *cuts = table + *at + 1;
        if (has[g]) {
            Py_ssize_t level = 0; /* bisect_right: the cuts at or below the value */
            while (level < n && cuts[level] <= values[g]) level++;
            *total += (long long)cuts[n + level];
        }
        *at += 2 + 2 * n;
    }
    return 0;
}

/* (agree, conflict, conflicts) of numbers (or names) in context into values, has */
static void bound_context(const long counts[4], double *values, int *has) {
    int known = counts[0] && counts[1];
    long smaller = counts[0] < counts[1] ? counts[0] : counts[1];
    has[0] = has[1] = has[2] = known;
    if (!known) return;
    values[0] = (double)(counts[2] - counts[3]) / (double)smaller;
    values[1] = (double)counts[3] / (double)smaller;
    values[2] = (double)counts[3];
}

static int bound_contexts(PyObject *a, PyObject *b, long numbers[4], long names[4]) {
    long long a_count, b_count;
    if (bound_integer(a, B_NUMBER_COUNT, &a_count) < 0 ||
        bound_integer(b, B_NUMBER_COUNT, &b_count) < 0)
        return -1;
    PyObject *va = PyObject_GetAttr(a, bound_names[B_NUMBERS]);
    PyObject *vb = va ? PyObject_GetAttr(b, bound_names[B_NUMBERS]) : NULL;
    Py_buffer ba = {0}, bb = {0};
    int status = -1;
    if (vb && PyObject_GetBuffer(va, &ba, PyBUF_SIMPLE) == 0) {
        if (PyObject_GetBuffer(vb, &bb, PyBUF_SIMPLE) == 0) {
            if (count_contexts(&ba, (Py_ssize_t)a_count, &bb, (Py_ssize_t)b_count, 0,
                               numbers) == 0 &&
                count_contexts(&ba, (Py_ssize_t)a_count, &bb, (Py_ssize_t)b_count, 1,
                               names) == 0)
                status = 0;
            PyBuffer_Release(&bb);
        }
        PyBuffer_Release(&ba);
    }
    Py_XDECREF(va);
    Py_XDECREF(vb);
    return status;
}

static PyObject *weight_bound(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyBytes_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "weight_bound(a, b, tables: bytes, pictures, cut: int | None)");
        return NULL;
    }
    if (bound_intern() < 0) return NULL;
    const double *table = (const double *)PyBytes_AS_STRING(args[2]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[2]) / (Py_ssize_t)sizeof(double);
    int pictures = PyObject_IsTrue(args[3]);
    if (pictures < 0) return NULL;
    int has_cut = args[4] != Py_None;
    long long cut = has_cut ? PyLong_AsLongLong(args[4]) : 0;
    if (cut == -1 && PyErr_Occurred()) return NULL;

    BoundSide a = {0}, b = {0};
    PyObject *result = NULL;
    int read = bound_read(args[0], &a, pictures);
    if (read > 0) read = bound_read(args[1], &b, pictures);
    if (read < 0) goto done;
    long long counts[3];
    if (!read || bound_overlap(&a, &b, counts)) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    /* the header */
    if (size < BOUND_HEADER + 1) goto malformed;
    double long_shingles = table[0], chrome_shingles = table[1], short_shingles = table[2];
    double off_title_similarity = table[3];
    int script_regimes = table[4] != 0.0;
    Py_ssize_t regime_cuts = (Py_ssize_t)table[BOUND_HEADER];
    Py_ssize_t at = BOUND_HEADER + 1 + regime_cuts;
    if (regime_cuts < 0 || at + 4 > size || table[at] != 6 || table[at + 1] != 11 ||
        table[at + 2] != 1)
        goto malformed;
    Py_ssize_t regimes = (Py_ssize_t)table[at + 3];
    const double *offsets = table + at + 4;
    if (regimes < 1 || at + 4 + regimes > size) goto malformed;

    long long shared = counts[0], na = counts[1], nb = counts[2];
    long long small = a.shingles < b.shingles ? a.shingles : b.shingles;
    long long large = a.shingles < b.shingles ? b.shingles : a.shingles;
    int char_bodies = a.char_shingles + b.char_shingles;
    double title = bound_similarity(a.title_key, b.title_key);
    if (title == -2.0) goto done;
    /* comparison.mute_body */
    double never_mute = chrome_shingles > short_shingles ? chrome_shingles : short_shingles;
    int off_title = (a.off_title && a.shingles == small) || (b.off_title && b.shingles == small);
    int stub = (double)small < short_shingles && PyUnicode_GET_LENGTH(a.title_key) &&
               PyUnicode_GET_LENGTH(b.title_key);
    int mute = (double)small < never_mute &&
               ((off_title && (double)small < chrome_shingles) || stub) &&
               (title < 0.0 ? 0.0 : title) < off_title_similarity;
    double smaller = mute ? 0.0 : (double)small;
    /* VectorModel.regime_for */
    Py_ssize_t regime = 0;
    while (regime < regime_cuts && table[BOUND_HEADER + 1 + regime] <= smaller) regime++;
    if (script_regimes && regime > 0 && char_bodies < 2) regime += regime_cuts;
    if (regime >= regimes) goto malformed;
    at = (Py_ssize_t)offsets[regime];
    if (at < 0 || at + 3 > size) goto malformed;
    const double *rest = table + at;
    at += 3;

    int bodies = na > 0 && nb > 0;
    long long least = na < nb ? na : nb, most = na < nb ? nb : na;
    double containment = bodies ? (double)shared / (double)least : 0.0;
    double values[11];
    int has[11];
    long long weight = 0;
    values[0] = smaller, has[0] = 1;
    has[1] = has[2] = bodies;
    if (bodies) values[1] = (double)shared / (double)(na + nb - shared), values[2] = containment;
    values[3] = title, has[3] = title >= 0.0;
    values[4] = 1.0, has[4] = a.keys && b.keys;
    values[5] = 1.0, has[5] = pictures && a.pictures && b.pictures;
    if (bound_stage(table, size, &at, 6, values, has, &weight) < 0) goto malformed;
    if (has_cut && (long long)rest[0] + weight < cut) {
        result = PyLong_FromLongLong((long long)rest[0] + weight);
        goto done;
    }

    long numbers[4], names[4];
    if (bound_contexts(a.features, b.features, numbers, names) < 0) goto done;
    values[0] = bodies ? (double)shared / (double)most : 0.0, has[0] = bodies;
    values[1] = small ? (double)small / (double)large : 0.0, has[1] = small != 0;
    values[2] = containment, has[2] = bodies && (double)small >= long_shingles;
    values[3] = (double)(a.off_title + b.off_title), has[3] = 1;
    values[4] = (double)char_bodies, has[4] = 1;
    bound_context(numbers, values + 5, has + 5);
    bound_context(names, values + 8, has + 8);
    if (bound_stage(table, size, &at, 11, values, has, &weight) < 0) goto malformed;
    if (has_cut && (long long)rest[1] + weight < cut) {
        result = PyLong_FromLongLong((long long)rest[1] + weight);
        goto done;
    }

    PyObject *short_a = PyObject_GetAttr(a.features, bound_names[B_SHORT_TEXT]);
    PyObject *short_b = short_a ? PyObject_GetAttr(b.features, bound_names[B_SHORT_TEXT]) : NULL;
    if (short_b && (!PyUnicode_Check(short_a) || !PyUnicode_Check(short_b))) {
        result = Py_NewRef(Py_None);
    } else if (short_b) {
        double similarity = bound_similarity(short_a, short_b);
        values[0] = similarity, has[0] = similarity >= 0.0;
        if (similarity != -2.0) {
            if (bound_stage(table, size, &at, 1, values, has, &weight) < 0)
                PyErr_SetString(PyExc_ValueError, "weight_bound: a malformed table");
            else
                result = PyLong_FromLongLong((long long)rest[2] + weight);
        }
    }
    Py_XDECREF(short_a);
    Py_XDECREF(short_b);
    goto done;
malformed:
    PyErr_SetString(PyExc_ValueError, "weight_bound: a malformed table");
done:
    bound_release(&a);
    bound_release(&b);
    return result;
}
