/* The engine's per-article inner loops in C: the vocabulary lookup, the SimHash vote
 * sums with the weak bits, the numbers in context and the character-shingle sketch;
 * and the loops around them: clause splitting and boilerplate removal, the boilerplate
 * slot table, the memory block index's bucket walk, the multi-probe fingerprints, the
 * template guard's context comparison, and the codes, chrome and main body of
 * fingerprints/rule/main_body.py.
 *
 * Every function computes exactly what the NumPy code in fingerprints/rule/extraction.py and
 * fingerprints/rule/sketch.py computes (integer arithmetic throughout, the same hashes, the
 * same tie rules); tests/fingerprints/rule/test_kernel.py compares the two byte for byte on
 * the corpora and on edge cases. The NumPy code stays the reference and the fallback
 * when this module is not built (see fingerprints/rule/kernel.py).
 *
 * The module keeps no state between calls except a scratch counter array, and it never
 * releases the GIL, so calls from several threads are serialized by the interpreter.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_scratch.h"
#include "_samples.h"
#include "_stamped.h"
#include "_args.h" /* the per-article functions' METH_FASTCALL arguments */

/* the scratch buffers of the per-article loops (_scratch.h), one per use */
enum {
    S_IDS, S_UNIQ, S_KEYS, S_TF_AT, S_TF, S_NUMBERS, S_NUMBERS_TMP,
    S_CPS, S_WORD, S_VALUES, S_VALUES_TMP, S_BUF, S_LETTERS, S_UTF8, S_FOUND, S_CLAUSE_KEYS,
    S_SET, S_NAMES, S_WEIGHTS, N_SCRATCH
};
static Scratch scratch[N_SCRATCH];
/* the hash tables of the per-article loops, never cleared between calls (_stamped.h) */
enum { T_DISTINCT, T_TF_KEYS, N_STAMPED };
static Stamped stamped[N_STAMPED];

#define KEY_BASE 0x100000001B3ULL /* the polynomial base of the token keys */
#define GOLDEN 0x9E3779B97F4A7C15ULL
#define SHINGLE_SEED 0x9E3779B97F4A7C15ULL
#define SHINGLE_MUL 0x100000001B3ULL
#define CJK_SHINGLE 5
#define MAX_SAMPLES 192
#define MAX_NUMBERS 48
#define MAX_NAMES 32 /* vocabulary.MAX_NAMES: names in context kept (version 7) */
/* vocabulary's flags in Record.number: IN_CONTEXT, NAMED, RUN; RUN_INFO */
#define IN_CONTEXT 1
#define NAMED 2
#define RUN 4
#define RUN_INFO (15 | 3 << 4)

static uint32_t murmur3_32(const unsigned char *data, Py_ssize_t len, uint32_t seed);
static uint64_t murmur3_64(const unsigned char *data, Py_ssize_t len, uint32_t seed);

static inline uint64_t mix64(uint64_t h) {
    h ^= h >> 30;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBULL;
    h ^= h >> 31;
    return h;
}

/* The shingle hash of each window of `width` units: values[i] of units[i:i + width]
 * (values may be units itself: window i is read before values[i] is written). The
 * width of five (CJK_SHINGLE and WORD_SHINGLE: every text of five units or more) is
 * spelled out: the loop over a width known only at run time costs twice the
 * instructions of the five steps. */
static void shingle_values(const uint32_t *units, Py_ssize_t windows, Py_ssize_t width,
                           uint32_t *values) {
    if (width == 5) {
        for (Py_ssize_t i = 0; i < windows; i++) {
            const uint32_t *u = units + i;
            uint64_t h = (SHINGLE_SEED ^ (uint64_t)u[0]) * SHINGLE_MUL;
            h = (h ^ (uint64_t)u[1]) * SHINGLE_MUL;
            h = (h ^ (uint64_t)u[2]) * SHINGLE_MUL;
            h = (h ^ (uint64_t)u[3]) * SHINGLE_MUL;
            h = (h ^ (uint64_t)u[4]) * SHINGLE_MUL;
            values[i] = (uint32_t)(mix64(h) >> 32);
        }
        return;
    }
    for (Py_ssize_t i = 0; i < windows; i++) {
        uint64_t h = SHINGLE_SEED;
        for (Py_ssize_t j = 0; j < width; j++) h = (h ^ (uint64_t)units[i + j]) * SHINGLE_MUL;
        values[i] = (uint32_t)(mix64(h) >> 32);
    }
}

/* engine._token_keys for one token: sum(cp[t] * BASE**t) mod 2**64, xor length * GOLDEN,
 * splitmix64; 0 becomes 1 (0 marks an empty slot of the vocabulary table). The token is
 * the n code points of a str's data (kind, data) from start: a token str, or a span of
 * the text it was cut from (the same code points, so the same key). */
#define PREFETCH_AHEAD 8 /* fingerprint_core: table slots requested this many tokens ahead */

static uint64_t span_key(int kind, const void *data, Py_ssize_t start, Py_ssize_t n) {
    uint64_t h = 0, power = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        h += (uint64_t)PyUnicode_READ(kind, data, start + i) * power;
        power *= KEY_BASE;
    }
    h ^= (uint64_t)n * GOLDEN;
    h = mix64(h);
    return h ? h : 1;
}

/* LSD radix sort of n uint32 values (tmp: scratch of n). */
static void radix_sort_u32(uint32_t *values, uint32_t *tmp, Py_ssize_t n) {
    if (n < 48) { /* insertion sort: cheaper for the short lists (numbers, titles) */
        insert_sorted(values, values, n);
        return;
    }
    uint32_t *src = values, *dst = tmp;
    for (int shift = 0; shift < 32; shift += 8) {
        Py_ssize_t count[257] = {0};
        for (Py_ssize_t i = 0; i < n; i++) count[((src[i] >> shift) & 0xFF) + 1]++;
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (Py_ssize_t i = 0; i < n; i++) dst[count[(src[i] >> shift) & 0xFF]++] = src[i];
        uint32_t *swap = src;
        src = dst;
        dst = swap;
    }
    /* four passes: the sorted values are back in `values` */
}

/* n uint32 values sorted in place (tmp: scratch of n), for lists of a few dozen to a few
 * hundred values whose top bits spread them: the numbers' and the names' values in
 * context (fingerprint_core; the top bits: the hash of the word before each). One
 * counting pass on their top 6 bits (8 from 128 values, 11 from 1,024) puts each in its
 * bucket, then an insertion sort moves each within its bucket only (as _samples.h sorts
 * a sketch's samples): about a third of the instructions of the four-pass radix sort,
 * and of the insertion sort from a few dozen values on. Values
 * crowding a bucket (over CROWDED_BUCKET distinct or not: many numbers after one word)
 * would make the insertion quadratic: the list then goes to radix_sort_u32. Either way a
 * sort: the same values in the same order. */
#define CROWDED_BUCKET 24
static void bucket_sort_u32(uint32_t *values, uint32_t *tmp, Py_ssize_t n) {
    if (n < 16) { /* radix_sort_u32's insertion sort */
        radix_sort_u32(values, tmp, n);
        return;
    }
    int bits = n < 128 ? 6 : n < 1024 ? 8 : 11, shift = 32 - bits;
    uint32_t count[(1 << 11) + 1];
    memset(count, 0, (((size_t)1 << bits) + 1) * sizeof(uint32_t));
    int crowded = 0;
    for (Py_ssize_t i = 0; i < n; i++) crowded |= ++count[(values[i] >> shift) + 1] > CROWDED_BUCKET;
    if (crowded) {
        radix_sort_u32(values, tmp, n);
        return;
    }
    for (int b = 0; b < (1 << bits); b++) count[b + 1] += count[b];
    for (Py_ssize_t i = 0; i < n; i++) tmp[count[values[i] >> shift]++] = values[i];
    insert_sorted(values, tmp, n);
}

/* values[0:n] reduced in place to its distinct values (in first-seen order), with an
 * open-addressing set of 2**k >= 2n slots (value + 1 under the call's stamp,
 * _stamped.h). Returns the count, or -1 when probing exceeds 8n steps (values crowding
 * one run of slots; or no memory): the caller then sorts instead. */
static Py_ssize_t distinct_values(uint32_t *values, Py_ssize_t n) {
    size_t slots = 16;
    while (slots < 2 * (size_t)n) slots *= 2;
    uint64_t tag;
    uint64_t *set = stamped_take(&stamped[T_DISTINCT], slots, &tag);
    if (!set) return -1;
    size_t mask = slots - 1, budget = 8 * (size_t)n + 16;
    Py_ssize_t distinct = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t v = values[i];
        uint64_t entry = tag | ((uint64_t)v + 1);
        size_t j = v & mask;
        while (stamped_used(set[j], tag) && set[j] != entry) {
            j = (j + 1) & mask;
            if (!budget--) {
                stamped_give(&stamped[T_DISTINCT], set);
                return -1;
            }
        }
        if (set[j] != entry) {
            set[j] = entry;
            values[distinct++] = v;
        }
    }
    stamped_give(&stamped[T_DISTINCT], set);
    return distinct;
}

static Py_ssize_t unique_sorted(uint32_t *values, Py_ssize_t n) {
    if (n == 0) return 0;
    Py_ssize_t out = 1;
    for (Py_ssize_t i = 1; i < n; i++)
        if (values[i] != values[out - 1]) values[out++] = values[i];
    return out;
}

typedef int32_t v8si __attribute__((vector_size(32)));

/* BYTE_MASKS[v] lane j is -1 when bit j of v is set, else 0 */
static v8si BYTE_MASKS[256];

static void init_masks(void) {
    for (int v = 0; v < 256; v++)
        for (int j = 0; j < 8; j++) BYTE_MASKS[v][j] = ((v >> j) & 1) ? -1 : 0;
}

static inline __attribute__((always_inline)) void spill(v8si lanes[8], int64_t sums[64]) {
    for (int g = 0; g < 8; g++) {
        for (int j = 0; j < 8; j++) sums[8 * g + j] += lanes[g][j];
        lanes[g] = (v8si){0, 0, 0, 0, 0, 0, 0, 0};
    }
}

/* sums[b] += the weights (each in 0..INT32_MAX) of the tokens whose hash has bit b:
 * eight bits at a time in 32-bit vector lanes (masks per byte value), spilled into the
 * 64-bit sums before a lane could overflow. The lanes of a byte are one 256-bit vector:
 * one AND and one ADD on a machine with AVX2, the clone the loader picks (an ifunc),
 * two of each on 128-bit vectors elsewhere; the same integer sums either way. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void add_votes(const int32_t *weights, const uint64_t *hashes, Py_ssize_t n,
                      int64_t sums[64]) {
    v8si lanes[8];
    memset(lanes, 0, sizeof(lanes));
    int64_t lane_room = INT32_MAX;
    for (Py_ssize_t u = 0; u < n; u++) {
        int32_t w = weights[u];
        if (w > lane_room) {
            spill(lanes, sums);
            lane_room = INT32_MAX;
        }
        lane_room -= w;
        uint64_t h = hashes[u];
        v8si wv = {w, w, w, w, w, w, w, w};
        for (int g = 0; g < 8; g++) lanes[g] += BYTE_MASKS[(h >> (8 * g)) & 0xFF] & wv;
    }
    spill(lanes, sums);
}

#define N_VIEWS 6

/* A token's columns in one 16-byte record (extraction.RECORD, a NumPy structured array):
 * what the fingerprint reads of a token is one cache line, not four arrays' lines. */
typedef struct {
    uint64_t hash;        /* the feature hash */
    int32_t weight;       /* IDF x 100, 0 for stopwords, punctuation and white space */
    uint16_t number_hash; /* a number's or a name's 16-bit hash (NAME_FLAG for a name) */
    uint8_t skip;         /* white space or punctuation */
    uint8_t number;       /* IN_CONTEXT a number or a name, NAMED, RUN (vocabulary's flags) */
} Record;
_Static_assert(sizeof(Record) == 16, "extraction.RECORD is 16 bytes");

/* Tables(table_keys, table_ids, records, month, tf_factor, name_info): the vocabulary's NumPy
 * arrays, their buffers held for the object's life (the vocabulary builds a new one
 * whenever it replaces an array). */
typedef struct {
    PyObject_HEAD
    Py_buffer views[N_VIEWS];
    int n_views;
    /* the weight of a plain token the table does not hold (-1: such tokens go back to
     * the caller), and the seed of the feature hashes */
    long long default_weight;
    unsigned long seed;
} Tables;

static void tables_dealloc(Tables *self) {
    for (int i = 0; i < self->n_views; i++) PyBuffer_Release(&self->views[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int tables_init(Tables *self, PyObject *args, PyObject *kwds) {
    if (self->n_views) {
        PyErr_SetString(PyExc_TypeError, "Tables is immutable");
        return -1;
    }
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Tables takes positional arguments only");
        return -1;
    }
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    if (nargs != N_VIEWS && nargs != N_VIEWS + 2) {
        PyErr_Format(PyExc_TypeError,
                     "Tables takes %d arrays, then optionally default_weight and seed",
                     N_VIEWS);
        return -1;
    }
    self->default_weight = -1;
    self->seed = 0;
    if (nargs == N_VIEWS + 2) {
        self->default_weight = PyLong_AsLongLong(PyTuple_GET_ITEM(args, N_VIEWS));
        self->seed = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(args, N_VIEWS + 1));
        if (PyErr_Occurred()) return -1;
        if (self->seed > 0xFFFFFFFFUL) {
            PyErr_SetString(PyExc_ValueError, "seed must fit in 32 bits");
            return -1;
        }
    }
    static const int itemsize[N_VIEWS] = {8, 8, (int)sizeof(Record), 1, 8, 1};
    for (int i = 0; i < N_VIEWS; i++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(args, i), &self->views[i],
                               PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            return -1;
        self->n_views = i + 1;
        if (self->views[i].itemsize != itemsize[i]) {
            PyErr_Format(PyExc_TypeError, "array %d must have %d-byte items", i, itemsize[i]);
            return -1;
        }
    }
    return 0;
}

static PyTypeObject TablesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fingerprints.rule._kernel.Tables",
    .tp_basicsize = sizeof(Tables),
    .tp_dealloc = (destructor)tables_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The vocabulary arrays the kernel reads (buffers held while it lives).",
    .tp_init = (initproc)tables_init,
    .tp_new = PyType_GenericNew,
};

/* A plain token: lower-case ASCII letters and digits only (an English word, a number,
 * "10px" after normalization). When the vocabulary holds every plain word whose
 * columns are not the default ones (stopwords, IDF words, names, months: what
 * extract._Vocabulary.enable_defaults preloads), a plain token it does not hold has
 * the default columns: not skipped, the default weight, its mmh3 feature hash, and a
 * number (with its mmh3 number hash) when it is all digits. */
typedef struct {
    uint64_t key, hash;
    int64_t weight;
    uint64_t number_hash;
    uint8_t number;
} Extra;

/* Compared by code point, not by the str's kind: a span of a wider text holds the same
 * code points as the (1-byte) str made from it. */
static int is_plain(int kind, const void *data, Py_ssize_t start, Py_ssize_t n) {
    if (n == 0) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, start + i);
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return 0;
    }
    return 1;
}

#define NUMBER_MASK 0x7FFF /* extract.NUMBER_MASK */

/* c: the plain token's n ASCII bytes */
static void describe_plain(const unsigned char *c, Py_ssize_t n, uint64_t key,
                           const Tables *tab, Extra *out) {
    uint32_t seed = (uint32_t)tab->seed;
    int digits = 1;
    for (Py_ssize_t i = 0; i < n; i++) digits &= c[i] >= '0' && c[i] <= '9';
    out->key = key;
    out->hash = murmur3_64(c, n, seed);
    out->weight = tab->default_weight;
    out->number = (uint8_t)digits;
    out->number_hash = 0;
    if (digits) { /* leading zeros dropped, "0" for zeros only */
        Py_ssize_t z = 0;
        while (z < n - 1 && c[z] == '0') z++;
        out->number_hash = murmur3_32(c + z, n - z, seed) & NUMBER_MASK;
    }
}

/* fingerprint(tokens, tables, use_tf, weak_bits, with_numbers)
 *
 * -> (fp, informative_count, numbers_bytes, number_count, weak_bytes); or the list of
 * the tokens not in the vocabulary yet (the caller adds them and calls again; plain
 * tokens never are when the tables have a default weight); or None while the hash
 * table is being replaced (the caller retries under its lock).
 *
 * fingerprint_spans(text, spans, tables, use_tf, weak_bits, with_numbers) gives the same
 * for the tokens [text[s:e] for s, e in pairs of spans] (spans: a flat buffer of uint32
 * offsets, the C segmenter's cut_ids), reading each token in the text: a str is made
 * only for the tokens it hands back. Both run fingerprint_core: tokens is the list, or
 * NULL and text with spans. */
static PyObject *fingerprint_core(PyObject *tokens, PyObject *text, const uint32_t *spans,
                                  const uint32_t *nodes, int32_t *node_ids,
                                  Py_ssize_t node_ids_len, Py_ssize_t n,
                                  PyObject *const *args) {
    const Tables *tab = (const Tables *)args[0];
    const Py_buffer *v = tab->views;
    int use_tf = PyObject_IsTrue(args[1]);
    int with_numbers = PyObject_IsTrue(args[3]);
    long weak_long = PyLong_AsLong(args[2]);
    if (use_tf < 0 || with_numbers < 0 || (weak_long == -1 && PyErr_Occurred())) return NULL;
    int weak_bits = (weak_long < 0 || weak_long > 64) ? -1 : (int)weak_long;
    PyObject *result = NULL, *unknown = NULL;
    int64_t *ids = NULL;
    int64_t *uniq = NULL;
    uint64_t *keys = NULL;
    uint32_t *numbers = NULL, *tmp = NULL, *names = NULL;
    uint64_t *tf_keys = NULL, tf_tag = 0; /* the text's own count table (see below) */
    int64_t *tf = NULL;
    uint32_t *tf_at = NULL;
    Extra *extras = NULL; /* plain tokens the table does not hold: ids vocab_len + i */
    int64_t *extra_slots = NULL;
    Py_ssize_t n_extras = 0;
    uint64_t extra_mask = 0;
    unsigned char *ascii = NULL; /* a plain span of a wider text, as bytes */
    Py_ssize_t ascii_len = 0;

    const uint64_t *table_keys = v[0].buf;
    const int64_t *table_ids = v[1].buf;
    const Record *records = v[2].buf;
    const uint8_t *month = v[3].buf;
    const int64_t *tf_factor = v[4].buf;
    const uint8_t *name_info = v[5].buf;
    Py_ssize_t table_len = v[0].len / 8;
    Py_ssize_t tf_len = v[4].len / 8;
    /* ids beyond the shortest per-id array count as unknown: another thread may be
     * growing the vocabulary (arrays are replaced one by one by larger copies) */
    Py_ssize_t vocab_len = v[2].len / (Py_ssize_t)sizeof(Record);
    if (v[3].len < vocab_len) vocab_len = v[3].len;
    if (v[5].len < vocab_len) vocab_len = v[5].len;
    if (tf_len < 1 || weak_bits < 0 || weak_bits > 64) {
        PyErr_SetString(PyExc_ValueError, "invalid tf table or weak_bits");
        goto done;
    }
    if (table_len == 0 || (table_len & (table_len - 1)) || v[1].len / 8 != table_len) {
        result = Py_NewRef(Py_None); /* the table is being rebuilt: the caller's locked path */
        goto done;
    }
    ids = scratch_alloc(&scratch[S_IDS], (size_t)n * sizeof(int64_t));
    uniq = scratch_alloc(&scratch[S_UNIQ], (size_t)n * sizeof(int64_t));
    keys = scratch_alloc(&scratch[S_KEYS], (size_t)n * sizeof(uint64_t));
    if (!ids || !uniq || !keys) {
        PyErr_NoMemory();
        goto done;
    }
    uint64_t mask = (uint64_t)table_len - 1;
    int text_kind = text ? PyUnicode_KIND(text) : 0;
    Py_ssize_t text_len = text ? PyUnicode_GET_LENGTH(text) : 0;
    const void *text_data = text ? PyUnicode_DATA(text) : NULL;
    /* The tokens' keys first, so that the table slots can be fetched ahead: the lookups
     * below are bound by memory (a vocabulary of hundreds of thousands of tokens), and
     * PREFETCH_AHEAD tokens' slots are on their way while one is read. */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (nodes && nodes[i] && nodes[i] < node_ids_len) {
            int32_t known = node_ids[nodes[i]];
            if (known >= 0 && known < vocab_len) { /* this token's id, found before */
                ids[i] = known;
                keys[i] = 0; /* no key: table keys are never 0 */
                __builtin_prefetch(&records[known]);
                continue;
            }
        }
        if (tokens) {
            PyObject *token = PyList_GET_ITEM(tokens, i);
            if (!PyUnicode_Check(token)) {
                PyErr_SetString(PyExc_TypeError, "tokens must be str");
                goto done;
            }
#if PY_VERSION_HEX < 0x030C0000
            if (PyUnicode_READY(token) < 0) goto done; /* legacy strings exist before 3.12 */
#endif
            keys[i] = span_key(PyUnicode_KIND(token), PyUnicode_DATA(token), 0,
                               PyUnicode_GET_LENGTH(token));
        } else { /* a span is checked where it is read: a token known by its node is not */
            uint32_t start = spans[2 * i], end = spans[2 * i + 1];
            if (start > end || (Py_ssize_t)end > text_len) {
                PyErr_SetString(PyExc_ValueError, "a span lies outside the text");
                goto done;
            }
            keys[i] = span_key(text_kind, text_data, start, (Py_ssize_t)end - start);
        }
        if (i < PREFETCH_AHEAD) {
            __builtin_prefetch(&table_keys[keys[i] & mask]);
            __builtin_prefetch(&table_ids[keys[i] & mask]);
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + PREFETCH_AHEAD < n && keys[i + PREFETCH_AHEAD]) {
            uint64_t ahead = keys[i + PREFETCH_AHEAD] & mask;
            __builtin_prefetch(&table_keys[ahead]);
            __builtin_prefetch(&table_ids[ahead]);
        }
        if (!keys[i]) continue; /* resolved by its node */
        PyObject *token = NULL;
        int kind;
        const void *data;
        Py_ssize_t start, len;
        if (tokens) {
            token = PyList_GET_ITEM(tokens, i);
            kind = PyUnicode_KIND(token);
            data = PyUnicode_DATA(token);
            start = 0;
            len = PyUnicode_GET_LENGTH(token);
        } else {
            kind = text_kind;
            data = text_data;
            start = spans[2 * i];
            len = (Py_ssize_t)spans[2 * i + 1] - start;
        }
        uint64_t key = keys[i];
        uint64_t slot = key & mask;
        int64_t id = -1;
        for (;;) {
            uint64_t found = table_keys[slot];
            if (found == key) {
                id = table_ids[slot];
                break;
            }
            if (found == 0) break;
            slot = (slot + 1) & mask;
        }
        if (id < 0 && tab->default_weight >= 0 && is_plain(kind, data, start, len)) {
            if (!extras) { /* a local hash table: key -> extra, load <= 1/2 */
                uint64_t size = 2;
                while (size < 2 * (uint64_t)n) size *= 2;
                extras = PyMem_Malloc((size_t)n * sizeof(Extra));
                extra_slots = PyMem_Malloc((size_t)size * sizeof(int64_t));
                if (!extras || !extra_slots) {
                    PyErr_NoMemory();
                    goto done;
                }
                memset(extra_slots, 0xFF, (size_t)size * sizeof(int64_t));
                extra_mask = size - 1;
            }
            uint64_t s = key & extra_mask;
            while (extra_slots[s] >= 0 && extras[extra_slots[s]].key != key)
                s = (s + 1) & extra_mask;
            if (extra_slots[s] < 0) {
                const unsigned char *bytes;
                if (kind == PyUnicode_1BYTE_KIND) {
                    bytes = (const unsigned char *)data + start;
                } else { /* plain: every code point is ASCII */
                    if (len > ascii_len) {
                        PyMem_Free(ascii);
                        ascii_len = 0;
                        if (!(ascii = PyMem_Malloc((size_t)len))) {
                            PyErr_NoMemory();
                            goto done;
                        }
                        ascii_len = len;
                    }
                    for (Py_ssize_t j = 0; j < len; j++)
                        ascii[j] = (unsigned char)PyUnicode_READ(kind, data, start + j);
                    bytes = ascii;
                }
                describe_plain(bytes, len, key, tab, &extras[n_extras]);
                extra_slots[s] = n_extras++;
            }
            id = vocab_len + extra_slots[s];
        } else if (id < 0 || id >= vocab_len) { /* new token (or one being added now) */
            if (!unknown && !(unknown = PyList_New(0))) goto done;
            if (token) {
                if (PyList_Append(unknown, token) < 0) goto done;
            } else {
                PyObject *made = PyUnicode_Substring(text, start, start + len);
                if (!made) goto done;
                int failed = PyList_Append(unknown, made);
                Py_DECREF(made);
                if (failed < 0) goto done;
            }
        }
        ids[i] = id;
        if (id >= 0 && id < vocab_len) { /* read by the votes and the numbers below */
            __builtin_prefetch(&records[id]);
            if (nodes && nodes[i] && nodes[i] < node_ids_len && id <= INT32_MAX)
                node_ids[nodes[i]] = (int32_t)id;
        }
    }
    if (unknown) { /* the caller adds them and calls again */
        result = unknown;
        unknown = NULL;
        goto done;
    }
#define EXTRA(id) (extras[(id) - vocab_len])
#define WEIGHT(id) ((id) < vocab_len ? (int64_t)records[id].weight : EXTRA(id).weight)
#define HASH(id) ((id) < vocab_len ? records[id].hash : EXTRA(id).hash)
#define SKIP(id) ((id) < vocab_len ? records[id].skip : 0)
#define FLAGS(id) ((id) < vocab_len ? records[id].number : EXTRA(id).number)
#define IS_NUMBER(id) (FLAGS(id) & IN_CONTEXT)
#define NUMBER_HASH(id) ((id) < vocab_len ? (uint64_t)records[id].number_hash \
                                          : EXTRA(id).number_hash)
#define MONTH(id) ((id) < vocab_len ? month[id] : 0)
    /* Each informative id's occurrences, counted in a table of the text's own (open
     * addressing, id + 1 as key under the call's stamp (_stamped.h), at most half full:
     * kilobytes, in the cache) rather than in one slot per vocabulary id (megabytes, a
     * read at random per token). */
    size_t slots = 16;
    while (slots < 2 * (size_t)n) slots *= 2;
    if ((uint64_t)vocab_len + (uint64_t)n >= STAMP_KEY_MAX) { /* ids too wide to stamp */
        PyErr_SetString(PyExc_OverflowError, "vocabulary too large for the count table");
        goto done;
    }
    tf_keys = stamped_take(&stamped[T_TF_KEYS], slots, &tf_tag);
    tf_at = scratch_alloc(&scratch[S_TF_AT], slots * sizeof(uint32_t));
    tf = scratch_alloc(&scratch[S_TF], (size_t)n * sizeof(int64_t));
    if (!tf_keys || !tf_at || !tf) {
        PyErr_NoMemory();
        goto done;
    }
    /* votes: one per bit, exact integers (the NumPy code sums the same integers) */
    Py_ssize_t informative = 0, n_uniq = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t id = ids[i];
        if (WEIGHT(id) > 0) {
            informative++;
            size_t j = (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> 32) & (slots - 1);
            uint64_t entry = tf_tag | (uint64_t)(id + 1);
            while (stamped_used(tf_keys[j], tf_tag) && tf_keys[j] != entry)
                j = (j + 1) & (slots - 1);
            if (tf_keys[j] != entry) {
                tf_keys[j] = entry;
                tf_at[j] = (uint32_t)n_uniq;
                tf[n_uniq] = 0;
                uniq[n_uniq++] = id;
            }
            tf[tf_at[j]]++;
        }
    }
    /* votes[b] = sum(w if bit b else -w) = 2 * set[b] - total, where set[b] sums the
     * weights of the tokens whose hash has bit b (add_votes; the hashes in keys[], whose
     * lookups are done) */
    int64_t votes[64] = {0}, total = 0;
    int32_t *lane_weights = scratch_alloc(&scratch[S_WEIGHTS], (size_t)n * sizeof(int32_t));
    if (!lane_weights) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n_lane = 0;
    for (Py_ssize_t u = 0; u < n_uniq; u++) {
        int64_t id = uniq[u];
        int64_t count = tf[u];
        int64_t w = WEIGHT(id);
        if (use_tf) w *= tf_factor[count < tf_len ? count : tf_len - 1];
        uint64_t h = HASH(id);
        total += w;
        if (w > INT32_MAX) { /* never with jieba's IDF table; kept exact anyway */
            for (int b = 0; b < 64; b++)
                if ((h >> b) & 1) votes[b] += w;
            continue;
        }
        lane_weights[n_lane] = (int32_t)w;
        keys[n_lane++] = h;
    }
    add_votes(lane_weights, keys, n_lane, votes);
    scratch_free(&scratch[S_WEIGHTS], lane_weights);
    for (int b = 0; b < 64; b++) votes[b] = 2 * votes[b] - total;
    uint64_t fp = 0;
    char weak[64];
    Py_ssize_t n_weak = 0;
    if (n_uniq) {
        for (int b = 0; b < 64; b++)
            if (votes[b] > 0) fp |= 1ULL << b;
        if (weak_bits) { /* argsort(|votes|), stable: ties by bit position */
            uint64_t order[64];
            for (int b = 0; b < 64; b++) {
                uint64_t a = (uint64_t)(votes[b] < 0 ? -votes[b] : votes[b]);
                order[b] = (a << 6) | (uint64_t)b; /* |vote| < 2**58: exact */
            }
            /* the weak_bits smallest keys, in order: insertion into a bounded list */
            uint64_t best[64];
            int kept = 0;
            for (int b = 0; b < 64; b++) {
                uint64_t key = order[b];
                if (kept == weak_bits && (kept == 0 || best[kept - 1] < key)) continue;
                int j = kept < weak_bits ? kept++ : kept - 1;
                while (j > 0 && best[j - 1] > key) {
                    best[j] = best[j - 1];
                    j--;
                }
                best[j] = key;
            }
            for (int b = 0; b < weak_bits; b++) weak[b] = (char)(best[b] & 63);
            n_weak = weak_bits;
        }
    }
    /* numbers in context: each number token with the word before it; and (version 7)
     * names in context by kind: context << 16 | kind << 14 | rarity << 10 | 10 bits of
     * the name's hash, a run of 2-4 RUN tokens (no skipped token between) a name outside
     * the dictionary (extraction._names_in_context) */
    Py_ssize_t n_numbers = 0, n_names = 0;
    if (with_numbers) {
        numbers = scratch_alloc(&scratch[S_NUMBERS], (size_t)n * sizeof(uint32_t));
        tmp = scratch_alloc(&scratch[S_NUMBERS_TMP], (size_t)n * sizeof(uint32_t));
        names = scratch_alloc(&scratch[S_NAMES], (size_t)n * sizeof(uint32_t));
        if (!numbers || !tmp || !names) {
            PyErr_NoMemory();
            goto done;
        }
        int64_t prev = -1, run_prev = -1;
        Py_ssize_t run = 0; /* RUN tokens in a row up to here */
        uint64_t run_hash = 0;
        for (Py_ssize_t i = 0; i <= n; i++) {
            int64_t id = i < n ? ids[i] : -1;
            unsigned flags = id >= 0 && !SKIP(id) ? FLAGS(id) : 0;
            if (run && !(flags & RUN)) { /* a run ends */
                if (run >= 2 && run <= 4) {
                    uint64_t context = run_prev >= 0 ? HASH(run_prev) >> 48 : 0;
                    names[n_names++] = (uint32_t)((context << 16) | ((uint64_t)RUN_INFO << 10)
                                                  | (mix64(run_hash) >> 54));
                }
                run = 0;
            }
            if (id < 0 || SKIP(id)) continue;
            if (flags & IN_CONTEXT && !(prev >= 0 && MONTH(prev))) {
                uint64_t context = prev >= 0 ? HASH(prev) >> 48 : 0;
                numbers[n_numbers++] = (uint32_t)((context << 16) | (NUMBER_HASH(id) & 0xFFFF));
            }
            if (flags & NAMED) { /* a name by kind (dictionary words: id < vocab_len) */
                uint64_t context = prev >= 0 ? HASH(prev) >> 48 : 0;
                names[n_names++] = (uint32_t)((context << 16) | ((uint64_t)name_info[id] << 10)
                                              | (NUMBER_HASH(id) & 0x3FF));
            }
            if (flags & RUN) {
                if (!run++) {
                    run_prev = prev;
                    run_hash = 0;
                }
                run_hash = run_hash * KEY_BASE + HASH(id);
            }
            prev = id;
        }
        bucket_sort_u32(numbers, tmp, n_numbers);
        n_numbers = unique_sorted(numbers, n_numbers);
        bucket_sort_u32(names, tmp, n_names);
        n_names = unique_sorted(names, n_names);
    }
    Py_ssize_t kept = n_numbers < MAX_NUMBERS ? n_numbers : MAX_NUMBERS;
    PyObject *number_bytes = PyBytes_FromStringAndSize(NULL, kept * 4);
    if (!number_bytes) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(number_bytes);
    for (Py_ssize_t i = 0; i < kept; i++) { /* little-endian uint32 */
        out[4 * i] = numbers[i] & 0xFF;
        out[4 * i + 1] = (numbers[i] >> 8) & 0xFF;
        out[4 * i + 2] = (numbers[i] >> 16) & 0xFF;
        out[4 * i + 3] = numbers[i] >> 24;
    }
    Py_ssize_t kept_names = n_names < MAX_NAMES ? n_names : MAX_NAMES;
    PyObject *name_bytes = PyBytes_FromStringAndSize(NULL, kept_names * 4);
    if (!name_bytes) {
        Py_DECREF(number_bytes);
        goto done;
    }
    out = (unsigned char *)PyBytes_AS_STRING(name_bytes);
    for (Py_ssize_t i = 0; i < kept_names; i++) {
        out[4 * i] = names[i] & 0xFF;
        out[4 * i + 1] = (names[i] >> 8) & 0xFF;
        out[4 * i + 2] = (names[i] >> 16) & 0xFF;
        out[4 * i + 3] = names[i] >> 24;
    }
    /* the tuple made directly: Py_BuildValue parses its format on every call */
    result = PyTuple_New(7);
    if (!result) {
        Py_DECREF(number_bytes);
        Py_DECREF(name_bytes);
        goto done;
    }
    PyTuple_SET_ITEM(result, 0, PyLong_FromUnsignedLongLong(fp));
    PyTuple_SET_ITEM(result, 1, PyLong_FromSsize_t(informative));
    PyTuple_SET_ITEM(result, 2, number_bytes);
    PyTuple_SET_ITEM(result, 3, PyLong_FromSsize_t(n_numbers));
    PyTuple_SET_ITEM(result, 4, PyBytes_FromStringAndSize(weak, n_weak));
    PyTuple_SET_ITEM(result, 5, name_bytes);
    PyTuple_SET_ITEM(result, 6, PyLong_FromSsize_t(n_names));
    for (int item = 0; item < 7; item++) {
        if (!PyTuple_GET_ITEM(result, item)) { /* out of memory: a tuple of NULLs is freed */
            Py_CLEAR(result);
            break;
        }
    }
#undef EXTRA
#undef WEIGHT
#undef HASH
#undef SKIP
#undef IS_NUMBER
#undef FLAGS
#undef NUMBER_HASH
#undef MONTH

done:
    Py_XDECREF(unknown);
    PyMem_Free(ascii);
    PyMem_Free(extras);
    PyMem_Free(extra_slots);
    scratch_free(&scratch[S_IDS], ids);
    scratch_free(&scratch[S_UNIQ], uniq);
    scratch_free(&scratch[S_KEYS], keys);
    scratch_free(&scratch[S_NUMBERS], numbers);
    scratch_free(&scratch[S_NUMBERS_TMP], tmp);
    scratch_free(&scratch[S_NAMES], names);
    stamped_give(&stamped[T_TF_KEYS], tf_keys);
    scratch_free(&scratch[S_TF_AT], tf_at);
    scratch_free(&scratch[S_TF], tf);
    return result;
}

static PyObject *fingerprint(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyList_Check(args[0]) || !PyObject_TypeCheck(args[1], &TablesType)) {
        PyErr_SetString(PyExc_TypeError,
                        "fingerprint(tokens: list, tables: Tables, use_tf, weak_bits, "
                        "with_numbers)");
        return NULL;
    }
    return fingerprint_core(args[0], NULL, NULL, NULL, NULL, 0, PyList_GET_SIZE(args[0]),
                            args + 1);
}

static PyObject *fingerprint_spans(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6 || !PyUnicode_Check(args[0]) || !PyObject_TypeCheck(args[2], &TablesType)) {
        PyErr_SetString(PyExc_TypeError,
                        "fingerprint_spans(text: str, spans: buffer of uint32, tables: Tables, "
                        "use_tf, weak_bits, with_numbers)");
        return NULL;
    }
    PyObject *text = args[0];
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    Py_buffer b;
    if (PyObject_GetBuffer(args[1], &b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    PyObject *result = NULL;
    const uint32_t *spans = b.buf;
    Py_ssize_t count = b.len / 4;
    if (b.itemsize != 4 || count % 2) {
        PyErr_SetString(PyExc_TypeError, "spans must be (start, end) pairs of uint32");
        goto done;
    }
    result = fingerprint_core(NULL, text, spans, NULL, NULL, 0, count / 2, args + 2);
done:
    PyBuffer_Release(&b);
    return result;
}

/* node_ids' buffer (fingerprint_nodes, fingerprint_cut): 4-byte items formatted as a
 * C int ('i') or, where long is 4 bytes, a long ('l') */
static int int32_buffer(const Py_buffer *b) {
    return b->itemsize == 4 && b->format && strchr("il", b->format[strlen(b->format) - 1]);
}

/* fingerprint_nodes(text, spans, nodes, node_ids, tables, use_tf, weak_bits, with_numbers):
 * fingerprint_spans, with each token's trie node (the C segmenter's cut_nodes) and a
 * writable int32 buffer node_ids (-1: not known yet) that maps a node to the token's
 * vocabulary id. A token whose node is mapped is not hashed nor looked up in the
 * vocabulary's hash table (two reads in 32 MiB); one that is looked up maps its node
 * for the next time. node_ids belongs to one vocabulary and one segmenter. A span is
 * checked where it is read (ValueError outside the text): that of a token known by its
 * node is not read, so checking every span first cost more than the lookups it spares. */
static PyObject *fingerprint_nodes(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8 || !PyUnicode_Check(args[0]) || !PyObject_TypeCheck(args[4], &TablesType)) {
        PyErr_SetString(PyExc_TypeError,
                        "fingerprint_nodes(text: str, spans: buffer of uint32, nodes: buffer "
                        "of uint32, node_ids: writable buffer of int32, tables: Tables, use_tf, "
                        "weak_bits, with_numbers)");
        return NULL;
    }
    PyObject *text = args[0];
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    Py_buffer b, nb, mb;
    if (PyObject_GetBuffer(args[1], &b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (PyObject_GetBuffer(args[2], &nb, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&b);
        return NULL;
    }
    if (PyObject_GetBuffer(args[3], &mb, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&b);
        PyBuffer_Release(&nb);
        return NULL;
    }
    PyObject *result = NULL;
    const uint32_t *spans = b.buf;
    Py_ssize_t count = b.len / 4;
    if (b.itemsize != 4 || count % 2 || nb.itemsize != 4 || nb.len / 4 != count / 2 ||
        !int32_buffer(&mb)) {
        PyErr_SetString(PyExc_TypeError, "spans must be (start, end) pairs of uint32, nodes "
                        "one uint32 per pair, node_ids int32");
        goto done;
    }
    result = fingerprint_core(NULL, text, spans, nb.buf, mb.buf, mb.len / 4, count / 2,
                              args + 4); /* tables, use_tf, weak_bits, with_numbers */
done:
    PyBuffer_Release(&b);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&mb);
    return result;
}

static inline int is_cjk(uint32_t cp) {
    return (cp >= 0x3400 && cp <= 0x9FFF) || (cp >= 0x20000 && cp <= 0x3FFFF);
}

/* MurmurHash3 x86_32 (what mmh3.hash computes over a str's UTF-8 bytes). */
static uint32_t murmur3_32(const unsigned char *data, Py_ssize_t len, uint32_t seed) {
    const uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
    uint32_t h = seed;
    Py_ssize_t blocks = len / 4;
    for (Py_ssize_t i = 0; i < blocks; i++) {
        uint32_t k = (uint32_t)data[4 * i] | ((uint32_t)data[4 * i + 1] << 8) |
                     ((uint32_t)data[4 * i + 2] << 16) | ((uint32_t)data[4 * i + 3] << 24);
        k *= c1;
        k = (k << 15) | (k >> 17);
        k *= c2;
        h ^= k;
        h = (h << 13) | (h >> 19);
        h = h * 5 + 0xe6546b64;
    }
    const unsigned char *tail = data + 4 * blocks;
    uint32_t k = 0;
    switch (len & 3) {
    case 3: k ^= (uint32_t)tail[2] << 16; /* fall through */
    case 2: k ^= (uint32_t)tail[1] << 8;  /* fall through */
    case 1:
        k ^= tail[0];
        k *= c1;
        k = (k << 15) | (k >> 17);
        k *= c2;
        h ^= k;
    }
    h ^= (uint32_t)len;
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return h;
}

#define WORD_SEED 0x51E7C4
#define WORD_SHINGLE 5

/* Append the UTF-8 bytes of cp (not a surrogate). */
static Py_ssize_t put_utf8(unsigned char *out, uint32_t cp) {
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* sketch(text, keep_table) -> (level, shingles, samples_bytes, char_shingled), the last
 * being sketch.char_shingled(text), or None when the text
 * takes a path left to Python (no kept character, or a CJK share that is >= 30 % only
 * by sketch.Sketch.from_text's rule: short or borderline texts).
 *
 * keep_table: 65,536 bools, True for the BMP code points shingles keep (letters and
 * digits). A text with >= 5 kept characters of which >= 30 % are CJK gets character
 * 5-gram shingles (sketch_many's rule); a text under 30 % CJK gets word 5-grams, a word
 * being a run of Unicode alphanumerics (the regex [^\W_]+) hashed with mmh3's x86_32
 * over its UTF-8 bytes (sketch._word_units). */
static PyObject *sketch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text;
    Py_buffer keep_view;
    if (!args_count("sketch", nargs, 2) || !arg_str("sketch", args, 0, &text) ||
        !arg_buffer(args[1], &keep_view))
        return NULL;
    PyObject *result = NULL;
    uint32_t *cps = NULL, *values = NULL, *tmp = NULL;
    unsigned char *word = NULL;
    if (keep_view.len < 0x10000) {
        PyErr_SetString(PyExc_ValueError, "keep table must have 65536 entries");
        goto done;
    }
    const uint8_t *keep = keep_view.buf;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) goto done;
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    cps = scratch_alloc(&scratch[S_CPS], (size_t)n * sizeof(uint32_t));
    if (!cps) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t m = 0, cjk = 0;
    if (kind == PyUnicode_2BYTE_KIND) { /* most bodies: the loop without the kind's test */
        const Py_UCS2 *chars = data;
        for (Py_ssize_t i = 0; i < n; i++) {
            uint32_t cp = chars[i];
            if (keep[cp]) {
                cps[m++] = cp;
                cjk += is_cjk(cp);
            }
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            uint32_t cp = PyUnicode_READ(kind, data, i);
            if (cp >= 0x10000 || keep[cp]) {
                cps[m++] = cp;
                cjk += is_cjk(cp);
            }
        }
    }
    /* sketch.char_shingled: any kept character and >= 30 % of them CJK (its float
     * mean, a division; the shingle choice below multiplies, as sketch_many does) */
    int char_kind = m > 0 && (double)cjk / (double)m >= 0.3;
    Py_ssize_t units = 0, width = CJK_SHINGLE;
    if (m >= CJK_SHINGLE && (double)cjk >= 0.3 * (double)m) {
        units = m; /* character shingles over the kept code points */
    } else if (m == 0 || (double)cjk / (double)m >= 0.3) {
        result = Py_NewRef(Py_None);
        goto done;
    } else { /* word shingles: cps[] is reused for the word hashes */
        word = scratch_alloc(&scratch[S_WORD], (size_t)(4 * n + 1));
        if (!word) {
            PyErr_NoMemory();
            goto done;
        }
        Py_ssize_t len = 0;
        for (Py_ssize_t i = 0; i <= n; i++) {
            Py_UCS4 cp = i < n ? PyUnicode_READ(kind, data, i) : 0;
            if (i < n && Py_UNICODE_ISALNUM(cp)) { /* never a surrogate (category Cs) */
                len += put_utf8(word + len, cp);
            } else if (len) {
                cps[units++] = murmur3_32(word, len, WORD_SEED);
                len = 0;
            }
        }
        width = WORD_SHINGLE;
        if (units == 0) {
            result = Py_BuildValue("(iny#O)", 0, (Py_ssize_t)0, "", (Py_ssize_t)0,
                                   char_kind ? Py_True : Py_False);
            goto done;
        }
        if (units < width) width = units; /* a text shorter than one shingle is one */
    }
    Py_ssize_t windows = units - width + 1;
    values = scratch_alloc(&scratch[S_VALUES], (size_t)windows * sizeof(uint32_t));
    tmp = scratch_alloc(&scratch[S_VALUES_TMP], (size_t)windows * sizeof(uint32_t));
    if (!values || !tmp) {
        PyErr_NoMemory();
        goto done;
    }
    shingle_values(cps, windows, width, values);
    /* The distinct values (a set of the text's own: no full sort), then only the
     * samples, the values under the level's cut (an eighth of a news body's), sorted.
     * Hashes lie in the set by their low bits; a text whose values crowd one run of
     * slots (probing past a budget) is sorted whole instead, as before. */
    Py_ssize_t distinct = distinct_values(values, windows);
    if (distinct < 0) { /* values[] still holds every distinct value (some moved) */
        radix_sort_u32(values, tmp, windows);
        distinct = unique_sorted(values, windows);
    }
    int level = 0;
    while ((distinct >> level) > MAX_SAMPLES) level++;
    uint64_t cut = level ? 1ULL << (32 - level) : 1ULL << 32;
    Py_ssize_t sampled = 0;
    for (Py_ssize_t i = 0; i < distinct; i++)
        if (values[i] < cut) values[sampled++] = values[i];
    sort_samples(values, tmp, sampled, 32 - level); /* sorted already if the set was skipped */
    PyObject *samples = PyBytes_FromStringAndSize(NULL, sampled * 4);
    if (!samples) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(samples);
    for (Py_ssize_t i = 0; i < sampled; i++) {
        out[4 * i] = values[i] & 0xFF;
        out[4 * i + 1] = (values[i] >> 8) & 0xFF;
        out[4 * i + 2] = (values[i] >> 16) & 0xFF;
        out[4 * i + 3] = values[i] >> 24;
    }
    result = tuple_steal(4, PyLong_FromLong(level), PyLong_FromSsize_t(distinct), samples,
                         Py_NewRef(char_kind ? Py_True : Py_False));

done:
    scratch_free(&scratch[S_CPS], cps);
    scratch_free(&scratch[S_VALUES], values);
    scratch_free(&scratch[S_VALUES_TMP], tmp);
    scratch_free(&scratch[S_WORD], word);
    PyBuffer_Release(&keep_view);
    return result;
}


/* --- clauses (fingerprints/rule/boilerplate.py) ------------------------------------------ */

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t fmix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDULL;
    k ^= k >> 33;
    k *= 0xC4CEB9FE1A85EC53ULL;
    k ^= k >> 33;
    return k;
}

static inline uint64_t load64(const unsigned char *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v; /* one load, not eight (the loop below is what it reads) */
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
#endif
}

/* The first 64 bits of MurmurHash3_x64_128(data, seed): what mmh3.hash64(key, seed,
 * signed=False)[0] returns for a str key (its UTF-8 bytes). */
static uint64_t murmur3_64(const unsigned char *data, Py_ssize_t len, uint32_t seed) {
    const uint64_t c1 = 0x87C37B91114253D5ULL, c2 = 0x4CF5AD432745937FULL;
    uint64_t h1 = seed, h2 = seed;
    Py_ssize_t blocks = len / 16;
    for (Py_ssize_t i = 0; i < blocks; i++) {
        uint64_t k1 = load64(data + 16 * i), k2 = load64(data + 16 * i + 8);
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
        h1 = rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52DCE729;
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        h2 = rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495AB5;
    }
    const unsigned char *tail = data + 16 * blocks;
    uint64_t k1 = 0, k2 = 0;
    int rest = (int)(len & 15);
    switch (rest) { /* the reference's tail, byte by byte without a loop */
    case 15: k2 ^= (uint64_t)tail[14] << 48; /* fall through */
    case 14: k2 ^= (uint64_t)tail[13] << 40; /* fall through */
    case 13: k2 ^= (uint64_t)tail[12] << 32; /* fall through */
    case 12: k2 ^= (uint64_t)tail[11] << 24; /* fall through */
    case 11: k2 ^= (uint64_t)tail[10] << 16; /* fall through */
    case 10: k2 ^= (uint64_t)tail[9] << 8;   /* fall through */
    case 9:
        k2 ^= (uint64_t)tail[8];
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        k1 = load64(tail);
        break;
    case 8: k1 = load64(tail); break;
    case 7: k1 ^= (uint64_t)tail[6] << 48; /* fall through */
    case 6: k1 ^= (uint64_t)tail[5] << 40; /* fall through */
    case 5: k1 ^= (uint64_t)tail[4] << 32; /* fall through */
    case 4: k1 ^= (uint64_t)tail[3] << 24; /* fall through */
    case 3: k1 ^= (uint64_t)tail[2] << 16; /* fall through */
    case 2: k1 ^= (uint64_t)tail[1] << 8;  /* fall through */
    case 1: k1 ^= (uint64_t)tail[0];
    }
    if (rest > 0) { k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1; }
    h1 ^= (uint64_t)len; h2 ^= (uint64_t)len;
    h1 += h2; h2 += h1;
    h1 = fmix64(h1); h2 = fmix64(h2);
    h1 += h2;
    return h1;
}

static inline int is_clause_break(Py_UCS4 ch) {
    switch (ch) {
    case '.': case '!': case '?': case ';': case ':': case ',': case '|':
    case 0x3002: case 0xFF01: case 0xFF1F: case 0xFF1B: case 0xFF1A: case 0xFF0C:
    case 0x3001: case 0x2022: case 0x00B7:
        return 1;
    default:
        return 0;
    }
}

static inline int is_cjk(uint32_t cp);

/* index of the next character that is not NUL at or after i (n when none) */
static inline Py_ssize_t next_char(int kind, const void *data, Py_ssize_t i, Py_ssize_t n) {
    while (i < n && PyUnicode_READ(kind, data, i) == 0) i++;
    return i;
}

/* Does a clause end at text[*i] (``ch``, after ``prev``, the last character that is not
 * NUL): clause punctuation, a literal "\n" or "\r" (a backslash and the letter: *i
 * moves to the letter, which goes to *escaped), or a space between two CJK characters?
 * clauses() and clause_keys() split alike through this; inlined, as it is called for
 * every character of every body. */
static inline __attribute__((always_inline)) int
clause_break_at(int kind, const void *data, Py_ssize_t *i, Py_ssize_t n, Py_UCS4 ch,
                Py_UCS4 prev, Py_UCS4 *escaped) {
    *escaped = 0;
    if (is_clause_break(ch)) return 1;
    if (ch == '\\') {
        Py_ssize_t j = next_char(kind, data, *i + 1, n);
        if (j < n) {
            Py_UCS4 next = PyUnicode_READ(kind, data, j);
            if (next == 'n' || next == 'r') {
                *i = j;
                *escaped = next;
                return 1;
            }
        }
        return 0;
    }
    if (ch == ' ' && is_cjk(prev)) {
        Py_ssize_t j = next_char(kind, data, *i + 1, n);
        return j < n && is_cjk(PyUnicode_READ(kind, data, j));
    }
    return 0;
}

/* boilerplate.clause_hash of the letters and digits buf[0:len] (utf8: scratch of 4 * len
 * bytes; letters and digits are never surrogates). */
static uint64_t clause_key_hash(const Py_UCS4 *buf, Py_ssize_t len, unsigned char *utf8,
                                uint32_t seed) {
    Py_ssize_t size = 0;
    for (Py_ssize_t i = 0; i < len; i++) size += put_utf8(utf8 + size, buf[i]);
    return murmur3_64(utf8, size, seed);
}

/* Append the clause buf[0:len] (and its hash, 0 when shorter than min_clause). */
static int flush_clause(PyObject *found, PyObject *hashes, const Py_UCS4 *buf, Py_ssize_t len,
                        unsigned char *utf8, Py_ssize_t min_clause, uint32_t seed) {
    if (len == 0) return 0;
    PyObject *clause = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, len);
    if (!clause) return -1;
    int failed = PyList_Append(found, clause) < 0;
    Py_DECREF(clause);
    if (failed) return -1;
    uint64_t h = len >= min_clause ? clause_key_hash(buf, len, utf8, seed) : 0;
    PyObject *value = PyLong_FromUnsignedLongLong(h);
    if (!value) return -1;
    failed = PyList_Append(hashes, value) < 0;
    Py_DECREF(value);
    return failed ? -1 : 0;
}

/* clauses(text, min_clause, seed) -> (clauses, hashes)
 *
 * What fingerprints.rule.boilerplate.clauses and hashed_clauses compute, in one pass: the
 * text split at runs of clause punctuation, at a literal backslash-n or backslash-r,
 * and at a single space between two CJK characters, each clause reduced to its letters
 * and digits (str.isalnum), empty ones dropped; NUL characters are ignored. */
static PyObject *clauses(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t min_clause;
    unsigned long seed;
    if (!PyArg_ParseTuple(args, "Unk", &text, &min_clause, &seed)) return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_UCS4 *buf = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_UCS4));
    unsigned char *utf8 = PyMem_Malloc((size_t)(n ? n : 1) * 4);
    PyObject *found = PyList_New(0), *hashes = PyList_New(0), *result = NULL;
    if (!buf || !utf8 || !found || !hashes) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t len = 0;
    Py_UCS4 prev = 0; /* the last character that is not NUL */
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch == 0) continue;
        Py_UCS4 escaped;
        int cut = clause_break_at(kind, data, &i, n, ch, prev, &escaped);
        if (cut) {
            if (flush_clause(found, hashes, buf, len, utf8, min_clause, (uint32_t)seed) < 0)
                goto done;
            len = 0;
            /* the character before a CJK break space must be CJK in the marked text:
             * a break (now NUL there) never is */
            prev = 0;
            continue;
        }
        if (Py_UNICODE_ISALNUM(ch)) buf[len++] = ch;
        prev = ch;
    }
    if (flush_clause(found, hashes, buf, len, utf8, min_clause, (uint32_t)seed) < 0) goto done;
    result = PyTuple_Pack(2, found, hashes);

done:
    Py_XDECREF(found);
    Py_XDECREF(hashes);
    PyMem_Free(buf);
    PyMem_Free(utf8);
    return result;
}

/* str.isalnum of each BMP code point, a bit each (filled when the module loads):
 * Py_UNICODE_ISALNUM looks a character up in up to four Unicode tables. */
static uint8_t ALNUM_BMP[0x10000 / 8];

static void init_alnum(void) {
    for (Py_UCS4 c = 0; c < 0x10000; c++)
        if (Py_UNICODE_ISALNUM(c)) ALNUM_BMP[c >> 3] |= (uint8_t)(1u << (c & 7));
}

static inline int is_alnum(Py_UCS4 c) {
    return c < 0x10000 ? (ALNUM_BMP[c >> 3] >> (c & 7)) & 1 : Py_UNICODE_ISALNUM(c);
}

/* Ascending order of uint32 values (qsort). */
static int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* mmh3.hash (x86_32, unsigned) of the UTF-8 bytes of prefix + chars[0:len] + suffix
 * (prefix and suffix: one ASCII character or 0 for none). */
static uint32_t edge_hash(const Py_UCS4 *chars, Py_ssize_t len, char prefix, char suffix,
                          unsigned char *utf8, uint32_t seed) {
    Py_ssize_t size = 0;
    if (prefix) utf8[size++] = (unsigned char)prefix;
    for (Py_ssize_t i = 0; i < len; i++) size += put_utf8(utf8 + size, chars[i]);
    if (suffix) utf8[size++] = (unsigned char)suffix;
    return murmur3_32(utf8, size, seed);
}

/* put_utf8 for a buffer with 4 bytes of room beyond the character: a character of
 * U+0800..U+FFFF (a CJK letter: most of a Chinese body's) in one 4-byte store of its three
 * bytes, the fourth overwritten by what follows. */
static inline Py_ssize_t put_utf8_padded(unsigned char *out, uint32_t cp) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (cp - 0x800 < 0x10000 - 0x800) {
        uint32_t bytes = (0xE0 | (cp >> 12)) | (0x80 | ((cp >> 6) & 0x3F)) << 8 |
                         (0x80 | (cp & 0x3F)) << 16;
        memcpy(out, &bytes, 4);
        return 3;
    }
#endif
    return put_utf8(out, cp);
}

/* --- quotations (features version 7; boilerplate.quoted_keys_py is the reference) ---
 * A clause is quoted when one of its letters is inside quotation marks, or when it is
 * attributed (led by 据 or "according to", or after a clause of its sentence ending
 * with an attribution verb). clause_keys tracks this in its own walk over the text and
 * hands back the bits of its keys whose clause is quoted: a second walk over every
 * character cost about as much as the first (features version 7's +43k an article). */

#define MAX_QUOTE 500 /* characters: an opening mark never closed ends its quote here */

static inline int quote_opens(Py_UCS4 c) {
    return c == 0x201C || c == 0x300C || c == 0x300E || c == 0x2018; /* “ 「 『 ‘ */
}

static inline int quote_closes(Py_UCS4 c) {
    return c == 0x201D || c == 0x300D || c == 0x300F || c == 0x2019; /* ” 」 』 ’ */
}

/* A cue as the UTF-8 bytes of its letters: the walk keeps each clause's letters as UTF-8
 * only, and a byte match of a whole character's bytes starts at a character's start
 * (UTF-8 never begins a character with a continuation byte), so matching the bytes is
 * matching the letters. boilerplate.QUOTE_LEADS and QUOTE_ENDS. */
typedef struct {
    const char *bytes;
    Py_ssize_t size;
} Cue;
#define CUE(s) {s, sizeof(s) - 1}
static const Cue CUE_LEADS[] = {CUE("\xe6\x8d\xae") /* 据 */, CUE("accordingto")};
static const Cue CUE_ENDS[] = {
    CUE("\xe8\xa1\xa8\xe7\xa4\xba") /* 表示 */, CUE("\xe7\xa7\xb0") /* 称 */,
    CUE("\xe8\xaf\xb4") /* 说 */, CUE("\xe6\x8c\x87\xe5\x87\xba") /* 指出 */,
    CUE("\xe9\x80\x9a\xe6\x8a\xa5") /* 通报 */, CUE("\xe4\xbb\x8b\xe7\xbb\x8d") /* 介绍 */,
    CUE("said"), CUE("says")};
#undef CUE

/* Does the clause utf8[0:size] begin (at_end 0) or end (1) with one of the cues? */
static int clause_cued(const unsigned char *utf8, Py_ssize_t size, const Cue *cues,
                       size_t n_cues, int at_end) {
    for (size_t c = 0; c < n_cues; c++) {
        Py_ssize_t m = cues[c].size;
        if (m <= size && !memcmp(at_end ? utf8 + size - m : utf8, cues[c].bytes, (size_t)m))
            return 1;
    }
    return 0;
}

/* What clause_keys' scan of a text gives: the clause hashes (found), the key clauses'
 * keys, the letters and digits of the short text, the keys of the quoted key clauses. */
typedef struct {
    Py_UCS4 *letters;    /* room for every character of the text */
    unsigned char *utf8; /* room for 4 bytes a character, and 8 more */
    uint64_t *found;
    uint32_t *keys;
    uint32_t *quoted;    /* the keys of the clauses that are quoted (repeats kept) */
    Py_ssize_t min_clause, min_key_clause;
    uint32_t seed;
    Py_ssize_t count, key_count, letter_count, quoted_count;
} ClauseScan;

/* clause_keys' pass over the text, compiled once per string kind (a constant once
 * inlined, so reading a character is one load). A clause's letters and digits go to
 * its UTF-8 bytes as they are read (what boilerplate.clause_hash hashes), not to a
 * buffer of code points encoded at the clause's end.
 *
 * The quote state (boilerplate.quoted_keys_py's) rides along: a letter is quoted when it
 * lies at or before quote_end, the last index an open quotation mark still covers (its
 * index + MAX_QUOTE, moved on by one for each index the count skips: a NUL, the letter
 * of a literal "\n"; -1 when no mark is open). A deadline, not a count of the characters
 * since the mark: a letter (most characters) then costs one comparison, not an
 * increment and a test. The cues are read at a clause's end from its UTF-8 bytes. */
static inline __attribute__((always_inline)) void
scan_clause_keys(int kind, const void *data, Py_ssize_t n, ClauseScan *scan) {
    Py_UCS4 *letters = scan->letters;
    unsigned char *utf8 = scan->utf8;
    Py_ssize_t len = 0, size = 0, count = 0, key_count = 0, letter_count = 0, quoted_count = 0;
    Py_ssize_t quote_end = -1;
    int quoted = 0, /* a letter of this clause is inside quotation marks */
        cue = 0;    /* the clauses after an attributing one, to the sentence's end */
    Py_UCS4 prev = 0; /* the last character that is not NUL */
    for (Py_ssize_t i = 0; i <= n; i++) {
        int cut = i == n, sentence_end = 0;
        Py_UCS4 ch = 0;
        if (!cut) {
            ch = PyUnicode_READ(kind, data, i);
            if (ch < 0x10000 && (ALNUM_BMP[ch >> 3] >> (ch & 7)) & 1) {
                /* most characters: a letter or digit is never a break (nor NUL) */
                size += put_utf8_padded(utf8 + size, ch);
                len++;
                letters[letter_count++] = ch;
                quoted |= i <= quote_end;
                prev = ch;
                continue;
            }
            if (ch == 0) {
                if (i <= quote_end) quote_end++; /* a NUL is not counted */
                continue;
            }
            int in_quote = i <= quote_end;
            if (quote_opens(ch)) quote_end = i + MAX_QUOTE;
            else if (quote_closes(ch)) quote_end = -1;
            else if (ch == '"') quote_end = in_quote ? -1 : i + MAX_QUOTE;
            Py_UCS4 escaped;
            Py_ssize_t at = i;
            cut = clause_break_at(kind, data, &i, n, ch, prev, &escaped);
            if (escaped) {
                letters[letter_count++] = escaped; /* a break, and a letter */
                if (at <= quote_end) quote_end += i - at; /* the NULs and the letter skipped */
            }
            /* (every sentence end is a clause break) */
            sentence_end = escaped || ch == 0x3002 || ch == 0xFF01 || ch == 0xFF1F ||
                           ch == '!' || ch == '?' ||
                           (ch == '.' && (i + 1 >= n || PyUnicode_READ(kind, data, i + 1) == ' '));
        }
        if (cut) {
            if (len > 0) {
                uint64_t h = len >= scan->min_clause || len >= scan->min_key_clause
                                 ? murmur3_64(utf8, size, scan->seed) : 0;
                uint64_t counted = len >= scan->min_clause ? h : 0;
                if (counted) scan->found[count++] = counted;
                if (len >= scan->min_key_clause)
                    scan->keys[key_count++] = (uint32_t)(counted >> 32);
                int leads = clause_cued(utf8, size, CUE_LEADS, sizeof(CUE_LEADS) / sizeof(*CUE_LEADS), 0);
                if ((quoted || cue || leads) && len >= scan->min_key_clause)
                    scan->quoted[quoted_count++] = (uint32_t)(h >> 32);
                cue |= leads || clause_cued(utf8, size, CUE_ENDS, sizeof(CUE_ENDS) / sizeof(*CUE_ENDS), 1);
            }
            len = size = 0;
            quoted = 0;
            if (sentence_end) cue = 0;
            prev = 0; /* as in clauses(): the character before a break space */
            continue;
        }
        if (is_alnum(ch)) {
            size += put_utf8_padded(utf8 + size, ch);
            len++;
            letters[letter_count++] = ch;
            quoted |= i <= quote_end;
        }
        prev = ch;
    }
    scan->count = count, scan->key_count = key_count, scan->letter_count = letter_count;
    scan->quoted_count = quoted_count;
}

/* clause_keys(text, min_clause, seed, min_key_clause, query_keys, max_key_chars, edge,
 *             edge_seed) -> (hashes, short_text, keys)
 *
 * What the body's features need of its clauses (the clauses() split above), with no str
 * per clause:
 * - hashes: the distinct non-zero clause hashes (boilerplate.clause_hash of the clauses
 *   of at least min_clause letters and digits), a tuple in first-occurrence order: what a story
 *   counts (boilerplate.story_clauses) and what the boilerplate is looked for in;
 * - short_text: the text's letters and digits (str.isalnum) when there are at most
 *   max_key_chars of them, else "" (extraction.short_key);
 * - keys: keys.body_keys as sorted little-endian uint32 bytes: the top 32 bits of the
 *   hash of each clause of at least min_key_clause letters and digits and, when the
 *   short text has at least `edge` characters, mmh3 of "^" + its first `edge` and of
 *   its last `edge` + "$" (edge_seed); distinct, the query_keys smallest (at most 32);
 * - quoted: the bits of those keys (bit k: the k-th) that are the key of a quoted clause
 *   (boilerplate.quoted_keys_py: inside quotation marks, or attributed). */
static PyObject *clause_keys(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text;
    Py_ssize_t min_clause, min_key_clause, query_keys, max_key_chars, edge;
    unsigned long seed, edge_seed;
    if (!args_count("clause_keys", nargs, 8) || !arg_str("clause_keys", args, 0, &text) ||
        !arg_ssize(args[1], &min_clause) || !arg_ulong_mask(args[2], &seed) ||
        !arg_ssize(args[3], &min_key_clause) || !arg_ssize(args[4], &query_keys) ||
        !arg_ssize(args[5], &max_key_chars) || !arg_ssize(args[6], &edge) ||
        !arg_ulong_mask(args[7], &edge_seed))
        return NULL;
    if (query_keys < 0 || query_keys > 32 || max_key_chars < 0 || edge < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "query_keys must be in 0-32, max_key_chars and edge >= 0");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t room = n + 1;
    /* letters: every letter and digit of the text, for the short text (at most n: an
     * escaped letter takes two characters) */
    Py_UCS4 *letters = scratch_alloc(&scratch[S_LETTERS], (size_t)room * sizeof(Py_UCS4));
    unsigned char *utf8 = scratch_alloc(&scratch[S_UTF8], (size_t)room * 4 + 8);
    uint64_t *found = scratch_alloc(&scratch[S_FOUND], (size_t)room * sizeof(uint64_t));
    uint32_t *keys = scratch_alloc(&scratch[S_CLAUSE_KEYS], (size_t)(room + 2) * sizeof(uint32_t));
    uint32_t *quoted = scratch_alloc(&scratch[S_BUF], (size_t)room * sizeof(uint32_t));
    uint64_t *set = NULL;
    PyObject *hashes = NULL, *short_text = NULL, *key_bytes = NULL, *quoted_mask = NULL;
    PyObject *result = NULL;
    if (!letters || !utf8 || !found || !keys || !quoted) {
        PyErr_NoMemory();
        goto done;
    }
    ClauseScan scan = {letters, utf8, found, keys, quoted, min_clause, min_key_clause,
                       (uint32_t)seed, 0, 0, 0, 0};
    switch (kind) {
    case PyUnicode_1BYTE_KIND: scan_clause_keys(PyUnicode_1BYTE_KIND, data, n, &scan); break;
    case PyUnicode_2BYTE_KIND: scan_clause_keys(PyUnicode_2BYTE_KIND, data, n, &scan); break;
    default: scan_clause_keys(PyUnicode_4BYTE_KIND, data, n, &scan);
    }
    Py_ssize_t count = scan.count, key_count = scan.key_count, letter_count = scan.letter_count;
    Py_ssize_t quoted_count = scan.quoted_count;
    /* distinct hashes in first-occurrence order (open addressing, 0 = empty), moved to
     * the front of found[], then made into the tuple that boilerplate.Stripped holds */
    Py_ssize_t n_distinct = 0;
    if (count) {
        size_t size = 16;
        while (size < 2 * (size_t)count) size <<= 1;
        set = scratch_zeroed(&scratch[S_SET], size, sizeof(uint64_t));
        if (!set) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t c = 0; c < count; c++) {
            uint64_t h = found[c];
            size_t slot = (size_t)mix64(h) & (size - 1);
            while (set[slot] && set[slot] != h) slot = (slot + 1) & (size - 1);
            if (set[slot]) continue;
            set[slot] = h;
            found[n_distinct++] = h;
        }
    }
    hashes = PyTuple_New(n_distinct);
    if (!hashes) goto done;
    for (Py_ssize_t c = 0; c < n_distinct; c++) {
        PyObject *value = PyLong_FromUnsignedLongLong(found[c]);
        if (!value) goto done;
        PyTuple_SET_ITEM(hashes, c, value);
    }
    Py_ssize_t short_len = letter_count <= max_key_chars ? letter_count : 0;
    short_text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, letters, short_len);
    if (!short_text) goto done;
    if (short_len && short_len >= edge) {
        keys[key_count++] = edge_hash(letters, edge, '^', 0, utf8, (uint32_t)edge_seed);
        keys[key_count++] = edge_hash(letters + short_len - edge, edge, 0, '$', utf8,
                                      (uint32_t)edge_seed);
    }
    /* the query_keys smallest distinct keys, ascending: an insertion into a bounded
     * sorted list (a body has a few dozen keys; qsort's calls cost more) */
    Py_ssize_t distinct = 0;
    for (Py_ssize_t k = 0; k < key_count; k++) {
        uint32_t key = keys[k];
        if (distinct == query_keys && (distinct == 0 || key >= keys[distinct - 1])) continue;
        Py_ssize_t j = distinct;
        while (j > 0 && keys[j - 1] > key) j--;
        if (j > 0 && keys[j - 1] == key) continue;
        /* keys[0:distinct] is the list; keys[k] is read already, so the list may grow
         * into it (distinct <= k) */
        Py_ssize_t end = distinct < query_keys ? distinct++ : distinct - 1;
        memmove(keys + j + 1, keys + j, (size_t)(end - j) * sizeof(uint32_t));
        keys[j] = key;
    }
    key_bytes = PyBytes_FromStringAndSize(NULL, distinct * 4);
    if (!key_bytes) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(key_bytes);
    uint32_t mask = 0; /* by value, as quoted_keys_py: a kept key any quoted clause has */
    for (Py_ssize_t k = 0; k < distinct; k++) {
        out[4 * k] = (unsigned char)keys[k];
        out[4 * k + 1] = (unsigned char)(keys[k] >> 8);
        out[4 * k + 2] = (unsigned char)(keys[k] >> 16);
        out[4 * k + 3] = (unsigned char)(keys[k] >> 24);
        for (Py_ssize_t q = 0; q < quoted_count; q++)
            if (quoted[q] == keys[k]) {
                mask |= 1u << k;
                break;
            }
    }
    quoted_mask = PyLong_FromUnsignedLong(mask);
    if (!quoted_mask) goto done;
    result = PyTuple_Pack(4, hashes, short_text, key_bytes, quoted_mask);

done:
    Py_XDECREF(hashes);
    Py_XDECREF(short_text);
    Py_XDECREF(key_bytes);
    Py_XDECREF(quoted_mask);
    scratch_free(&scratch[S_LETTERS], letters);
    scratch_free(&scratch[S_UTF8], utf8);
    scratch_free(&scratch[S_FOUND], found);
    scratch_free(&scratch[S_CLAUSE_KEYS], keys);
    scratch_free(&scratch[S_BUF], quoted);
    scratch_free(&scratch[S_SET], set);
    return result;
}

/* Read the i-th little-endian uint32 of b. */
static inline uint32_t read_u32(const unsigned char *b, Py_ssize_t i) {
    b += 4 * i;
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
           ((uint32_t)b[3] << 24);
}

/* sketch.compare's counts of two sample lists (little-endian uint32 bytes, la and lb
 * values, at levels level_a and level_b): the samples of each side below the cut of the
 * larger level, and how many both have (a merge of the two sorted lists); only the side
 * at the smaller level is cut (as sketch.compare does). 0, or 1 when a side's samples
 * are not strictly increasing. Shared by overlap and weight_bound (_bound.h). */
static int overlap_counts(const unsigned char *pa, Py_ssize_t la, int level_a,
                          const unsigned char *pb, Py_ssize_t lb, int level_b,
                          Py_ssize_t counts[3]) {
    int level = level_a > level_b ? level_a : level_b;
    uint64_t cut = (uint64_t)1 << (32 - level);
    for (Py_ssize_t i = 1; i < la; i++)
        if (read_u32(pa, i) <= read_u32(pa, i - 1)) return 1;
    for (Py_ssize_t i = 1; i < lb; i++)
        if (read_u32(pb, i) <= read_u32(pb, i - 1)) return 1;
    Py_ssize_t na = 0, nb = 0;
    if (level_a == level) na = la;
    else while (na < la && read_u32(pa, na) < cut) na++;
    if (level_b == level) nb = lb;
    else while (nb < lb && read_u32(pb, nb) < cut) nb++;
    Py_ssize_t i = 0, j = 0, shared = 0;
    while (i < na && j < nb) {
        uint32_t x = read_u32(pa, i), y = read_u32(pb, j);
        shared += x == y;
        i += x <= y;
        j += y <= x;
    }
    counts[0] = shared, counts[1] = na, counts[2] = nb;
    return 0;
}

/* overlap(samples_a, level_a, samples_b, level_b) -> (shared, na, nb) or None
 *
 * overlap_counts's counts. None when a side's samples are not strictly increasing (a
 * sketch not made by Sketch.from_hashes): NumPy's intersect1d then decides. */
static PyObject *overlap(PyObject *self, PyObject *args) {
    Py_buffer a, b;
    int level_a, level_b;
    if (!PyArg_ParseTuple(args, "y*iy*i", &a, &level_a, &b, &level_b)) return NULL;
    PyObject *result = NULL;
    int level = level_a > level_b ? level_a : level_b;
    if (a.len % 4 || b.len % 4 || level < 0 || level > 32) {
        PyErr_SetString(PyExc_ValueError, "samples must be uint32 bytes, levels 0-32");
        goto done;
    }
    Py_ssize_t counts[3];
    if (overlap_counts(a.buf, a.len / 4, level_a, b.buf, b.len / 4, level_b, counts))
        result = Py_NewRef(Py_None);
    else
        result = Py_BuildValue("nnn", counts[0], counts[1], counts[2]);
done:
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return result;
}

/* normalize(text, table, pool) -> str, or None when the text takes the Python path
 *
 * normalize.normalize of a text every character of which the table describes: table
 * holds, per BMP code point, 0 (the Python path: markup, controls, combining marks,
 * characters NFKC may compose with a neighbour...), 0xFFFFFFFF (white space) or
 * start << 8 | length: the code points pool[start:start + length] it becomes (NFKC, then
 * lower case: normalize.simple_table builds it so that mapping each character alone is
 * what NFKC and str.lower give for the whole text). Runs of white space become one
 * space, none at either end. Characters outside the BMP take the Python path. */
/* normalize_text's loop over a text of one kind (a constant once inlined): 1 done, 0
 * for a character left to Python (the table's 0), -1 with an exception. *out grows. */
static inline __attribute__((always_inline)) int
normalize_chars(int kind, const void *data, Py_ssize_t n, const uint32_t *map,
                const uint32_t *cps, Py_ssize_t pool_size, Py_UCS4 **out, Py_ssize_t *cap,
                Py_ssize_t *length_out, uint32_t *all_out) {
    Py_UCS4 *to = *out;
    Py_ssize_t length = 0, room = *cap;
    uint32_t all = 0;
    int space = 0; /* white space seen since the last character written */
    /* room - length >= (n - i) + space + 1 when character i is read: a character that
     * maps to one writes at most itself and the space before it, so only the others
     * (a character that becomes several or none) test the room. *cap >= n + 1 to begin
     * with (normalize_text's n + 16). */
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t value = map[PyUnicode_READ(kind, data, i)];
        if (value == 0xFFFFFFFFu) {
            space = 1;
            continue;
        }
        if (value == 0) return 0;
        uint32_t start = value >> 8, count = value & 0xFF;
        if ((Py_ssize_t)start + count > pool_size) {
            PyErr_SetString(PyExc_ValueError, "table entry outside the pool");
            return -1;
        }
        if (count == 1) { /* most characters */
            if (space && length) to[length++] = ' ';
            space = 0;
            Py_UCS4 c = cps[start];
            to[length++] = c;
            all |= c;
            continue;
        }
        Py_ssize_t need = length + (Py_ssize_t)count + 1 + (n - i);
        if (need > room) {
            room = need > 2 * room ? need : 2 * room;
            Py_UCS4 *grown = PyMem_Realloc(to, (size_t)room * sizeof(Py_UCS4));
            if (!grown) {
                PyErr_NoMemory();
                return -1;
            }
            *out = to = grown;
            *cap = room;
        }
        if (space && length) to[length++] = ' ';
        space = 0;
        for (uint32_t j = 0; j < count; j++) {
            Py_UCS4 c = cps[start + j];
            to[length++] = c;
            all |= c;
        }
    }
    *length_out = length;
    *all_out = all;
    return 1;
}

static PyObject *normalize_text(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text;
    Py_buffer table, pool;
    if (!args_count("normalize", nargs, 3) || !arg_str("normalize", args, 0, &text) ||
        !arg_buffer(args[1], &table))
        return NULL;
    if (!arg_buffer(args[2], &pool)) {
        PyBuffer_Release(&table);
        return NULL;
    }
    PyObject *result = NULL;
    Py_UCS4 *out = NULL;
    if (table.len != 65536 * 4 || pool.len % 4) {
        PyErr_SetString(PyExc_ValueError, "table: 65,536 uint32; pool: uint32");
        goto done;
    }
    const uint32_t *map = table.buf, *cps = pool.buf;
    Py_ssize_t pool_size = pool.len / 4;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (kind == PyUnicode_4BYTE_KIND) { /* some character outside the BMP */
        result = Py_NewRef(Py_None);
        goto done;
    }
    /* One pass, into a buffer grown as needed (a character may become several): the
     * loop is compiled once per kind (normalize_chars), and the string is made in the
     * smallest kind that holds its characters (the OR of them all tells which). */
    Py_ssize_t cap = n + 16, length = 0;
    uint32_t all = 0;
    out = PyMem_Malloc((size_t)cap * sizeof(Py_UCS4));
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    int status = kind == PyUnicode_1BYTE_KIND
        ? normalize_chars(PyUnicode_1BYTE_KIND, data, n, map, cps, pool_size, &out, &cap,
                          &length, &all)
        : normalize_chars(PyUnicode_2BYTE_KIND, data, n, map, cps, pool_size, &out, &cap,
                          &length, &all);
    if (status < 0) goto done;
    if (status == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (all >= 0x10000) { /* the table maps to the BMP only; kept general anyway */
        result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, length);
        goto done;
    }
    result = PyUnicode_New(length, all < 0x80 ? 0x7F : all < 0x100 ? 0xFF : 0xFFFF);
    if (!result) goto done;
    if (PyUnicode_KIND(result) == PyUnicode_1BYTE_KIND) {
        Py_UCS1 *to = PyUnicode_1BYTE_DATA(result);
        for (Py_ssize_t i = 0; i < length; i++) to[i] = (Py_UCS1)out[i];
    } else {
        Py_UCS2 *to = PyUnicode_2BYTE_DATA(result);
        for (Py_ssize_t i = 0; i < length; i++) to[i] = (Py_UCS2)out[i];
    }
done:
    PyMem_Free(out);
    PyBuffer_Release(&table);
    PyBuffer_Release(&pool);
    return result;
}

/* BlockTable(layout): index.MemoryBlockIndex's buckets (per pigeonhole block, block
 * value -> the (item, fp) pairs under it, in the order they were added), held in C: a
 * lookup reads arrays of integers, not dicts of Python ints. layout: the (shift, width)
 * of each block. Items are ids (ints); the caller (MemoryBlockIndex) checks fingerprints
 * and keeps its own item -> fp map, so an item is added once and removed with the
 * fingerprint it was added with. query_union gives what the Python loop over dict
 * buckets gives (index._query_union), in its order. */
#define MAX_BLOCKS 16
typedef struct {
    PyObject *item; /* a reference held */
    uint64_t fp;
} BlockEntry;

typedef struct {
    BlockEntry *entries;
    Py_ssize_t len, cap;
} BlockBucket;

typedef struct { /* block value -> bucket: open addressing, bucket index + 1 (0 empty) */
    uint64_t *values;
    uint32_t *slots;
    size_t size, used;
    BlockBucket *buckets;
} BlockMap;

typedef struct {
    PyObject_HEAD
    int blocks;
    int shifts[MAX_BLOCKS];
    uint64_t masks[MAX_BLOCKS];
    BlockMap maps[MAX_BLOCKS];
} BlockTable;

/* a Python int as uint64 (PyLong_AsUnsignedLongLong's result and errors): an int of 0
 * to 64 bits is read digit by digit (the mask conversion, exact there), without the
 * byte-array detour PyLong_AsUnsignedLongLong takes for anything over 30 bits */
/* An exact int of 0 to 64 bits read from its digits (CPython 3.11's layout, 30-bit
 * digits): 1 with *out set, 0 for anything else (as_u64's general path). */
static inline int digits_u64(PyObject *value, uint64_t *out) {
#if PY_VERSION_HEX < 0x030C0000 && PyLong_SHIFT == 30
    if (!PyLong_CheckExact(value)) return 0;
    const digit *d = ((PyLongObject *)value)->ob_digit;
    switch (Py_SIZE(value)) {
    case 0: *out = 0; return 1;
    case 1: *out = d[0]; return 1;
    case 2: *out = (uint64_t)d[0] | (uint64_t)d[1] << 30; return 1;
    case 3:
        if (d[2] >> 4) return 0; /* over 64 bits */
        *out = (uint64_t)d[0] | (uint64_t)d[1] << 30 | (uint64_t)d[2] << 60;
        return 1;
    default: return 0; /* negative or wider */
    }
#else
    return 0;
#endif
}

static uint64_t as_u64(PyObject *value) {
    uint64_t read;
    if (digits_u64(value, &read)) return read;
    if (PyLong_Check(value) && _PyLong_Sign(value) >= 0 && _PyLong_NumBits(value) <= 64)
        return PyLong_AsUnsignedLongLongMask(value);
    return PyLong_AsUnsignedLongLong(value);
}

static void block_map_free(BlockMap *map) {
    for (size_t i = 0; i < map->used; i++) {
        for (Py_ssize_t e = 0; e < map->buckets[i].len; e++)
            Py_DECREF(map->buckets[i].entries[e].item);
        PyMem_Free(map->buckets[i].entries);
    }
    PyMem_Free(map->values);
    PyMem_Free(map->slots);
    PyMem_Free(map->buckets);
    memset(map, 0, sizeof(*map));
}

/* the bucket of a block value, NULL when there is none (create: a new, empty one; NULL
 * then means no memory) */
static BlockBucket *block_bucket(BlockMap *map, uint64_t value, int create) {
    if (map->size) {
        size_t j = (size_t)mix64(value) & (map->size - 1);
        while (map->slots[j]) {
            if (map->values[j] == value) return &map->buckets[map->slots[j] - 1];
            j = (j + 1) & (map->size - 1);
        }
    }
    if (!create) return NULL;
    if (2 * (map->used + 1) > map->size) { /* at most half full */
        size_t size = map->size ? 2 * map->size : 64;
        uint64_t *values = PyMem_Malloc(size * sizeof(uint64_t));
        uint32_t *slots = PyMem_Calloc(size, sizeof(uint32_t));
        BlockBucket *buckets = PyMem_Realloc(map->buckets,
                                             (size / 2) * sizeof(BlockBucket));
        if (!values || !slots || !buckets) {
            PyMem_Free(values);
            PyMem_Free(slots);
            if (buckets) map->buckets = buckets;
            return NULL;
        }
        map->buckets = buckets;
        for (size_t i = 0; i < map->size; i++) {
            if (!map->slots[i]) continue;
            size_t j = (size_t)mix64(map->values[i]) & (size - 1);
            while (slots[j]) j = (j + 1) & (size - 1);
            slots[j] = map->slots[i];
            values[j] = map->values[i];
        }
        PyMem_Free(map->values);
        PyMem_Free(map->slots);
        map->values = values;
        map->slots = slots;
        map->size = size;
    }
    size_t j = (size_t)mix64(value) & (map->size - 1);
    while (map->slots[j]) j = (j + 1) & (map->size - 1);
    map->values[j] = value;
    map->slots[j] = (uint32_t)++map->used;
    BlockBucket *bucket = &map->buckets[map->used - 1];
    bucket->entries = NULL;
    bucket->len = bucket->cap = 0;
    return bucket;
}

static int block_table_init(BlockTable *self, PyObject *args, PyObject *kwds) {
    PyObject *layout;
    if (!PyArg_ParseTuple(args, "O", &layout)) return -1;
    PyObject *seq = PySequence_Fast(layout, "layout must be a sequence");
    if (!seq) return -1;
    Py_ssize_t blocks = PySequence_Fast_GET_SIZE(seq);
    if (blocks < 1 || blocks > MAX_BLOCKS) {
        PyErr_Format(PyExc_ValueError, "a layout has 1 to %d blocks", MAX_BLOCKS);
        Py_DECREF(seq);
        return -1;
    }
    for (int b = 0; b < self->blocks; b++) block_map_free(&self->maps[b]);
    self->blocks = 0;
    for (Py_ssize_t b = 0; b < blocks; b++) {
        int shift, width;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, b), "ii", &shift, &width)) {
            Py_DECREF(seq);
            return -1;
        }
        if (shift < 0 || width < 1 || shift + width > 64) {
            PyErr_SetString(PyExc_ValueError, "a block must lie within 64 bits");
            Py_DECREF(seq);
            return -1;
        }
        self->shifts[b] = shift;
        self->masks[b] = width == 64 ? ~0ULL : (1ULL << width) - 1;
    }
    Py_DECREF(seq);
    self->blocks = (int)blocks;
    return 0;
}

static void block_table_dealloc(BlockTable *self) {
    for (int b = 0; b < self->blocks; b++) block_map_free(&self->maps[b]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* the fp argument of add and remove (after the item); 0, or -1 with an exception set */
static int fp_argument(PyObject *const *args, Py_ssize_t nargs, uint64_t *fp) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "expected two arguments: item, fp");
        return -1;
    }
    *fp = as_u64(args[1]);
    return *fp == (uint64_t)-1 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *block_table_add(BlockTable *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t fp;
    if (fp_argument(args, nargs, &fp) < 0) return NULL;
    for (int b = 0; b < self->blocks; b++) {
        uint64_t value = (fp >> self->shifts[b]) & self->masks[b];
        BlockBucket *bucket = block_bucket(&self->maps[b], value, 1);
        if (!bucket) return PyErr_NoMemory();
        if (bucket->len == bucket->cap) {
            Py_ssize_t cap = bucket->cap ? 2 * bucket->cap : 2;
            BlockEntry *entries = PyMem_Realloc(bucket->entries,
                                                (size_t)cap * sizeof(BlockEntry));
            if (!entries) return PyErr_NoMemory();
            bucket->entries = entries;
            bucket->cap = cap;
        }
        bucket->entries[bucket->len++] = (BlockEntry){Py_NewRef(args[0]), fp};
    }
    Py_RETURN_NONE;
}

/* remove(item, fp): the item out of fp's buckets, the others keeping their order (as a
 * dict's pop does) */
static PyObject *block_table_remove(BlockTable *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t fp;
    if (fp_argument(args, nargs, &fp) < 0) return NULL;
    for (int b = 0; b < self->blocks; b++) {
        uint64_t value = (fp >> self->shifts[b]) & self->masks[b];
        BlockBucket *bucket = block_bucket(&self->maps[b], value, 0);
        if (!bucket) continue;
        for (Py_ssize_t i = 0; i < bucket->len; i++) {
            PyObject *held = bucket->entries[i].item;
            int same = held == args[0] ? 1 : PyObject_RichCompareBool(held, args[0], Py_EQ);
            if (same < 0) return NULL;
            if (!same) continue;
            Py_DECREF(held);
            memmove(&bucket->entries[i], &bucket->entries[i + 1],
                    (size_t)(bucket->len - i - 1) * sizeof(BlockEntry));
            bucket->len--;
            break;
        }
    }
    Py_RETURN_NONE;
}

static PyObject *block_table_clear(BlockTable *self, PyObject *unused) {
    for (int b = 0; b < self->blocks; b++) block_map_free(&self->maps[b]);
    Py_RETURN_NONE;
}

/* query_union(fps, radius) -> {item: fp}: an item counts when it is within `radius` of
 * a fingerprint whose bucket holds it; items in the order the Python loop finds them
 * (fingerprints, then blocks, then bucket order) */
static PyObject *block_table_query_union(BlockTable *self, PyObject *const *args,
                                         Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "query_union(fps, radius)");
        return NULL;
    }
    long radius = PyLong_AsLong(args[1]);
    if (radius == -1 && PyErr_Occurred()) return NULL;
    PyObject *fps_seq = PySequence_Fast(args[0], "fps must be a sequence");
    if (!fps_seq) return NULL;
    PyObject *found = PyDict_New();
    if (!found) goto fail;
    /* a probe differs from its fingerprint in one block only: its other blocks' buckets
     * were found already (the bucket last found in each block is kept) */
    uint64_t last_value[MAX_BLOCKS];
    BlockBucket *last_bucket[MAX_BLOCKS];
    int have_last[MAX_BLOCKS] = {0};
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fps_seq);
    for (Py_ssize_t f = 0; f < count; f++) {
        PyObject *fp_obj = PySequence_Fast_GET_ITEM(fps_seq, f);
        PyObject *as_int = PyLong_CheckExact(fp_obj) ? Py_NewRef(fp_obj)
                                                    : PyNumber_Index(fp_obj); /* NumPy ints */
        uint64_t fp = as_int ? as_u64(as_int) : 0;
        Py_XDECREF(as_int);
        if (!as_int || (fp == (uint64_t)-1 && PyErr_Occurred())) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError,
                         "fingerprint must be an unsigned 64-bit integer, not %R", fp_obj);
            goto fail;
        }
        for (int b = 0; b < self->blocks; b++) {
            uint64_t value = (fp >> self->shifts[b]) & self->masks[b];
            if (!have_last[b] || last_value[b] != value) {
                have_last[b] = 1;
                last_value[b] = value;
                last_bucket[b] = block_bucket(&self->maps[b], value, 0);
            }
            BlockBucket *bucket = last_bucket[b];
            if (!bucket) continue;
            for (Py_ssize_t i = 0; i < bucket->len; i++) {
                const BlockEntry *entry = &bucket->entries[i];
                if (__builtin_popcountll(fp ^ entry->fp) > radius) continue;
                PyObject *other = PyLong_FromUnsignedLongLong(entry->fp);
                PyObject *kept = other ? PyDict_SetDefault(found, entry->item, other) : NULL;
                Py_XDECREF(other);
                if (!kept) goto fail;
            }
        }
    }
    Py_DECREF(fps_seq);
    return found;

fail:
    Py_DECREF(fps_seq);
    Py_XDECREF(found);
    return NULL;
}

static PyMethodDef block_table_methods[] = {
    {"add", (PyCFunction)(void (*)(void))block_table_add, METH_FASTCALL,
     "add(item, fp): the item into fp's bucket of every block (after the others there)."},
    {"remove", (PyCFunction)(void (*)(void))block_table_remove, METH_FASTCALL,
     "remove(item, fp): the item out of fp's buckets."},
    {"clear", (PyCFunction)block_table_clear, METH_NOARGS, "Every bucket emptied."},
    {"query_union", (PyCFunction)(void (*)(void))block_table_query_union, METH_FASTCALL,
     "query_union(fps, radius) -> {item: fp} (index.MemoryBlockIndex.query_union)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject BlockTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fingerprints.rule._kernel.BlockTable",
    .tp_basicsize = sizeof(BlockTable),
    .tp_dealloc = (destructor)block_table_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The buckets of a memory block index (index.MemoryBlockIndex), in C.",
    .tp_init = (initproc)block_table_init,
    .tp_new = PyType_GenericNew,
    .tp_methods = block_table_methods,
};

/* observe(slots, hashes, slots_log2, min_docs) -> [promoted clause hashes]: one story's
 * clauses counted in a slot table (boilerplate.MemoryCounter.observe, the arithmetic of
 * RedisCounter's script). slots: a writable buffer of 2**slots_log2 uint32 slots, each
 * check << 16 | count. A clause's slot is its low slots_log2 bits, its check the top 16
 * bits of its 64-bit hash (1 when those are 0): an empty slot takes it, the same check
 * counts up (to 0xFFFF), another check counts the holder down and takes the slot when
 * that reaches 0. A clause is promoted when its count reaches min_docs just now. */
static PyObject *observe(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    PyObject *hashes;
    int slots_log2, min_docs;
    if (!args_count("observe", nargs, 4) || !arg_int(args[2], &slots_log2) ||
        !arg_int(args[3], &min_docs) || !arg_writable(args[0], &view))
        return NULL;
    hashes = args[1];
    PyObject *promoted = NULL, *seq = NULL;
    if (slots_log2 < 1 || slots_log2 > 30 ||
        view.len != (Py_ssize_t)(4 * ((size_t)1 << slots_log2))) {
        PyErr_SetString(PyExc_ValueError, "slots must hold 2**slots_log2 uint32 values");
        goto done;
    }
    seq = PySequence_Fast(hashes, "hashes must be a sequence");
    if (!seq) goto done;
    promoted = PyList_New(0);
    if (!promoted) goto done;
    uint32_t *slots = view.buf;
    uint64_t mask = ((uint64_t)1 << slots_log2) - 1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    /* every clause's slot requested first: the table is megabytes, a slot a cache miss */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        uint64_t clause;
        if (!digits_u64(item, &clause)) {
            if (!PyLong_Check(item)) continue;
            clause = PyLong_AsUnsignedLongLongMask(item);
        }
        __builtin_prefetch(&slots[clause & mask], 1);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        uint64_t clause = as_u64(item);
        if (clause == (uint64_t)-1 && PyErr_Occurred()) {
            Py_CLEAR(promoted);
            goto done;
        }
        uint32_t check = (uint32_t)(clause >> 48) & 0xFFFF;
        if (!check) check = 1;
        uint32_t *slot = &slots[clause & mask];
        uint32_t value = *slot, count = value & 0xFFFF, updated;
        if (count == 0) updated = check << 16 | 1;
        else if (value >> 16 == check) updated = count == 0xFFFF ? value : value + 1;
        else updated = count == 1 ? (check << 16 | 1) : value - 1;
        *slot = updated;
        if (updated >> 16 == check && (int)(updated & 0xFFFF) == min_docs &&
            PyList_Append(promoted, item) < 0) {
            Py_CLEAR(promoted);
            goto done;
        }
    }

done:
    Py_XDECREF(seq);
    PyBuffer_Release(&view);
    return promoted;
}

/* rebuild(body, boilerplate, min_clause, seed) -> str: boilerplate._rebuild. The body is
 * cut into pieces at the matches of boilerplate._BREAK (runs of clause punctuation, a
 * literal backslash-n or backslash-r, a space between two CJK characters); a piece whose
 * letters and digits (>= min_clause of them) hash into `boilerplate` (a set of ints) is
 * removed, and so is a short non-empty piece right before or after a removed one. The
 * break after a removed piece, and a space break, become a space; the result's white
 * space is collapsed as " ".join(text.split()). The body itself comes back when no
 * piece is removed. */
static PyObject *rebuild(PyObject *self, PyObject *args) {
    PyObject *body, *boilerplate;
    Py_ssize_t min_clause;
    unsigned long seed;
    if (!PyArg_ParseTuple(args, "UOnk", &body, &boilerplate, &min_clause, &seed)) return NULL;
    if (!PyAnySet_Check(boilerplate)) {
        PyErr_SetString(PyExc_TypeError, "boilerplate must be a set or frozenset");
        return NULL;
    }
    int kind = PyUnicode_KIND(body);
    const void *data = PyUnicode_DATA(body);
    Py_ssize_t n = PyUnicode_GET_LENGTH(body);
    /* breaks: [bstart[j], bend[j]); piece j runs from bend[j-1] (0) to bstart[j] (n) */
    Py_ssize_t *bstart = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *bend = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    Py_UCS4 *key = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_UCS4));
    Py_UCS4 *out = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_UCS4));
    unsigned char *utf8 = PyMem_Malloc((size_t)(n ? n : 1) * 4);
    char *removed = PyMem_Malloc((size_t)(n + 1));
    char *drop = PyMem_Malloc((size_t)(n + 1));
    Py_ssize_t *key_len = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    PyObject *result = NULL;
    if (!bstart || !bend || !key || !out || !utf8 || !removed || !drop || !key_len) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t breaks = 0;
    for (Py_ssize_t i = 0; i < n;) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        Py_ssize_t end = i;
        if (is_clause_break(ch)) {
            end = i + 1;
            while (end < n && is_clause_break(PyUnicode_READ(kind, data, end))) end++;
        } else if (ch == '\\' && i + 1 < n) {
            Py_UCS4 next = PyUnicode_READ(kind, data, i + 1);
            if (next == 'n' || next == 'r') end = i + 2;
        } else if (ch == ' ' && i > 0 && i + 1 < n &&
                   is_cjk(PyUnicode_READ(kind, data, i - 1)) &&
                   is_cjk(PyUnicode_READ(kind, data, i + 1))) {
            end = i + 1;
        }
        if (end > i) {
            bstart[breaks] = i;
            bend[breaks++] = end;
            i = end;
        } else {
            i++;
        }
    }
    Py_ssize_t pieces = breaks + 1;
    int any = 0;
    for (Py_ssize_t p = 0; p < pieces; p++) {
        Py_ssize_t from = p ? bend[p - 1] : 0, to = p < breaks ? bstart[p] : n, len = 0;
        for (Py_ssize_t i = from; i < to; i++) {
            Py_UCS4 ch = PyUnicode_READ(kind, data, i);
            if (is_alnum(ch)) key[len++] = ch; /* the table: four Unicode lookups a character */
        }
        key_len[p] = len;
        removed[p] = 0;
        if (len >= min_clause) {
            PyObject *h = PyLong_FromUnsignedLongLong(
                clause_key_hash(key, len, utf8, (uint32_t)seed));
            if (!h) goto done;
            int in = PySet_Contains(boilerplate, h);
            Py_DECREF(h);
            if (in < 0) goto done;
            removed[p] = (char)in;
            any |= in;
        }
    }
    if (!any) {
        result = Py_NewRef(body);
        goto done;
    }
    for (Py_ssize_t p = 0; p < pieces; p++)
        drop[p] = removed[p] || (key_len[p] > 0 && key_len[p] < min_clause &&
                                 ((p > 0 && removed[p - 1]) ||
                                  (p + 1 < pieces && removed[p + 1])));
    /* the kept text, its white space collapsed on the way (str.split semantics) */
    Py_ssize_t size = 0;
    int pending_space = 0;
#define EMIT(c)                                                                        \
    do {                                                                               \
        Py_UCS4 c_ = (c); /* no white space above U+3000: a CJK letter is not looked up */ \
        if (c_ <= 0x3000 && Py_UNICODE_ISSPACE(c_)) {                                  \
            pending_space = size > 0;                                                  \
        } else {                                                                       \
            if (pending_space) out[size++] = ' ';                                      \
            pending_space = 0;                                                         \
            out[size++] = c_;                                                          \
        }                                                                              \
    } while (0)
    for (Py_ssize_t p = 0; p < pieces; p++) {
        Py_ssize_t from = p ? bend[p - 1] : 0, to = p < breaks ? bstart[p] : n;
        if (!drop[p])
            for (Py_ssize_t i = from; i < to; i++) EMIT(PyUnicode_READ(kind, data, i));
        if (p < breaks) {
            int space = drop[p] || (bend[p] - bstart[p] == 1 &&
                                    PyUnicode_READ(kind, data, bstart[p]) == ' ');
            if (space) EMIT(' ');
            else
                for (Py_ssize_t i = bstart[p]; i < bend[p]; i++)
                    EMIT(PyUnicode_READ(kind, data, i));
        }
    }
#undef EMIT
    result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, size);

done:
    PyMem_Free(bstart);
    PyMem_Free(bend);
    PyMem_Free(key);
    PyMem_Free(out);
    PyMem_Free(utf8);
    PyMem_Free(removed);
    PyMem_Free(drop);
    PyMem_Free(key_len);
    return result;
}

/* probes(fp, weak_bits, block_of, probe_bits) -> tuple: probes._probes. weak_bits:
 * bit positions, least confident first; block_of: 64 bytes, the pigeonhole block of each
 * bit position. Per block (in order), its first probe_bits weak bits, and fp with every
 * non-empty subset of them flipped, subsets in itertools.combinations order (by size,
 * then lexicographically). */
static PyObject *probes(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    unsigned long long fp;
    Py_buffer weak, block_of;
    int probe_bits;
    if (!args_count("probes", nargs, 4) || !arg_ull_mask(args[0], &fp) ||
        !arg_int(args[3], &probe_bits) || !arg_buffer(args[1], &weak))
        return NULL;
    if (!arg_buffer(args[2], &block_of)) {
        PyBuffer_Release(&weak);
        return NULL;
    }
    PyObject *result = NULL;
    if (block_of.len != 64 || probe_bits < 0 || probe_bits > 8) {
        PyErr_SetString(PyExc_ValueError, "block_of must have 64 entries, probe_bits 0-8");
        goto done;
    }
    const unsigned char *blocks = block_of.buf, *bits_in = weak.buf;
    int n_blocks = 0;
    for (int b = 0; b < 64; b++) {
        if (blocks[b] >= 64) {
            PyErr_SetString(PyExc_ValueError, "a block number must be below 64");
            goto done;
        }
        if (blocks[b] + 1 > n_blocks) n_blocks = blocks[b] + 1;
    }
    uint64_t chosen[64][8];
    int count[64] = {0};
    for (Py_ssize_t i = 0; i < weak.len; i++) {
        int bit = bits_in[i];
        if (bit >= 64) {
            PyErr_SetString(PyExc_ValueError, "a weak bit must be below 64");
            goto done;
        }
        int block = blocks[bit];
        if (count[block] < probe_bits) chosen[block][count[block]++] = 1ULL << bit;
    }
    Py_ssize_t total = 0;
    for (int block = 0; block < n_blocks; block++) total += (1 << count[block]) - 1;
    result = PyTuple_New(total);
    if (!result) goto done;
    Py_ssize_t at = 0;
    for (int block = 0; block < n_blocks; block++) {
        int m = count[block];
        for (int size = 1; size <= m; size++) {
            int idx[8];
            for (int i = 0; i < size; i++) idx[i] = i;
            for (;;) { /* one combination: idx[0] < ... < idx[size - 1] */
                uint64_t flip = 0;
                for (int i = 0; i < size; i++) flip += chosen[block][idx[i]]; /* sum(subset) */
                PyObject *value = PyLong_FromUnsignedLongLong(fp ^ flip);
                if (!value) {
                    Py_CLEAR(result);
                    goto done;
                }
                PyTuple_SET_ITEM(result, at++, value);
                int i = size - 1; /* the next combination, lexicographic */
                while (i >= 0 && idx[i] == m - size + i) i--;
                if (i < 0) break;
                idx[i]++;
                for (int j = i + 1; j < size; j++) idx[j] = idx[j - 1] + 1;
            }
        }
    }

done:
    PyBuffer_Release(&weak);
    PyBuffer_Release(&block_of);
    return result;
}

/* The contexts of two Features' numbers in context (little-endian uint32 values
 * context << 16 | value hash, a name's hash carrying 0x8000; each side keeps its
 * smallest values, a_count/b_count are how many it had), of one kind (names: the names,
 * else the numbers), below the common cut where both lists are complete: out[0] and
 * out[1] the contexts of each side, out[2] those both have, out[3] those of them with
 * no value in common (comparison.both_contexts, verify.number_conflicts). Returns -1
 * with an exception set on bad input. */
static int count_contexts(Py_buffer *a, Py_ssize_t a_count, Py_buffer *b, Py_ssize_t b_count,
                          int names, long out[4]) {
    int status = -1;
    uint32_t *va = NULL, *vb = NULL;
    out[0] = out[1] = out[2] = out[3] = 0;
    if (a->len % 4 || b->len % 4) {
        PyErr_SetString(PyExc_ValueError, "numbers must be whole uint32 values");
        goto done;
    }
    Py_ssize_t na = a->len / 4, nb = b->len / 4;
    if (!na || !nb) {
        status = 0;
        goto done;
    }
    va = PyMem_Malloc((size_t)na * sizeof(uint32_t));
    vb = PyMem_Malloc((size_t)nb * sizeof(uint32_t));
    if (!va || !vb) {
        PyErr_NoMemory();
        goto done;
    }
    const unsigned char *pa = a->buf, *pb = b->buf;
    for (Py_ssize_t i = 0; i < na; i++)
        va[i] = (uint32_t)pa[4 * i] | (uint32_t)pa[4 * i + 1] << 8 |
                (uint32_t)pa[4 * i + 2] << 16 | (uint32_t)pa[4 * i + 3] << 24;
    for (Py_ssize_t i = 0; i < nb; i++)
        vb[i] = (uint32_t)pb[4 * i] | (uint32_t)pb[4 * i + 1] << 8 |
                (uint32_t)pb[4 * i + 2] << 16 | (uint32_t)pb[4 * i + 3] << 24;
    /* a truncated side may have lost values: compare whole contexts below the cut only */
    const uint64_t full = 0xFFFFFFFFULL;
    uint64_t cut_a = a_count > na ? va[na - 1] : full, cut_b = b_count > nb ? vb[nb - 1] : full;
    uint64_t cut = cut_a < cut_b ? cut_a : cut_b;
    uint64_t limit = cut != full ? (cut >> 16) << 16 : full + 1;
    Py_ssize_t ka = 0, kb = 0;
    for (Py_ssize_t i = 0; i < na; i++)
        if (va[i] < limit && ((va[i] & 0x8000) != 0) == names) va[ka++] = va[i];
    for (Py_ssize_t i = 0; i < nb; i++)
        if (vb[i] < limit && ((vb[i] & 0x8000) != 0) == names) vb[kb++] = vb[i];
    int sorted = 1; /* as extraction stores them: then one merge of the two lists */
    for (Py_ssize_t i = 1; i < ka && sorted; i++) sorted = va[i - 1] < va[i];
    for (Py_ssize_t i = 1; i < kb && sorted; i++) sorted = vb[i - 1] < vb[i];
    if (sorted) {
        Py_ssize_t i = 0, j = 0;
        for (Py_ssize_t x = 0; x < ka; x++) out[0] += !x || (va[x] >> 16) != (va[x - 1] >> 16);
        for (Py_ssize_t x = 0; x < kb; x++) out[1] += !x || (vb[x] >> 16) != (vb[x - 1] >> 16);
        while (i < ka && j < kb) {
            uint32_t ca = va[i] >> 16, cb = vb[j] >> 16;
            if (ca != cb) { /* skip the smaller context's values */
                if (ca < cb) while (i < ka && (va[i] >> 16) == ca) i++;
                else while (j < kb && (vb[j] >> 16) == cb) j++;
                continue;
            }
            int same = 0; /* one context on both sides: a value in common? */
            while (i < ka && (va[i] >> 16) == ca && j < kb && (vb[j] >> 16) == ca) {
                if (va[i] == vb[j]) {
                    same = 1;
                    break;
                }
                if (va[i] < vb[j]) i++;
                else j++;
            }
            while (i < ka && (va[i] >> 16) == ca) i++;
            while (j < kb && (vb[j] >> 16) == ca) j++;
            out[2]++;
            out[3] += !same;
        }
        status = 0;
        goto done;
    }
    for (Py_ssize_t i = 0; i < kb; i++) { /* b's contexts, each once */
        int first = 1;
        for (Py_ssize_t j = 0; j < i && first; j++) first = (vb[j] >> 16) != (vb[i] >> 16);
        out[1] += first;
    }
    for (Py_ssize_t i = 0; i < ka; i++) {
        uint32_t ctx = va[i] >> 16;
        int first = 1;
        for (Py_ssize_t j = 0; j < i && first; j++) first = (va[j] >> 16) != ctx;
        if (!first) continue; /* each context once */
        out[0]++;
        int in_b = 0, same = 0;
        for (Py_ssize_t j = 0; j < kb; j++) {
            if ((vb[j] >> 16) != ctx) continue;
            in_b = 1;
            for (Py_ssize_t x = i; x < ka && !same; x++)
                same = (va[x] >> 16) == ctx && (va[x] & 0xFFFF) == (vb[j] & 0xFFFF);
        }
        out[2] += in_b;
        out[3] += in_b && !same;
    }
    status = 0;

done:
    PyMem_Free(va);
    PyMem_Free(vb);
    return status;
}

/* number_conflicts(a_numbers, a_count, b_numbers, b_count, names) -> (conflicts, shared):
 * verify.number_conflicts (count_contexts). */
static PyObject *number_conflicts(PyObject *self, PyObject *args) {
    Py_buffer a, b;
    Py_ssize_t a_count, b_count;
    int names;
    if (!PyArg_ParseTuple(args, "y*ny*np", &a, &a_count, &b, &b_count, &names)) return NULL;
    long out[4];
    PyObject *result = NULL;
    if (count_contexts(&a, a_count, &b, b_count, names, out) == 0)
        result = Py_BuildValue("(ll)", out[3], out[2]);
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return result;
}

/* contexts(a_numbers, a_count, b_numbers, b_count) -> the numbers' (a, b, shared,
 * conflicts) and the names' (comparison.both_contexts; count_contexts). */
static PyObject *contexts(PyObject *self, PyObject *args) {
    Py_buffer a, b;
    Py_ssize_t a_count, b_count;
    if (!PyArg_ParseTuple(args, "y*ny*n", &a, &a_count, &b, &b_count)) return NULL;
    long nums[4], names[4];
    PyObject *result = NULL;
    if (count_contexts(&a, a_count, &b, b_count, 0, nums) == 0 &&
        count_contexts(&a, a_count, &b, b_count, 1, names) == 0)
        result = Py_BuildValue("((llll)(llll))", nums[0], nums[1], nums[2], nums[3],
                               names[0], names[1], names[2], names[3]);
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return result;
}

/* --- the version-7 comparisons (comparison._names_and_quotes_py is the reference) ---
 * In C for the same reason as contexts(): the sets and dicts of the Python cost about
 * 40k instructions an article of the online pass, for at most 32 names and 16 keys a
 * side. */

/* Read a side's uint32 values (n of them) into out, sorted ascending: the stored lists
 * are sorted already (one pass finds it); the Python reads them as sets and dicts, so
 * the order of a list stored otherwise changes nothing, and it is sorted here. */
static void read_sorted_u32(const unsigned char *p, Py_ssize_t n, uint32_t *out) {
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t v = read_u32(p, i);
        Py_ssize_t j = i;
        while (j > 0 && out[j - 1] > v) { /* insertion: no move for a sorted list */
            out[j] = out[j - 1];
            j--;
        }
        out[j] = v;
    }
}

/* A side's names in context (sorted values context << 16 | kind << 14 | rarity << 10 |
 * hash; a context is value >> 14, the word before and the kind): the total rarity
 * (the largest of each context's names) per kind. */
static void name_weights(const uint32_t *v, Py_ssize_t n, long weight[4]) {
    for (Py_ssize_t i = 0; i < n;) {
        uint32_t context = v[i] >> 14, rarity = 0;
        for (; i < n && v[i] >> 14 == context; i++)
            if (((v[i] >> 10) & 15) > rarity) rarity = (v[i] >> 10) & 15;
        weight[context & 3] += rarity;
    }
}

static PyObject *share_or_none(long part, long whole) {
    if (!whole) Py_RETURN_NONE;
    double share = (double)part / (double)whole;
    return PyFloat_FromDouble(share < 1.0 ? share : 1.0);
}

/* comparison.quoted_shared: the share of the keys both sides have that are quoted on
 * both; -1 when none is shared. Keys are sorted and distinct as clause_keys gives
 * them (a merge); read as sets otherwise, as the Python does. */
static double quoted_share(const uint32_t *ka, Py_ssize_t na, uint64_t qa, const uint32_t *kb,
                           Py_ssize_t nb, uint64_t qb) {
    long shared = 0, quoted = 0;
    int sorted = 1;
    for (Py_ssize_t i = 1; i < na && sorted; i++) sorted = ka[i - 1] < ka[i];
    for (Py_ssize_t i = 1; i < nb && sorted; i++) sorted = kb[i - 1] < kb[i];
    if (sorted) {
        for (Py_ssize_t i = 0, j = 0; i < na && j < nb;) {
            if (ka[i] < kb[j]) i++;
            else if (ka[i] > kb[j]) j++;
            else {
                shared++;
                quoted += (qa >> i & 1) && (qb >> j & 1);
                i++, j++;
            }
        }
    } else {
        for (Py_ssize_t i = 0; i < na; i++) {
            int first = 1, in_b = 0, quoted_a = 0, quoted_b = 0;
            for (Py_ssize_t x = 0; x < i && first; x++) first = ka[x] != ka[i];
            if (!first) continue; /* each key once */
            for (Py_ssize_t x = i; x < na; x++) quoted_a |= ka[x] == ka[i] && (qa >> x & 1);
            for (Py_ssize_t j = 0; j < nb; j++)
                if (kb[j] == ka[i]) in_b = 1, quoted_b |= (int)(qb >> j & 1);
            shared += in_b;
            quoted += in_b && quoted_a && quoted_b;
        }
    }
    return shared ? (double)quoted / (double)shared : -1.0;
}

/* names_and_quotes(a_names, a_count, b_names, b_count, a_keys, a_quoted, b_keys,
 *                  b_quoted) -> comparison._NAME_FIELDS' values: names_kind_conflict,
 * names_kind_conflicts, names_{person,place,organisation,other}_conflict, quoted_shared
 * (None where missing): comparison._names_and_quotes_py. */
static PyObject *names_and_quotes(PyObject *self, PyObject *args) {
    Py_buffer a, b, keys_a, keys_b;
    Py_ssize_t a_count, b_count;
    unsigned long long qa, qb;
    if (!PyArg_ParseTuple(args, "y*ny*ny*Ky*K", &a, &a_count, &b, &b_count, &keys_a, &qa,
                          &keys_b, &qb))
        return NULL;
    PyObject *result = NULL, *values[7] = {NULL};
    uint32_t *va = NULL; /* va, vb, ka, kb in one allocation */
    Py_ssize_t na = a.len / 4, nb = b.len / 4, nka = keys_a.len / 4, nkb = keys_b.len / 4;
    if (a.len % 4 || b.len % 4 || keys_a.len % 4 || keys_b.len % 4) {
        PyErr_SetString(PyExc_ValueError, "names and keys must be whole uint32 values");
        goto done;
    }
    if (nka > 64 || nkb > 64) {
        PyErr_SetString(PyExc_ValueError, "at most 64 keys a side (the quoted bits)");
        goto done;
    }
    va = PyMem_Malloc((size_t)(na + nb + nka + nkb + 1) * sizeof(uint32_t));
    if (!va) {
        PyErr_NoMemory();
        goto done;
    }
    uint32_t *vb = va + na, *ka = vb + nb, *kb = ka + nka;
    for (Py_ssize_t i = 0; i < nka; i++) ka[i] = read_u32(keys_a.buf, i);
    for (Py_ssize_t i = 0; i < nkb; i++) kb[i] = read_u32(keys_b.buf, i);
    double quoted = nka && nkb ? quoted_share(ka, nka, qa, kb, nkb, qb) : -1.0;
    values[6] = quoted < 0 ? Py_NewRef(Py_None) : PyFloat_FromDouble(quoted);
    for (int k = 0; k < 6; k++) values[k] = Py_NewRef(Py_None);
    if (!values[6]) goto done;
    if (na && nb) {
        /* a truncated side may have lost names: whole contexts below the common cut
         * (of the last stored values, as _name_contexts reads them) only */
        const uint64_t full = 0xFFFFFFFFULL;
        uint64_t cut_a = a_count > na ? read_u32(a.buf, na - 1) : full;
        uint64_t cut_b = b_count > nb ? read_u32(b.buf, nb - 1) : full;
        uint64_t cut = cut_a < cut_b ? cut_a : cut_b;
        uint64_t below = cut != full ? (cut >> 14) << 14 : full + 1;
        read_sorted_u32(a.buf, na, va);
        read_sorted_u32(b.buf, nb, vb);
        while (na && va[na - 1] >= below) na--;
        while (nb && vb[nb - 1] >= below) nb--;
    }
    if (na && nb) {
        long weight_a[4] = {0}, weight_b[4] = {0}, conflict[4] = {0}, conflicts = 0;
        name_weights(va, na, weight_a);
        name_weights(vb, nb, weight_b);
        /* the contexts both sides have, one merge: one with no name in common
         * conflicts, weighing the larger rarity of its names */
        for (Py_ssize_t i = 0, j = 0; i < na && j < nb;) {
            uint32_t ca = va[i] >> 14, cb = vb[j] >> 14;
            if (ca != cb) { /* skip the smaller context's names */
                if (ca < cb) while (i < na && va[i] >> 14 == ca) i++;
                else while (j < nb && vb[j] >> 14 == cb) j++;
                continue;
            }
            Py_ssize_t ea = i, eb = j;
            uint32_t rarity = 0;
            for (; ea < na && va[ea] >> 14 == ca; ea++)
                if (((va[ea] >> 10) & 15) > rarity) rarity = (va[ea] >> 10) & 15;
            for (; eb < nb && vb[eb] >> 14 == ca; eb++)
                if (((vb[eb] >> 10) & 15) > rarity) rarity = (vb[eb] >> 10) & 15;
            int same = 0;
            for (Py_ssize_t x = i, y = j; x < ea && y < eb && !same;) {
                if (va[x] == vb[y]) same = 1;
                else if (va[x] < vb[y]) x++;
                else y++;
            }
            if (!same) {
                conflict[ca & 3] += rarity;
                conflicts++;
            }
            i = ea, j = eb;
        }
        long sum_a = weight_a[0] + weight_a[1] + weight_a[2] + weight_a[3];
        long sum_b = weight_b[0] + weight_b[1] + weight_b[2] + weight_b[3];
        long smaller = sum_a < sum_b ? sum_a : sum_b;
        if (!smaller) { /* as the Python's division would (rarities are 1-15) */
            PyErr_SetString(PyExc_ZeroDivisionError, "division by zero");
            goto done;
        }
        Py_SETREF(values[0], share_or_none(conflict[0] + conflict[1] + conflict[2] + conflict[3],
                                           smaller));
        Py_SETREF(values[1], PyFloat_FromDouble((double)conflicts));
        for (int k = 0; k < 4; k++)
            if (weight_a[k] && weight_b[k])
                Py_SETREF(values[2 + k], share_or_none(conflict[k], weight_a[k] < weight_b[k]
                                                                        ? weight_a[k] : weight_b[k]));
        for (int k = 0; k < 6; k++)
            if (!values[k]) goto done;
    }
    result = PyTuple_New(7);
    if (!result) goto done;
    for (int k = 0; k < 7; k++) {
        PyTuple_SET_ITEM(result, k, values[k]);
        values[k] = NULL;
    }

done:
    for (int k = 0; k < 7; k++) Py_XDECREF(values[k]);
    PyMem_Free(va);
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    PyBuffer_Release(&keys_a);
    PyBuffer_Release(&keys_b);
    return result;
}

/* The longest block a[alo:ahi] and b[blo:bhi] have in common, as difflib's
 * SequenceMatcher(None, a, b, autojunk=False).find_longest_match finds it: of the
 * longest, the one that ends first in a, then in b (with no junk and no popular
 * element its extensions add nothing). len[j + 1] holds the length of the common
 * suffix of a[..i] and b[..j] (the previous row, then this one). */
static void longest_match(const Py_UCS4 *a, const Py_UCS4 *b, Py_ssize_t alo, Py_ssize_t ahi,
                          Py_ssize_t blo, Py_ssize_t bhi, Py_ssize_t *len, Py_ssize_t *best) {
    best[0] = alo, best[1] = blo, best[2] = 0;
    for (Py_ssize_t j = blo; j <= bhi; j++) len[j] = 0;
    for (Py_ssize_t i = alo; i < ahi; i++) {
        /* right to left, so that len[j] is still the previous row's when len[j + 1] is set */
        for (Py_ssize_t j = bhi - 1; j >= blo; j--) {
            if (a[i] != b[j]) {
                len[j + 1] = 0;
                continue;
            }
            Py_ssize_t k = len[j + 1] = (j > blo ? len[j] : 0) + 1;
            if (k > best[2] || (k == best[2] && k && i - k + 1 + k - 1 == best[0] + best[2] - 1
                                && j - k + 1 < best[1])) {
                best[0] = i - k + 1, best[1] = j - k + 1, best[2] = k;
            }
        }
    }
}

/* difflib's SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks() of a[:la]
 * and b[:lb], adjacent blocks joined, without the sentinel: written to joined (3 a block,
 * room for min(la, lb) + 1 blocks), their count returned; -1 when out of memory (the
 * error set). */
static Py_ssize_t joined_blocks(const Py_UCS4 *a, Py_ssize_t la, const Py_UCS4 *b, Py_ssize_t lb,
                                Py_ssize_t *joined) {
    Py_ssize_t *len = PyMem_Malloc((size_t)(lb + 1) * sizeof(Py_ssize_t));
    /* at most min(la, lb) blocks, and as many ranges waiting */
    Py_ssize_t most = (la < lb ? la : lb) + 1;
    Py_ssize_t *blocks = PyMem_Malloc((size_t)most * 3 * sizeof(Py_ssize_t));
    Py_ssize_t *queue = PyMem_Malloc((size_t)most * 2 * 4 * sizeof(Py_ssize_t));
    Py_ssize_t count = -1;
    if (!len || !blocks || !queue) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t found = 0, waiting = 0;
    queue[0] = 0, queue[1] = la, queue[2] = 0, queue[3] = lb;
    waiting = 1;
    while (waiting) {
        waiting--;
        Py_ssize_t alo = queue[4 * waiting], ahi = queue[4 * waiting + 1];
        Py_ssize_t blo = queue[4 * waiting + 2], bhi = queue[4 * waiting + 3];
        Py_ssize_t best[3];
        longest_match(a, b, alo, ahi, blo, bhi, len, best);
        Py_ssize_t i = best[0], j = best[1], k = best[2];
        if (!k) continue;
        blocks[3 * found] = i, blocks[3 * found + 1] = j, blocks[3 * found + 2] = k;
        found++;
        if (alo < i && blo < j) {
            Py_ssize_t *q = queue + 4 * waiting++;
            q[0] = alo, q[1] = i, q[2] = blo, q[3] = j;
        }
        if (i + k < ahi && j + k < bhi) {
            Py_ssize_t *q = queue + 4 * waiting++;
            q[0] = i + k, q[1] = ahi, q[2] = j + k, q[3] = bhi;
        }
    }
    /* sorted by i (blocks never overlap in a, and their order in b is the same) */
    for (Py_ssize_t x = 1; x < found; x++) {
        Py_ssize_t t0 = blocks[3 * x], t1 = blocks[3 * x + 1], t2 = blocks[3 * x + 2];
        Py_ssize_t y = x - 1;
        while (y >= 0 && blocks[3 * y] > t0) {
            memcpy(blocks + 3 * (y + 1), blocks + 3 * y, 3 * sizeof(Py_ssize_t));
            y--;
        }
        blocks[3 * (y + 1)] = t0, blocks[3 * (y + 1) + 1] = t1, blocks[3 * (y + 1) + 2] = t2;
    }
    count = 0;
    Py_ssize_t i1 = 0, j1 = 0, k1 = 0;
    for (Py_ssize_t x = 0; x <= found; x++) {
        Py_ssize_t i2 = x < found ? blocks[3 * x] : la, j2 = x < found ? blocks[3 * x + 1] : lb;
        Py_ssize_t k2 = x < found ? blocks[3 * x + 2] : 0;
        if (x < found && i1 + k1 == i2 && j1 + k1 == j2) {
            k1 += k2;
            continue;
        }
        if (k1) {
            joined[3 * count] = i1, joined[3 * count + 1] = j1, joined[3 * count + 2] = k1;
            count++;
        }
        i1 = i2, j1 = j2, k1 = k2;
    }
done:
    PyMem_Free(len);
    PyMem_Free(blocks);
    PyMem_Free(queue);
    return count;
}

/* Two strings' characters and their joined matching blocks, the (la, lb, 0) sentinel
 * last (joined_blocks'); free with free_blocks. */
typedef struct {
    Py_UCS4 *a, *b;
    Py_ssize_t la, lb, count, *joined;
} Blocks;

static void free_blocks(Blocks *m) {
    PyMem_Free(m->a);
    PyMem_Free(m->b);
    PyMem_Free(m->joined);
}

/* 0, or -1 with the error set (m is then still freed by free_blocks) */
static int blocks_of(PyObject *sa, PyObject *sb, Blocks *m) {
    m->la = PyUnicode_GET_LENGTH(sa), m->lb = PyUnicode_GET_LENGTH(sb);
    m->a = PyUnicode_AsUCS4Copy(sa), m->b = PyUnicode_AsUCS4Copy(sb);
    Py_ssize_t most = (m->la < m->lb ? m->la : m->lb) + 1;
    m->joined = PyMem_Malloc((size_t)(most + 1) * 3 * sizeof(Py_ssize_t));
    if (!m->a || !m->b || !m->joined) {
        if (m->a && m->b) PyErr_NoMemory();
        return -1;
    }
    m->count = joined_blocks(m->a, m->la, m->b, m->lb, m->joined);
    if (m->count < 0) return -1;
    Py_ssize_t *end = m->joined + 3 * m->count;
    end[0] = m->la, end[1] = m->lb, end[2] = 0;
    return 0;
}

/* matching_blocks(a, b) -> ((i, j, size), ...): difflib's
 * SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks() of two strings
 * (adjacent blocks joined, the (len(a), len(b), 0) sentinel last): shorttext's edit
 * similarity and replaced stretches without difflib's dictionaries. */
static PyObject *matching_blocks(PyObject *self, PyObject *args) {
    PyObject *sa, *sb;
    if (!PyArg_ParseTuple(args, "UU", &sa, &sb)) return NULL;
    Blocks m = {0};
    PyObject *result = NULL;
    if (blocks_of(sa, sb, &m) < 0) goto done;
    result = PyList_New(m.count + 1);
    if (!result) goto done;
    for (Py_ssize_t x = 0; x <= m.count; x++) {
        const Py_ssize_t *block = m.joined + 3 * x;
        PyObject *item = Py_BuildValue("(nnn)", block[0], block[1], block[2]);
        if (!item) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, x, item);
    }
done:
    free_blocks(&m);
    return result;
}

/* 1 when text[lo:hi], widened to the words around it, holds a name of names (a set):
 * every substring of up to 4 characters that overlaps the stretch (shorttext._conflict's
 * loop); 0 when none; -1 on an error. */
static int holds_name(PyObject *text, Py_ssize_t length, Py_ssize_t lo, Py_ssize_t hi,
                      PyObject *names) {
    for (Py_ssize_t start = lo - 3 > 0 ? lo - 3 : 0; start < hi; start++) {
        Py_ssize_t first = start + 1 > lo + 1 ? start + 1 : lo + 1;
        Py_ssize_t last = start + 4 < length ? start + 4 : length;
        for (Py_ssize_t end = first; end <= last; end++) {
            PyObject *word = PyUnicode_Substring(text, start, end);
            if (!word) return -1;
            int found = PySet_Contains(names, word);
            Py_DECREF(word);
            if (found) return found;
        }
    }
    return 0;
}

/* compare_short(a, b, names) -> (similarity, conflict, number_replaced):
 * shorttext.compare_short_py of two non-empty keys: difflib's ratio over the matching
 * blocks, "number" or "name" when a replaced stretch (widened as shorttext._conflict
 * widens it) holds a digit or a word of the set names, else "", and whether a replaced
 * stretch itself holds a digit. */
static PyObject *compare_short(PyObject *self, PyObject *args) {
    PyObject *sa, *sb, *names;
    if (!PyArg_ParseTuple(args, "UUO!", &sa, &sb, &PyFrozenSet_Type, &names)) return NULL;
    Blocks m = {0};
    PyObject *result = NULL;
    if (blocks_of(sa, sb, &m) < 0) goto done;
    const Py_UCS4 *a = m.a, *b = m.b;
    const Py_ssize_t la = m.la, lb = m.lb, count = m.count, *joined = m.joined;
    Py_ssize_t matched = 0;
    for (Py_ssize_t x = 0; x < count; x++) matched += joined[3 * x + 2];
    Py_ssize_t total = la + lb;
    double similarity = total ? 2.0 * (double)matched / (double)total : 1.0;
    /* the replaced stretches: where both sides have something between two blocks */
    int number = 0;
    const char *kind = "";
    Py_ssize_t i = 0, j = 0;
    for (int pass = 0; pass < 2; pass++) {
        i = j = 0;
        for (Py_ssize_t x = 0; x <= count; x++) {
            Py_ssize_t ai = joined[3 * x], bj = joined[3 * x + 1], size = joined[3 * x + 2];
            if (i < ai && j < bj) {
                if (pass == 0) {
                    for (Py_ssize_t p = i; p < ai && !number; p++) number = Py_UNICODE_ISDIGIT(a[p]);
                    for (Py_ssize_t p = j; p < bj && !number; p++) number = Py_UNICODE_ISDIGIT(b[p]);
                } else {
                    const Py_UCS4 *sides[2] = {a, b};
                    PyObject *texts[2] = {sa, sb};
                    Py_ssize_t lengths[2] = {la, lb}, los[2] = {i, j}, his[2] = {ai, bj};
                    for (int side = 0; side < 2 && !*kind; side++) {
                        Py_ssize_t lo = los[side], hi = his[side], n = lengths[side];
                        Py_ssize_t from = lo - 1 > 0 ? lo - 1 : 0, to = hi + 1 < n ? hi + 1 : n;
                        for (Py_ssize_t p = from; p < to; p++) {
                            if (Py_UNICODE_ISDIGIT(sides[side][p])) {
                                kind = "number";
                                break;
                            }
                        }
                        if (*kind) break;
                        int found = holds_name(texts[side], n, lo, hi, names);
                        if (found < 0) goto done;
                        if (found) kind = "name";
                    }
                    if (*kind) break;
                }
            }
            i = ai + size, j = bj + size;
        }
    }
    result = Py_BuildValue("(dsO)", similarity, kind, number ? Py_True : Py_False);
done:
    free_blocks(&m);
    return result;
}

/* view's uint32 values, ascending and distinct, in out (room for all); their count */
static Py_ssize_t sorted_distinct(const Py_buffer *view, uint32_t *out) {
    Py_ssize_t n = view->len / 4, ascending = 1;
    memcpy(out, view->buf, (size_t)n * 4);
    for (Py_ssize_t x = 1; x < n && ascending; x++) ascending = out[x - 1] < out[x];
    if (ascending) return n;
    qsort(out, (size_t)n, 4, compare_u32);
    Py_ssize_t kept = 0;
    for (Py_ssize_t x = 0; x < n; x++)
        if (!kept || out[kept - 1] != out[x]) out[kept++] = out[x];
    return kept;
}

/* shared_keys(a, b) -> (distinct values both have, distinct values of a, of b) of two
 * uint32 arrays (comparison._shared_keys' sets), in any order. */
static PyObject *shared_keys(PyObject *self, PyObject *args) {
    Py_buffer a, b;
    if (!PyArg_ParseTuple(args, "y*y*", &a, &b)) return NULL;
    uint32_t *va = PyMem_Malloc((size_t)(a.len / 4 + 1) * 4);
    uint32_t *vb = PyMem_Malloc((size_t)(b.len / 4 + 1) * 4);
    PyObject *result = NULL;
    if (!va || !vb) {
        PyErr_NoMemory();
    } else {
        Py_ssize_t na = sorted_distinct(&a, va), nb = sorted_distinct(&b, vb), shared = 0;
        for (Py_ssize_t x = 0, y = 0; x < na && y < nb;) {
            if (va[x] < vb[y]) x++;
            else if (va[x] > vb[y]) y++;
            else shared++, x++, y++;
        }
        result = Py_BuildValue("(nnn)", shared, na, nb);
    }
    PyMem_Free(va);
    PyMem_Free(vb);
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return result;
}

/* letters_and_digits(text, most) -> str: the first `most` letters and digits
 * (str.isalnum) of text, what headline.text_key's regex leaves ([\W_]+ removed). */
static PyObject *letters_and_digits(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *text;
    Py_ssize_t most;
    if (!args_count("letters_and_digits", nargs, 2) ||
        !arg_str("letters_and_digits", args, 0, &text) || !arg_ssize(args[1], &most))
        return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (most > n) most = n;
    if (most < 0) most = 0;
    Py_UCS4 small[128];
    Py_UCS4 *buf = most <= 128 ? small : PyMem_Malloc((size_t)most * sizeof(Py_UCS4));
    if (!buf) return PyErr_NoMemory();
    Py_ssize_t len = 0;
    for (Py_ssize_t i = 0; i < n && len < most; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (is_alnum(ch)) buf[len++] = ch;
    }
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, len);
    if (buf != small) PyMem_Free(buf);
    return result;
}

/* --- the main body (fingerprints/rule/main_body.py) ------------------------------------- */

/* main_body's constants; kernel.MAIN_BODY gives them back so that a test holds them equal
 * to the Python's. The markers are literal code points (C11 U"" strings). */
#define MAX_CODES 32
#define MIN_CODE_DIGITS 7
#define MIN_CODE_CHARS 4
#define CODE_SEED 0xC0DE5
#define SHORT_BODY 60
#define MAX_CHROME_SHARE 0.5
#define MAX_CHROME_CLAUSE 60
#define LABEL_CHARS 8
#define REACH (LABEL_CHARS + MAX_CHROME_CLAUSE)
#define CHROME_WINDOW 600
static const uint32_t *const CHROME_MARKERS[] = {
    U"关注", U"点击", U"原标题", U"来源", U"作者", U"编辑", U"记者", U"转载", U"公众号",
    U"微信", U"订阅", U"置顶", U"星标", U"阅读", U"推荐", U"版权", U"声明", U"扫码",
    U"二维码", U"长按", U"分享", U"来自", U"摘要", U"导读", U"粉丝", U"回复", U"微博",
    U"广告", U"投稿", U"热线", U"侵权", U"免责",
    U"http", U"www", U".com", U".cn",
};
#define N_MARKERS ((int)(sizeof(CHROME_MARKERS) / sizeof(CHROME_MARKERS[0])))
/* MARKER_AT[c]: 1 + the index in MARKER_ORDER of the first marker starting with the
 * character c (the markers grouped by their first character, all in the BMP), 0 for none */
static uint8_t MARKER_AT[0x10000];
static uint8_t MARKER_ORDER[N_MARKERS];

static void init_markers(void) {
    int count = 0;
    for (int m = 0; m < N_MARKERS; m++) {
        uint32_t c = CHROME_MARKERS[m][0];
        if (MARKER_AT[c]) continue;
        MARKER_AT[c] = (uint8_t)(count + 1);
        for (int k = m; k < N_MARKERS; k++)
            if (CHROME_MARKERS[k][0] == c) MARKER_ORDER[count++] = (uint8_t)k;
    }
}

#define AT(i) PyUnicode_READ(kind, data, (i))

static inline int ascii_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }
static inline int ascii_letter(Py_UCS4 c) { return c >= 'a' && c <= 'z'; }
static inline int ascii_alnum(Py_UCS4 c) { return ascii_letter(c) || ascii_digit(c); }
static inline int code_separator(Py_UCS4 c) { return c == '-' || c == '=' || c == ' '; }

/* The ASCII characters of main_body._RUN's runs ([a-z0-9= -]), and which are digits */
enum { RUN_CHAR = 1, RUN_DIGIT = 2 };
static uint8_t RUN_CLASS[128];

static void init_run_class(void) {
    for (Py_UCS4 c = 0; c < 128; c++)
        RUN_CLASS[c] = (uint8_t)((ascii_alnum(c) || code_separator(c) ? RUN_CHAR : 0) |
                                 (ascii_digit(c) ? RUN_DIGIT : 0));
}

/* Does a chrome marker lie wholly within [lo, hi) of the text? (_MARKER.search) */
static int has_marker(int kind, const void *data, Py_ssize_t lo, Py_ssize_t hi) {
    for (Py_ssize_t i = lo; i < hi; i++) {
        Py_UCS4 c = AT(i);
        if (c >= 0x10000 || !MARKER_AT[c]) continue;
        for (int k = MARKER_AT[c] - 1; k < N_MARKERS; k++) {
            const uint32_t *marker = CHROME_MARKERS[MARKER_ORDER[k]];
            if (marker[0] != c) break;
            Py_ssize_t j = 1;
            while (marker[j] && i + j < hi && AT(i + j) == marker[j]) j++;
            if (!marker[j]) return 1;
        }
    }
    return 0;
}

/* Does the text at `at` start with the ASCII string s? */
static int starts_with(int kind, const void *data, Py_ssize_t n, Py_ssize_t at, const char *s) {
    for (; *s; s++, at++)
        if (at >= n || AT(at) != (Py_UCS4)(unsigned char)*s) return 0;
    return 1;
}

/* main_body._inside_address: back over printable ASCII from `at` (to a colon unless "//"
 * follows it), then _ADDRESS.match
 * there: https?:// or www. or [a-z0-9.-]+ then .com .cn .net or .org at a word boundary
 * (the regex backtracks over every dot of the run: any such dot will do). */
static int inside_address(int kind, const void *data, Py_ssize_t n, Py_ssize_t at) {
    Py_ssize_t lo = at;
    while (lo > 0 && AT(lo - 1) >= '!' && AT(lo - 1) <= '~' &&
           !(AT(lo - 1) == ':' && !starts_with(kind, data, n, lo, "//")))
        lo--; /* a colon ends the walk unless "://" follows ("来自:tieba.baidu.com/p/...") */
    if (starts_with(kind, data, n, lo, "http://") || starts_with(kind, data, n, lo, "https://") ||
        starts_with(kind, data, n, lo, "www."))
        return 1;
    static const char *const domains[] = {"com", "cn", "net", "org"};
    Py_ssize_t run = lo;
    while (run < n && (ascii_alnum(AT(run)) || AT(run) == '.' || AT(run) == '-')) run++;
    for (Py_ssize_t dot = lo + 1; dot < run; dot++) {
        if (AT(dot) != '.') continue;
        for (int d = 0; d < 4; d++) {
            if (!starts_with(kind, data, n, dot + 1, domains[d])) continue;
            Py_ssize_t after = dot + 1 + (Py_ssize_t)strlen(domains[d]);
            if (after == n || !(is_alnum(AT(after)) || AT(after) == '_')) return 1;
        }
    }
    return 0;
}

/* The UTF-8 bytes of text[lo:hi] into out (4 bytes a character); -1 at a surrogate. */
static Py_ssize_t utf8_of(int kind, const void *data, Py_ssize_t lo, Py_ssize_t hi,
                          unsigned char *out) {
    Py_ssize_t len = 0;
    for (Py_ssize_t i = lo; i < hi; i++) {
        Py_UCS4 c = AT(i);
        if (c >= 0xD800 && c <= 0xDFFF) return -1;
        len += put_utf8(out + len, c);
    }
    return len;
}

/* main_body._DATE.fullmatch of a code of ASCII digits: yyyymmdd[HH[MM[SS]]]. */
static int is_date(const unsigned char *c, Py_ssize_t len) {
    if (len != 8 && len != 10 && len != 12 && len != 14) return 0;
    if (!((c[0] == '1' && c[1] == '9') || (c[0] == '2' && c[1] == '0'))) return 0;
    if (c[4] > '1' || c[6] > '3') return 0;
    if (len >= 10 && c[8] > '2') return 0;
    if (len >= 12 && c[10] > '5') return 0;
    return len < 14 || c[12] <= '5';
}

typedef struct {
    uint32_t *values;
    Py_ssize_t len, cap;
} U32s;

static int push_u32(U32s *list, uint32_t value) {
    if (list->len == list->cap) {
        Py_ssize_t cap = list->cap ? 2 * list->cap : 64;
        uint32_t *grown = PyMem_Realloc(list->values, (size_t)cap * sizeof(uint32_t));
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        list->values = grown, list->cap = cap;
    }
    list->values[list->len++] = value;
    return 0;
}

/* The codes of one run (t: its L ASCII characters, at `first` in the text) as
 * main_body._CODE.finditer finds them, each packed with its context into `out`. A
 * digits match: a digit not after [a-z0-9], then MIN_CODE_DIGITS - 1 or more digits each
 * after at most one separator, not followed by [a-z0-9] (the regex gives back whole
 * separator-and-digit steps until that holds). Else a model match: a run of [a-z0-9-]
 * not after one, wholly, when a letter and a digit meet in it (at most a hyphen between). */
static int run_codes(PyObject *body, int kind, const void *data, Py_ssize_t n,
                     const unsigned char *t, Py_ssize_t L, Py_ssize_t first, unsigned char *code,
                     unsigned char *utf8, U32s *out) {
    Py_ssize_t p = 0;
    while (p < L) {
        Py_ssize_t end = -1;
        int digits = 0;
        if (ascii_digit(t[p]) && (p == 0 || !ascii_alnum(t[p - 1]))) {
            Py_ssize_t q = p + 1, cut = -1;
            int steps = 0;
            for (;;) {
                if (q + 1 < L && code_separator(t[q]) && ascii_digit(t[q + 1])) {
                    if (++steps >= MIN_CODE_DIGITS) cut = q; /* ending before it also matches */
                    q += 2;
                } else if (q < L && ascii_digit(t[q])) {
                    steps++;
                    q++;
                } else {
                    break;
                }
            }
            if (steps >= MIN_CODE_DIGITS - 1) {
                if (q == L || !ascii_alnum(t[q])) end = q;
                else if (cut >= 0) end = cut;
            }
            digits = end >= 0;
        }
        if (!digits && (ascii_alnum(t[p]) || t[p] == '-') &&
            (p == 0 || !(ascii_alnum(t[p - 1]) || t[p - 1] == '-'))) {
            Py_ssize_t r = p;
            while (r < L && (ascii_alnum(t[r]) || t[r] == '-')) r++;
            for (Py_ssize_t j = p; j + 1 < r && end < 0; j++) {
                unsigned char a = t[j], b = t[j + 1];
                if (b == '-') {
                    if (j + 2 >= r) break;
                    b = t[j + 2];
                }
                if ((ascii_letter(a) && ascii_digit(b)) || (ascii_digit(a) && ascii_letter(b)))
                    end = r;
            }
        }
        if (end < 0) {
            p++;
            continue;
        }
        Py_ssize_t size = 0;
        if (digits) {
            for (Py_ssize_t j = p; j < end; j++)
                if (ascii_digit(t[j])) code[size++] = t[j];
            if (is_date(code, size)) size = 0;
        } else {
            Py_ssize_t a = p, b = end;
            while (a < b && t[a] == '-') a++;
            while (b > a && t[b - 1] == '-') b--;
            /* a letter before a digit (main_body._LETTER_DIGIT), else a quantity */
            int letter_digit = 0;
            for (Py_ssize_t j = a; j + 1 < b && !letter_digit; j++)
                letter_digit = ascii_letter(t[j]) &&
                               (ascii_digit(t[j + 1]) ||
                                (t[j + 1] == '-' && j + 2 < b && ascii_digit(t[j + 2])));
            if (b - a >= MIN_CODE_CHARS && letter_digit) /* compared by its digits */
                for (Py_ssize_t j = a; j < b; j++)
                    if (ascii_digit(t[j])) code[size++] = t[j];
        }
        Py_ssize_t start = first + p;
        if (size && !inside_address(kind, data, n, start)) {
            Py_ssize_t lo = start >= 2 ? start - 2 : 0;
            Py_ssize_t len = utf8_of(kind, data, lo, start, utf8);
            if (len < 0) { /* a surrogate: raise what encoding the context raises */
                PyObject *context = PyUnicode_Substring(body, lo, start);
                if (context) {
                    PyObject *encoded = PyUnicode_AsUTF8String(context);
                    Py_XDECREF(encoded);
                    Py_DECREF(context);
                }
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "surrogate in a code's context");
                return -1;
            }
            uint32_t value = (murmur3_32(utf8, len, CODE_SEED) & 0xFFFF) << 16 |
                             (murmur3_32(code, size, CODE_SEED) & 0xFFFF);
            if (push_u32(out, value) < 0) return -1;
        }
        p = end;
    }
    return 0;
}

/* main_body.codes_in_context: the runs of [a-z0-9= -] from their first [a-z0-9], at least
 * four characters long (main_body._RUN), those shorter than MIN_CODE_DIGITS without a
 * letter skipped, and their codes (run_codes); the distinct values sorted, the smallest
 * MAX_CODES kept, as little-endian uint32 bytes. */
static PyObject *codes_of(PyObject *body, int kind, const void *data, Py_ssize_t n) {
    PyObject *result = NULL;
    U32s values = {NULL, 0, 0};
    unsigned char *run = PyMem_Malloc((size_t)(2 * n + 2));
    unsigned char utf8[8];
    if (!run) return PyErr_NoMemory();
    unsigned char *code = run + n + 1;
    Py_ssize_t i = 0;
    while (i < n) {
        /* the next stretch of run characters [from, i), with or without a digit: a loop of
         * its own per string kind (a body is mostly other characters, or words) */
        Py_ssize_t from = n;
        int seen = 0;
#define STRETCH(type)                                                                      \
    {                                                                                      \
        const type *chars = data;                                                          \
        while (i < n && (chars[i] >= 128 || !(RUN_CLASS[chars[i]] & RUN_CHAR))) i++;       \
        from = i;                                                                          \
        while (i < n && chars[i] < 128 && (RUN_CLASS[chars[i]] & RUN_CHAR))                \
            seen |= RUN_CLASS[chars[i++]];                                                 \
    }
        switch (kind) {
        case PyUnicode_1BYTE_KIND: STRETCH(Py_UCS1) break;
        case PyUnicode_2BYTE_KIND: STRETCH(Py_UCS2) break;
        default: STRETCH(Py_UCS4)
        }
#undef STRETCH
        if (!(seen & RUN_DIGIT)) continue; /* every code has a digit */
        Py_ssize_t first = from;
        while (!ascii_alnum(AT(first))) first++; /* the run starts at its first [a-z0-9] */
        /* a line break kept as "\\n" ("\\r", "\\t"): its letter is a run of its own */
        if (first > 0 && AT(first - 1) == '\\' &&
            (AT(first) == 'n' || AT(first) == 'r' || AT(first) == 't') && first + 1 < i &&
            ascii_alnum(AT(first + 1)))
            first++;
        Py_ssize_t L = i - first;
        if (L < 4) continue;
        int letter = 0;
        for (Py_ssize_t j = 0; j < L; j++) {
            run[j] = (unsigned char)AT(first + j);
            letter |= ascii_letter(run[j]);
        }
        if (L < MIN_CODE_DIGITS && !letter) continue; /* a short number: no code in it */
        if (run_codes(body, kind, data, n, run, L, first, code, utf8, &values) < 0) goto done;
    }
    uint32_t *tmp = PyMem_Malloc((size_t)(values.len ? values.len : 1) * sizeof(uint32_t));
    if (!tmp) {
        PyErr_NoMemory();
        goto done;
    }
    radix_sort_u32(values.values, tmp, values.len);
    PyMem_Free(tmp);
    Py_ssize_t kept = unique_sorted(values.values, values.len);
    if (kept > MAX_CODES) kept = MAX_CODES;
    result = PyBytes_FromStringAndSize(NULL, 4 * kept);
    if (!result) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    for (Py_ssize_t k = 0; k < kept; k++) {
        uint32_t v = values.values[k];
        out[4 * k] = v & 0xFF;
        out[4 * k + 1] = (v >> 8) & 0xFF;
        out[4 * k + 2] = (v >> 16) & 0xFF;
        out[4 * k + 3] = v >> 24;
    }

done:
    PyMem_Free(values.values);
    PyMem_Free(run);
    return result;
}

/* main_body._ENDS: a sentence's or a phrase's punctuation, white space (\s) or a backslash */
static inline int clause_end(Py_UCS4 c) {
    switch (c) {
    case 0x3002: case 0xFF01: case 0xFF1F: case '!': case '?': case 0xFF1B: case ';':
    case 0xFF0C: case ',': case 0xFF1A: case ':': case '\\':
        return 1;
    }
    return Py_UNICODE_ISSPACE(c);
}

/* The window text[base:base + len] read forwards (the lead) or backwards (the tail). */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t base, len;
    int backwards;
} Window;

static inline Py_UCS4 window_at(const Window *w, Py_ssize_t i) {
    return PyUnicode_READ(w->kind, w->data, w->backwards ? w->base + w->len - 1 - i : w->base + i);
}

/* The end of the clause from p: forwards main_body._CLAUSE (non-ends, then ends),
 * backwards _CLAUSE_REVERSED (ends, then non-ends). */
static Py_ssize_t next_clause(const Window *w, Py_ssize_t p) {
    int ends_first = w->backwards;
    while (p < w->len && clause_end(window_at(w, p)) == ends_first) p++;
    while (p < w->len && clause_end(window_at(w, p)) != ends_first) p++;
    return p;
}

static int marked(const Window *w, Py_ssize_t lo, Py_ssize_t hi) {
    Py_ssize_t from = w->backwards ? w->base + w->len - hi : w->base + lo;
    return has_marker(w->kind, w->data, from, from + (hi - lo));
}

/* main_body._chrome_run over a window: how many of its characters are chrome clauses. */
static Py_ssize_t chrome_run(const Window *w, double budget) {
    Py_ssize_t end = 0, lo = 0;
    int previous_marked = 0;
    if (w->len == 0) return 0;
    Py_ssize_t hi = next_clause(w, 0);
    while ((double)hi <= budget) {
        int following = hi < w->len; /* a clause follows: [hi, next) */
        Py_ssize_t next = following ? next_clause(w, hi) : hi;
        Py_ssize_t size = hi - lo;
        int is_marked = size <= MAX_CHROME_CLAUSE && marked(w, lo, hi);
        /* a short clause next to a marked one is its label or value ("来自:" "百度贴吧") */
        int label = size <= LABEL_CHARS &&
                    (previous_marked ||
                     (following && next - hi <= MAX_CHROME_CLAUSE && marked(w, hi, next)));
        if (!is_marked && !label) break;
        if (!following && w->len == CHROME_WINDOW) break; /* it may go on beyond the window */
        end = hi;
        previous_marked = is_marked;
        if (!following) break;
        lo = hi;
        hi = next;
    }
    return end;
}

/* main_body.main_span */
static void main_span_of(int kind, const void *data, Py_ssize_t n, Py_ssize_t *start_out,
                         Py_ssize_t *end_out) {
    *start_out = *end_out = 0;
    if (!n) return;
    double budget = n <= SHORT_BODY ? (double)n : MAX_CHROME_SHARE * (double)n;
    Py_ssize_t start = 0;
    if (has_marker(kind, data, 0, n < REACH ? n : REACH)) {
        Window lead = {kind, data, 0, n < CHROME_WINDOW ? n : CHROME_WINDOW, 0};
        start = chrome_run(&lead, budget);
    }
    *start_out = start, *end_out = n;
    Py_ssize_t from = n - REACH > start ? n - REACH : start;
    if (!has_marker(kind, data, from, n)) return;
    Py_ssize_t tail_start = n - CHROME_WINDOW > start ? n - CHROME_WINDOW : start;
    Window tail = {kind, data, tail_start, n - tail_start, 1};
    Py_ssize_t end = n - chrome_run(&tail, budget - (double)start);
    *end_out = end > start ? end : start;
}

/* Sketch.from_text(text[lo:hi]).samples as sorted uint32 in *out (PyMem_Malloc'ed, or
 * NULL when none): character 5-grams of the kept code points when at least 30 % of them
 * are CJK (the mean, as shingle_hashes takes it; fewer than five: one shingle of them
 * all), else word 5-grams (fewer than five words: one shingle). Returns the count, -1
 * with an exception set (no memory; a surrogate, which Sketch.from_text cannot encode). */
static Py_ssize_t piece_samples(PyObject *body, int kind, const void *data, Py_ssize_t lo,
                                Py_ssize_t hi, const uint8_t *keep, uint32_t **out) {
    *out = NULL;
    Py_ssize_t n = hi - lo;
    if (n <= 0) return 0;
    for (Py_ssize_t i = lo; i < hi; i++) {
        Py_UCS4 cp = AT(i);
        if (cp >= 0xD800 && cp <= 0xDFFF) { /* what kept_codepoints raises */
            PyObject *piece = PyUnicode_Substring(body, lo, hi);
            if (piece) {
                PyObject *encoded = PyUnicode_AsEncodedString(piece, "utf-32-le", "strict");
                Py_XDECREF(encoded);
                Py_DECREF(piece);
            }
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "surrogate in a piece");
            return -1;
        }
    }
    uint32_t *units = PyMem_Malloc((size_t)n * sizeof(uint32_t));
    uint32_t *tmp = PyMem_Malloc((size_t)n * sizeof(uint32_t));
    unsigned char *word = NULL;
    if (!units || !tmp) goto no_memory;
    Py_ssize_t m = 0, cjk = 0;
    for (Py_ssize_t i = lo; i < hi; i++) {
        Py_UCS4 cp = AT(i);
        if (cp >= 0x10000 || keep[cp]) {
            units[m++] = cp;
            cjk += is_cjk(cp);
        }
    }
    Py_ssize_t count = m;
    if (m && !((double)cjk / (double)m >= 0.3)) { /* word shingles: units[] reused */
        word = PyMem_Malloc((size_t)(4 * n + 1));
        if (!word) goto no_memory;
        Py_ssize_t len = 0;
        count = 0;
        for (Py_ssize_t i = lo; i <= hi; i++) {
            Py_UCS4 cp = i < hi ? AT(i) : 0;
            if (i < hi && Py_UNICODE_ISALNUM(cp)) {
                len += put_utf8(word + len, cp);
            } else if (len) {
                units[count++] = murmur3_32(word, len, WORD_SEED);
                len = 0;
            }
        }
    }
    if (!count) {
        PyMem_Free(units);
        PyMem_Free(tmp);
        PyMem_Free(word);
        return 0;
    }
    Py_ssize_t width = count < CJK_SHINGLE ? count : CJK_SHINGLE; /* = WORD_SHINGLE */
    Py_ssize_t windows = count - width + 1;
    shingle_values(units, windows, width, units); /* in place: window i reads units[i:] */
    radix_sort_u32(units, tmp, windows);
    Py_ssize_t distinct = unique_sorted(units, windows);
    int level = 0;
    while ((distinct >> level) > MAX_SAMPLES) level++;
    uint64_t cut = 1ULL << (32 - level);
    Py_ssize_t sampled = 0;
    for (Py_ssize_t i = 0; i < distinct; i++)
        if (units[i] < cut) units[sampled++] = units[i];
    PyMem_Free(tmp);
    PyMem_Free(word);
    *out = units;
    return sampled;

no_memory:
    PyMem_Free(units);
    PyMem_Free(tmp);
    PyMem_Free(word);
    PyErr_NoMemory();
    return -1;
}

static int contains_u32(const uint32_t *sorted, Py_ssize_t n, uint32_t value) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < value) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && sorted[lo] == value;
}

/* body_parts(body, normalized_length, samples, keep_table) -> (codes, chrome, main_bits):
 * main_body.body_parts_py of a body (the normalized text of normalized_length characters
 * without its learned boilerplate), samples being its sketch's (little-endian uint32
 * bytes) and keep_table sketch._KEEP. The lead's and the tail's pieces are sketched as
 * Sketch.from_text sketches them; a sample is of the main body when neither piece's
 * sketch has it; main_bits is NumPy's packbits of that mask (little bit order), b""
 * when the main body is the whole body or the sketch has no sample. */
static PyObject *body_parts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *body;
    Py_ssize_t normalized_length;
    Py_buffer samples, keep_view;
    if (!args_count("body_parts", nargs, 4) || !arg_str("body_parts", args, 0, &body) ||
        !arg_ssize(args[1], &normalized_length) || !arg_buffer(args[2], &samples))
        return NULL;
    if (!arg_buffer(args[3], &keep_view)) {
        PyBuffer_Release(&samples);
        return NULL;
    }
    PyObject *result = NULL, *codes = NULL, *bits = NULL;
    uint32_t *lead = NULL, *tail = NULL;
    if (keep_view.len < 0x10000) {
        PyErr_SetString(PyExc_ValueError, "keep table must have 65536 entries");
        goto done;
    }
    if (samples.len % 4) {
        PyErr_SetString(PyExc_ValueError, "samples must be whole uint32 values");
        goto done;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(body) < 0) goto done;
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(body);
    int kind = PyUnicode_KIND(body);
    const void *data = PyUnicode_DATA(body);
    Py_ssize_t start, end;
    main_span_of(kind, data, n, &start, &end);
    int64_t removed = (int64_t)normalized_length - (int64_t)(end - start);
    long chrome = 0;
    if (normalized_length) { /* round(1000 * removed / len(normalized)): half to even */
        double share = nearbyint((double)(1000 * removed) / (double)normalized_length);
        chrome = share < 0 ? 0 : share > 1000 ? 1000 : (long)share;
    }
    Py_ssize_t count = samples.len / 4;
    if ((start || end < n) && count) {
        const uint8_t *keep = keep_view.buf;
        Py_ssize_t edge = CJK_SHINGLE - 1, n_lead = 0, n_tail = 0;
        if (start) { /* body[:start + edge] */
            n_lead = piece_samples(body, kind, data, 0, start + edge < n ? start + edge : n, keep,
                                   &lead);
            if (n_lead < 0) goto done;
        }
        if (end < n) { /* body[end - edge:] */
            n_tail = piece_samples(body, kind, data, end - edge > 0 ? end - edge : 0, n, keep,
                                   &tail);
            if (n_tail < 0) goto done;
        }
        bits = PyBytes_FromStringAndSize(NULL, (count + 7) / 8);
        if (!bits) goto done;
        unsigned char *out = (unsigned char *)PyBytes_AS_STRING(bits);
        memset(out, 0, (size_t)(count + 7) / 8);
        /* the samples ascend (a sketch's do): one merge with each piece's; a sample below
         * the one before (not a sketch's) is looked up instead */
        Py_ssize_t at_lead = 0, at_tail = 0;
        uint32_t previous = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            uint32_t value = read_u32(samples.buf, i);
            int chrome_sample;
            if (value >= previous) {
                while (at_lead < n_lead && lead[at_lead] < value) at_lead++;
                while (at_tail < n_tail && tail[at_tail] < value) at_tail++;
                chrome_sample = (at_lead < n_lead && lead[at_lead] == value) ||
                                (at_tail < n_tail && tail[at_tail] == value);
                previous = value;
            } else {
                chrome_sample =
                    contains_u32(lead, n_lead, value) || contains_u32(tail, n_tail, value);
            }
            if (!chrome_sample) out[i >> 3] |= (unsigned char)(1u << (i & 7));
        }
    } else {
        bits = PyBytes_FromStringAndSize(NULL, 0);
        if (!bits) goto done;
    }
    codes = codes_of(body, kind, data, n); /* after the pieces, as in the Python */
    if (!codes) goto done;
    result = tuple_steal(3, Py_NewRef(codes), PyLong_FromLong(chrome), Py_NewRef(bits));

done:
    Py_XDECREF(codes);
    Py_XDECREF(bits);
    PyMem_Free(lead);
    PyMem_Free(tail);
    PyBuffer_Release(&samples);
    PyBuffer_Release(&keep_view);
    return result;
}

/* main_span(body) -> (start, end): main_body.main_span (the tests compare them). */
static PyObject *main_span(PyObject *self, PyObject *args) {
    PyObject *body;
    if (!PyArg_ParseTuple(args, "U", &body)) return NULL;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(body) < 0) return NULL;
#endif
    Py_ssize_t start, end;
    main_span_of(PyUnicode_KIND(body), PyUnicode_DATA(body), PyUnicode_GET_LENGTH(body), &start,
                 &end);
    return Py_BuildValue("(nn)", start, end);
}

#undef AT


/* instance(cls, names, *values): object.__new__(cls) with names[i] set to values[i]
 * through object.__setattr__'s generic path (a frozen dataclass's own __setattr__ is not
 * called), as a frozen dataclass's __init__ leaves it: the same attributes in the same
 * order. The attributes go to the instance's inline values, keyed by the class's shared
 * keys, with no dict per instance: features.features_of builds its Features here (a dict
 * of 19 entries set as the instance's __dict__ cost 11k instructions an article; a
 * dataclass's __init__ through 19 object.__setattr__ calls more). */
static PyObject *instance(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || !PyType_Check(args[0]) || !PyTuple_CheckExact(args[1]) ||
        PyTuple_GET_SIZE(args[1]) != nargs - 2) {
        PyErr_SetString(PyExc_TypeError,
                        "instance(cls, names, *values): a class, a tuple of names, a value each");
        return NULL;
    }
    static PyObject *no_args = NULL;
    if (!no_args && !(no_args = PyTuple_New(0))) return NULL;
    PyTypeObject *type = (PyTypeObject *)args[0];
    PyObject *made = PyBaseObject_Type.tp_new(type, no_args, NULL);
    if (!made) return NULL;
    PyObject *names = args[1];
    for (Py_ssize_t i = 0; i < nargs - 2; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        if (!PyUnicode_CheckExact(name)) {
            PyErr_SetString(PyExc_TypeError, "instance: names must be str");
            Py_DECREF(made);
            return NULL;
        }
        if (PyObject_GenericSetAttr(made, name, args[i + 2]) < 0) {
            Py_DECREF(made);
            return NULL;
        }
    }
    return made;
}

#include "_bound.h" /* weight_bound: after count_contexts and blocks_of, which it uses */
#include "_pack.h"  /* pack: values joined by a layout (Features.to_bytes) */
#include "_fingerprint_cut.h" /* fingerprint_cut: the C segmenter's cut, then fingerprint_core */
#include "_jsonl.h" /* json_record: a JSON line and its texts' UTF-8 (the batch's reading) */

static PyMethodDef methods[] = {
    {"weight_bound", (PyCFunction)(void (*)(void))weight_bound, METH_FASTCALL,
     "weight_bound(a, b, tables, pictures, cut): weight_bound._bound_py of two Features, "
     "or None (the Python path then decides)."},
    {"fingerprint", (PyCFunction)(void (*)(void))fingerprint, METH_FASTCALL,
     "SimHash, informative count, numbers and weak bits of one token list "
     "(None when a token is not in the vocabulary)."},
    {"fingerprint_nodes", (PyCFunction)(void (*)(void))fingerprint_nodes, METH_FASTCALL,
     "fingerprint_nodes(text, spans, nodes, node_ids, tables, use_tf, weak_bits, "
     "with_numbers): fingerprint_spans, tokens resolved through their trie node"},
    {"fingerprint_cut", (PyCFunction)(void (*)(void))fingerprint_cut, METH_FASTCALL,
     "fingerprint_cut(text, segmenter, node_ids, tables, use_tf, weak_bits, with_numbers): "
     "fingerprint_nodes of the C segmenter's cut_nodes(text), called from C"},
    {"fingerprint_spans", (PyCFunction)(void (*)(void))fingerprint_spans, METH_FASTCALL,
     "fingerprint of the tokens [text[s:e] for (s, e) in spans] (flat uint32 offsets, "
     "the C segmenter's cut_ids), read in the text: a str only for unknown tokens."},
    {"body_parts", (PyCFunction)(void (*)(void))body_parts, METH_FASTCALL,
     "(codes, chrome, main_bits) of a body: main_body.body_parts_py."},
    {"clauses", clauses, METH_VARARGS,
     "(clauses, hashes) of a normalized text: boilerplate.clauses and hashed_clauses."},
    {"names_and_quotes", names_and_quotes, METH_VARARGS,
     "The version-7 comparisons of two rows: comparison._names_and_quotes_py."},
    {"clause_keys", (PyCFunction)(void (*)(void))clause_keys, METH_FASTCALL,
     "(distinct clause hashes, short text, keys, quoted keys' bits) of a normalized body, "
     "no str per clause."},
    {"main_span", main_span, METH_VARARGS,
     "(start, end) of a body's main body: main_body.main_span."},
    {"letters_and_digits", (PyCFunction)(void (*)(void))letters_and_digits, METH_FASTCALL,
     "The first `most` letters and digits of a str (headline.text_key)."},
    {"normalize", (PyCFunction)(void (*)(void))normalize_text, METH_FASTCALL,
     "normalize.normalize of a text the table describes, else None (the Python path)."},
    {"contexts", contexts, METH_VARARGS,
     "((a, b, shared, conflicts) of the numbers in context, the same of the names): "
     "comparison.both_contexts."},
    {"compare_short", compare_short, METH_VARARGS,
     "(similarity, conflict, number_replaced) of two keys: shorttext.compare_short_py."},
    {"shared_keys", shared_keys, METH_VARARGS,
     "(distinct values both have, of a, of b) of two uint32 arrays: comparison._shared_keys."},
    {"matching_blocks", matching_blocks, METH_VARARGS,
     "difflib's SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks() of two "
     "strings, as tuples (shorttext.matching_blocks)."},
    {"number_conflicts", number_conflicts, METH_VARARGS,
     "(contexts whose numbers or names differ, contexts both have): verify.number_conflicts."},
    {"instance", (PyCFunction)(void (*)(void))instance, METH_FASTCALL,
     "instance(cls, names, *values): object.__new__(cls) with each name set to its value "
     "by object.__setattr__ (features.features_of)."},
    {"pack", (PyCFunction)(void (*)(void))pack, METH_FASTCALL,
     "pack(layout, *values): the values joined as the layout's codes say (features.pack_py)."},
    {"json_record", (PyCFunction)(void (*)(void))json_record, METH_FASTCALL,
     "json_record(data, start, end, keys): (the dict json.loads gives, the keys' values' "
     "UTF-8) of a JSON line of an object of strings and scalars, else None "
     "(replay.read_jsonl_texts)."},
    {"overlap", overlap, METH_VARARGS,
     "(shared, na, nb) of two sketches' samples at the larger level (sketch.compare)."},
    {"observe", (PyCFunction)(void (*)(void))observe, METH_FASTCALL,
     "Count one story's clause hashes in a slot table; the clauses promoted just now."},
    {"probes", (PyCFunction)(void (*)(void))probes, METH_FASTCALL,
     "A content fingerprint's multi-probe fingerprints (probes._probes)."},
    {"rebuild", rebuild, METH_VARARGS,
     "A normalized body without its boilerplate clauses (boilerplate._rebuild)."},
    {"sketch", (PyCFunction)(void (*)(void))sketch, METH_FASTCALL,
     "Shingle sketch (level, shingles, samples) of a normalized text, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "fingerprints._kernel",
    "The engine's inner loops in C (identical results to the NumPy reference).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernel(void) {
    init_masks();
    init_alnum();
    if (PyType_Ready(&TablesType) < 0 || PyType_Ready(&BlockTableType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "Tables", (PyObject *)&TablesType) < 0 ||
        PyModule_AddObjectRef(m, "BlockTable", (PyObject *)&BlockTableType) < 0)
        goto fail;
    init_markers();
    init_run_class();
    PyObject *markers = PyTuple_New(N_MARKERS);
    if (!markers) goto fail;
    for (int i = 0; i < N_MARKERS; i++) {
        Py_ssize_t len = 0;
        while (CHROME_MARKERS[i][len]) len++;
        PyObject *marker = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, CHROME_MARKERS[i], len);
        if (!marker) {
            Py_DECREF(markers);
            goto fail;
        }
        PyTuple_SET_ITEM(markers, i, marker);
    }
    /* main_body's constants as this module has them (a test compares) */
    PyObject *constants = Py_BuildValue(
        "{s:N,s:i,s:i,s:i,s:i,s:i,s:d,s:i,s:i,s:i}", "CHROME_MARKERS", markers, "MAX_CODES",
        MAX_CODES, "MIN_CODE_DIGITS", MIN_CODE_DIGITS, "MIN_CODE_CHARS", MIN_CODE_CHARS,
        "CODE_SEED", CODE_SEED, "SHORT_BODY", SHORT_BODY, "MAX_CHROME_SHARE", MAX_CHROME_SHARE,
        "MAX_CHROME_CLAUSE", MAX_CHROME_CLAUSE, "LABEL_CHARS", LABEL_CHARS, "CHROME_WINDOW",
        CHROME_WINDOW);
    if (!constants || PyModule_AddObject(m, "MAIN_BODY", constants) < 0) {
        Py_XDECREF(constants);
        goto fail;
    }
    return m;

fail:
    Py_DECREF(m);
    return NULL;
}
