/* jieba's precise-mode segmentation with the HMM off, in C: the tokens of
 * jieba.Tokenizer().cut(text, HMM=False) (jieba 0.42.1), which rjieba's
 * Jieba().cut(text, False) also gives and fingerprints/rule/tokenize.py uses today.
 *
 * What jieba does, and what this file mirrors step by step:
 *   - cut: the text is split into maximal runs of re_han_default,
 *     [\u4E00-\u9FD5a-zA-Z0-9+#&._%-]; every other run is split by re_skip_default,
 *     (\r\n|\s), and each piece of it is yielded a code point at a time, so outside the
 *     runs every code point is a token of its own except "\r\n", which is one.
 *   - get_DAG: from each position k of a run, the ends i of the words
 *     run[k:i + 1] with a non-zero frequency, found by extending the fragment while it is
 *     in the prefix dictionary (every word and every prefix of a word, prefixes at 0);
 *     [k] when there is none.
 *   - calc: right to left, route[k] = max over those ends x of
 *     (log(freq or 1) - log(total) + route[x + 1], x): the same doubles summed in the
 *     same order as Python, and a tie goes to the larger x, as tuple comparison does.
 *   - __cut_DAG_NO_HMM: follow the route; consecutive one-character ASCII letter or
 *     digit tokens are joined into one.
 *
 * The prefix dictionary is a trie whose nodes are exactly the keys of jieba's FREQ; the
 * root's children in the Basic Multilingual Plane sit in a direct table, every other
 * edge in one open-addressing hash table keyed by (parent node, code point). An edge
 * holds its key, its child and, when the child is a word (frequency > 0, IS_WORD on
 * the child's number), the place of its log frequency in a table of the dictionary's
 * distinct frequencies (~5,000, 40 KiB, always in the cache): a step of the DAG reads
 * one cache line (the walk is bound by memory, not by arithmetic). Every walk ends
 * with a step to a child that does not exist, and that step's slot lies anywhere in
 * the table (16 MiB, beyond this machine's cache): a 1 MiB bit filter over the edges'
 * keys (one bit per key's hash, ~6 % of bits set) answers most of those steps from the
 * cache without reading the table. Together these take 69 % of the segmenter's cache
 * misses away (docs/results/log.md, "The segmenter's cache misses").
 * Positions are code points of the Python str (non-BMP ones included), so the offsets
 * cut_ids gives are str indices.
 *
 * The GIL is held throughout: a cut never runs while add_word changes the trie.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "_cut.h"
#include "_huge.h"
#include "_scratch.h"

#define ROOT_DIRECT 0x10000u     /* root children by BMP code point, in a direct table */
#define CP_BITS 21               /* code points are below 0x110000 */
#define GOLDEN 0x9E3779B97F4A7C15ULL
#define MAX_FREQ ((int64_t)1 << 62) /* frequencies and the total stay exact in int64 */
#define MAX_NODES 0x7FFFFFF0u
#define IS_WORD 0x80000000u /* on a child's number: the child has a frequency > 0 */
#define NODE_OF(entry) ((entry) & ~IS_WORD)
#define FILTER_BITS 23 /* the edge filter: 1 MiB, one bit per (parent, code point) hash */

static PyObject *array_type; /* array.array, for cut_ids */

typedef struct {
    uint64_t key;   /* (parent << CP_BITS) | code point */
    uint32_t child; /* child node | IS_WORD; 0 marks an empty slot (the root is no child) */
    uint32_t word_log; /* when the child is a word: its log frequency's place in log_table */
} Edge;

typedef struct {
    uint32_t child;    /* child of the root | IS_WORD, 0 when none */
    uint32_t word_log; /* as Edge.word_log: one line holds both */
} Root;

typedef struct {
    PyObject_HEAD
    Root *root;              /* [ROOT_DIRECT]: the root's children in the BMP, by code point */
    Edge *edges;
    uint64_t *filter;        /* [2**FILTER_BITS / 64]: a bit set for every edge's key */
    size_t edge_cap;         /* a power of two */
    size_t edge_count;
    int edge_shift;          /* 64 - log2(edge_cap) */
    int64_t *freq;           /* per node: jieba's FREQ value (0 for a prefix only) */
    /* log(freq) of every distinct word frequency (jieba's dictionary has ~5,000: 40 KiB,
     * which stays in the cache, where a value per node would be 4 MiB read at random),
     * and the frequency -> place map that fills it (open addressing, freq + 1 as key) */
    double *log_table;
    uint32_t log_count, log_cap;
    int64_t *log_keys;
    uint32_t *log_places;
    size_t log_slots;        /* a power of two, at least twice log_count */
    uint32_t node_count;     /* node 0 is the root: the empty string */
    uint32_t node_cap;
    int root_is_key;         /* jieba keeps "" in FREQ once add_word("") was called */
    int64_t total;           /* jieba's total: the sum of every frequency ever added */
} Segmenter;

static inline int is_han(Py_UCS4 c) {
    if (c >= 0x4E00 && c <= 0x9FD5) return 1;
    if (c >= 0x80) return 0;
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '+' || c == '#' || c == '&' || c == '.' || c == '_' || c == '%' || c == '-';
}

static inline int is_ascii_alnum(Py_UCS4 c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static inline size_t edge_slot(const Segmenter *self, uint64_t key) {
    return (size_t)((key * GOLDEN) >> self->edge_shift);
}

/* The edge filter's bit of a key: a hash independent of the slot's. */
static inline uint64_t filter_bit(uint64_t key) {
    return (key * 0xD6E8FEB86659FD93ULL) >> (64 - FILTER_BITS);
}

static inline int maybe_edge(const Segmenter *self, uint64_t key) {
    uint64_t bit = filter_bit(key);
    return (int)((self->filter[bit >> 6] >> (bit & 63)) & 1);
}

/* The child of node by cp with its IS_WORD (NODE_OF gives the node), 0 when none. */
static inline uint32_t child(const Segmenter *self, uint32_t node, Py_UCS4 cp) {
    if (node == 0 && cp < ROOT_DIRECT) return self->root[cp].child;
    uint64_t key = ((uint64_t)node << CP_BITS) | cp;
    if (!maybe_edge(self, key)) return 0; /* most failing steps end here, in cache */
    size_t mask = self->edge_cap - 1;
    for (size_t i = edge_slot(self, key);; i = (i + 1) & mask) {
        const Edge *edge = &self->edges[i];
        if (!edge->child || edge->key == key) return edge->child;
    }
}

/* Where the child of node by cp is kept: its root table entry or its edge's. */
static uint32_t *child_slot(Segmenter *self, uint32_t node, Py_UCS4 cp) {
    if (node == 0 && cp < ROOT_DIRECT) return &self->root[cp].child;
    uint64_t key = ((uint64_t)node << CP_BITS) | cp;
    size_t mask = self->edge_cap - 1;
    for (size_t i = edge_slot(self, key);; i = (i + 1) & mask) {
        Edge *edge = &self->edges[i];
        if (!edge->child || edge->key == key) return &edge->child;
    }
}

/* child() with the child's log_table place when it is a word (unset otherwise). */
static inline uint32_t child_word(const Segmenter *self, uint32_t node, Py_UCS4 cp,
                                  uint32_t *word_log) {
    if (node == 0 && cp < ROOT_DIRECT) {
        *word_log = self->root[cp].word_log;
        return self->root[cp].child;
    }
    uint64_t key = ((uint64_t)node << CP_BITS) | cp;
    if (!maybe_edge(self, key)) return 0;
    size_t mask = self->edge_cap - 1;
    for (size_t i = edge_slot(self, key);; i = (i + 1) & mask) {
        const Edge *edge = &self->edges[i];
        if (!edge->child) return 0;
        if (edge->key == key) {
            *word_log = edge->word_log;
            return edge->child;
        }
    }
}

/* What a cut reads of the trie, copied out of the Segmenter once per run: the writes to
 * the route's arrays could alias its fields, so the compiler would read them again at
 * every step. */
typedef struct {
    const Root *root;
    const Edge *edges;
    const uint64_t *filter;
    const double *log_table;
    size_t mask; /* edge_cap - 1 */
    int shift;   /* edge_shift */
} Trie;

/* child_word() of a node that is not the root (every step of a walk after its first). */
static inline uint32_t child_word_below(const Trie *t, uint32_t node, Py_UCS4 cp,
                                        uint32_t *word_log) {
    uint64_t key = ((uint64_t)node << CP_BITS) | cp;
    uint64_t bit = filter_bit(key);
    if (!((t->filter[bit >> 6] >> (bit & 63)) & 1)) return 0;
    size_t mask = t->mask;
    for (size_t i = (size_t)((key * GOLDEN) >> t->shift);; i = (i + 1) & mask) {
        const Edge *edge = &t->edges[i];
        if (!edge->child) return 0;
        if (edge->key == key) {
            *word_log = edge->word_log;
            return edge->child;
        }
    }
}

/* Where the log_table place of an existing child of node by cp is kept. */
static uint32_t *word_log_slot(Segmenter *self, uint32_t node, Py_UCS4 cp) {
    if (node == 0 && cp < ROOT_DIRECT) return &self->root[cp].word_log;
    uint32_t *slot = child_slot(self, node, cp);
    return &((Edge *)((char *)slot - offsetof(Edge, child)))->word_log;
}

/* The place of log(freq) in log_table (added when new), -1 with an exception. */
static int64_t log_place(Segmenter *self, int64_t freq) {
    if (2 * ((size_t)self->log_count + 1) > self->log_slots) {
        size_t slots = self->log_slots ? 2 * self->log_slots : 1024;
        int64_t *keys = PyMem_Calloc(slots, sizeof(int64_t));
        uint32_t *places = PyMem_Malloc(slots * sizeof(uint32_t));
        if (!keys || !places) {
            PyMem_Free(keys);
            PyMem_Free(places);
            PyErr_NoMemory();
            return -1;
        }
        for (size_t j = 0; j < self->log_slots; j++) {
            if (!self->log_keys[j]) continue;
            size_t i = (size_t)(((uint64_t)self->log_keys[j] * GOLDEN) >> 32) & (slots - 1);
            while (keys[i]) i = (i + 1) & (slots - 1);
            keys[i] = self->log_keys[j];
            places[i] = self->log_places[j];
        }
        PyMem_Free(self->log_keys);
        PyMem_Free(self->log_places);
        self->log_keys = keys;
        self->log_places = places;
        self->log_slots = slots;
    }
    int64_t key = freq + 1; /* 0 marks an empty slot; freq < MAX_FREQ */
    size_t mask = self->log_slots - 1;
    size_t i = (size_t)(((uint64_t)key * GOLDEN) >> 32) & mask;
    for (; self->log_keys[i]; i = (i + 1) & mask)
        if (self->log_keys[i] == key) return self->log_places[i];
    if (self->log_count == self->log_cap) {
        uint32_t cap = self->log_cap ? 2 * self->log_cap : 1024;
        double *table = PyMem_Realloc(self->log_table, (size_t)cap * sizeof(double));
        if (!table) {
            PyErr_NoMemory();
            return -1;
        }
        self->log_table = table;
        self->log_cap = cap;
    }
    self->log_table[self->log_count] = log((double)freq);
    self->log_keys[i] = key;
    self->log_places[i] = self->log_count;
    return self->log_count++;
}

/* The node of a whole string, 0 when the string is no key (the root only for ""). */
static uint32_t find(const Segmenter *self, const Py_UCS4 *word, Py_ssize_t n) {
    uint32_t node = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        node = NODE_OF(child(self, node, word[i]));
        if (!node) return 0;
    }
    return node;
}

/* FREQ.get(word, fallback) */
static int64_t freq_get(const Segmenter *self, const Py_UCS4 *word, Py_ssize_t n,
                        int64_t fallback) {
    if (n == 0) return self->root_is_key ? self->freq[0] : fallback;
    uint32_t node = find(self, word, n);
    return node ? self->freq[node] : fallback;
}

static int resize_edges(Segmenter *self, size_t cap) {
    Edge *edges = huge_zeroed(cap * sizeof(Edge));
    if (!edges) {
        PyErr_NoMemory();
        return -1;
    }
    int bits = 0;
    while (((size_t)1 << bits) < cap) bits++;
    Edge *old = self->edges;
    size_t old_cap = self->edge_cap;
    self->edges = edges;
    self->edge_cap = cap;
    self->edge_shift = 64 - bits;
    for (size_t j = 0; j < old_cap; j++) {
        if (!old[j].child) continue;
        size_t i = edge_slot(self, old[j].key);
        while (edges[i].child) i = (i + 1) & (cap - 1);
        edges[i] = old[j];
    }
    free(old);
    return 0;
}

/* Room for `more` new nodes and edges, so that adding a word never fails halfway. */
static int reserve(Segmenter *self, Py_ssize_t more) {
    if ((uint64_t)self->node_count + (uint64_t)more > MAX_NODES) {
        PyErr_SetString(PyExc_OverflowError, "too many dictionary prefixes");
        return -1;
    }
    uint32_t need = self->node_count + (uint32_t)more;
    if (need > self->node_cap) {
        uint32_t cap = self->node_cap ? self->node_cap : 1024;
        while (cap < need) cap = cap > MAX_NODES / 2 ? MAX_NODES : cap * 2;
        int64_t *freq = PyMem_Realloc(self->freq, (size_t)cap * sizeof(int64_t));
        if (!freq) {
            PyErr_NoMemory();
            return -1;
        }
        self->freq = freq;
        self->node_cap = cap;
    }
    size_t edges = self->edge_count + (size_t)more;
    if (edges * 2 > self->edge_cap) { /* load factor at most one half */
        size_t cap = self->edge_cap ? self->edge_cap : 1024;
        while (edges * 2 > cap) cap *= 2;
        if (resize_edges(self, cap) < 0) return -1;
    }
    return 0;
}

static void set_child(Segmenter *self, uint32_t node, Py_UCS4 cp, uint32_t target) {
    if (node == 0 && cp < ROOT_DIRECT) {
        self->root[cp].child = target;
        return;
    }
    uint64_t key = ((uint64_t)node << CP_BITS) | cp;
    size_t i = edge_slot(self, key);
    while (self->edges[i].child) i = (i + 1) & (self->edge_cap - 1);
    self->edges[i].key = key;
    self->edges[i].child = target;
    self->edge_count++;
    uint64_t bit = filter_bit(key);
    self->filter[bit >> 6] |= (uint64_t)1 << (bit & 63);
}

/* jieba's gen_pfdict line and add_word: FREQ[word] = freq, total += freq (an old value is
 * not taken back), every prefix absent from FREQ enters at 0. */
static int add(Segmenter *self, const Py_UCS4 *word, Py_ssize_t n, int64_t freq) {
    if (freq < 0) {
        PyErr_SetString(PyExc_ValueError, "a word's frequency must be >= 0");
        return -1;
    }
    if (freq >= MAX_FREQ || self->total > MAX_FREQ - freq) {
        PyErr_SetString(PyExc_OverflowError, "the dictionary's total frequency must stay below 2**62");
        return -1;
    }
    if (reserve(self, n) < 0) return -1;
    int64_t word_log = freq > 0 ? log_place(self, freq) : 0;
    if (word_log < 0) return -1;
    uint32_t node = 0, parent = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t next = NODE_OF(child(self, node, word[i]));
        if (!next) {
            next = self->node_count++;
            self->freq[next] = 0;
            set_child(self, node, word[i], next);
        }
        parent = node;
        node = next;
    }
    if (n == 0) self->root_is_key = 1;
    else {
        *child_slot(self, parent, word[n - 1]) = node | (freq > 0 ? IS_WORD : 0);
        *word_log_slot(self, parent, word[n - 1]) = (uint32_t)word_log;
    }
    self->freq[node] = freq;
    self->total += freq;
    return 0;
}

/* ---- segmentation ---------------------------------------------------------------- */

typedef struct {
    uint32_t *spans; /* (start, end) pairs; a text of n code points has at most n tokens */
    size_t count;
    double *route_prob; /* [n + 1] */
    uint32_t *route_end; /* [n + 1]: the last code point of the word starting here */
    uint32_t *route_node; /* [n + 1]: that word's trie node */
    uint32_t *nodes; /* when not NULL: each token's trie node (0: none, an ASCII run) */
} Work;

static inline void emit(Work *w, size_t start, size_t end, uint32_t node) {
    w->spans[2 * w->count] = (uint32_t)start;
    w->spans[2 * w->count + 1] = (uint32_t)end;
    if (w->nodes) w->nodes[w->count] = node;
    w->count++;
}

/* __cut_DAG_NO_HMM on text[start:end], a run of re_han_default characters. */
static void cut_run(const Segmenter *self, const Py_UCS4 *text, size_t start, size_t end,
                    double log_total, Work *w) {
    double *prob = w->route_prob;
    uint32_t *last = w->route_end, *route_node = w->route_node;
    const Trie t = {self->root, self->edges, self->filter, self->log_table,
                    self->edge_cap - 1, self->edge_shift};
    prob[end] = 0.0;
    Root next = {0, 0}; /* the root's entry of text[k], read by the walk before */
    int have_next = 0;
    for (size_t k = end; k-- > start;) {
        uint32_t word_log = 0;
        uint32_t entry = have_next ? next.child : child_word(self, 0, text[k], &word_log);
        if (have_next) word_log = next.word_log;
        have_next = 0;
        if (k > start && text[k - 1] < ROOT_DIRECT) { /* the next walk's first two steps */
            next = t.root[text[k - 1]];
            have_next = 1;
            if (next.child) {
                uint64_t key = ((uint64_t)NODE_OF(next.child) << CP_BITS) | text[k];
                __builtin_prefetch(&t.edges[(size_t)((key * GOLDEN) >> t.shift)]);
            }
        }
        double best = 0.0;
        size_t best_end = SIZE_MAX;
        uint32_t best_node = 0;
        if (entry) { /* the first step, from the root */
            uint32_t node = NODE_OF(entry);
            best_node = node; /* the character's own node, word or not */
            if (entry & IS_WORD) { /* freq[node] > 0 */
                best = t.log_table[word_log] - log_total + prob[k + 1];
                best_end = k;
            }
            for (size_t i = k + 1; i < end; i++) {
                entry = child_word_below(&t, node, text[i], &word_log);
                if (!entry) break;
                node = NODE_OF(entry);
                if (entry & IS_WORD) {
                    double p = t.log_table[word_log] - log_total + prob[i + 1];
                    if (best_end == SIZE_MAX || p >= best) { /* ends ascend: ties go to the later */
                        best = p;
                        best_end = i;
                        best_node = node;
                    }
                }
            }
        }
        if (best_end == SIZE_MAX) { /* DAG[k] = [k], FREQ.get(text[k]) or 1 is 1 */
            best = 0.0 - log_total + prob[k + 1];
            best_end = k;
        }
        prob[k] = best;
        last[k] = (uint32_t)best_end;
        route_node[k] = best_node;
    }
    size_t pending = SIZE_MAX; /* start of the buffered ASCII letters and digits */
    for (size_t x = start; x < end;) {
        size_t y = (size_t)last[x] + 1;
        if (y - x == 1 && is_ascii_alnum(text[x])) {
            if (pending == SIZE_MAX) pending = x;
        } else {
            if (pending != SIZE_MAX) {
                emit(w, pending, x, 0);
                pending = SIZE_MAX;
            }
            emit(w, x, y, route_node[x]);
        }
        x = y;
    }
    if (pending != SIZE_MAX) emit(w, pending, end, 0);
}

/* the scratch buffers of a cut (_scratch.h), one per Work array */
enum { S_SPANS, S_ROUTE_PROB, S_ROUTE_END, S_ROUTE_NODE, S_NODES, N_SCRATCH };
static Scratch scratch[N_SCRATCH];

/* jieba's cut(text, HMM=False) as (start, end) pairs in w->spans (release with
 * work_free). */
static int cut_spans(const Segmenter *self, const Py_UCS4 *text, size_t n, Work *w,
                     int want_nodes) {
    w->count = 0;
    w->spans = scratch_alloc(&scratch[S_SPANS], n * 2 * sizeof(uint32_t));
    w->route_prob = scratch_alloc(&scratch[S_ROUTE_PROB], (n + 1) * sizeof(double));
    w->route_end = scratch_alloc(&scratch[S_ROUTE_END], (n + 1) * sizeof(uint32_t));
    w->route_node = scratch_alloc(&scratch[S_ROUTE_NODE], (n + 1) * sizeof(uint32_t));
    if (want_nodes) w->nodes = scratch_alloc(&scratch[S_NODES], n * sizeof(uint32_t));
    if (!w->spans || !w->route_prob || !w->route_end || !w->route_node ||
        (want_nodes && !w->nodes)) {
        PyErr_NoMemory();
        return -1;
    }
    double log_total = 0.0;
    int have_log_total = 0;
    for (size_t i = 0; i < n;) {
        if (is_han(text[i])) {
            size_t j = i + 1;
            while (j < n && is_han(text[j])) j++;
            if (!have_log_total) {
                if (self->total <= 0) { /* jieba: log(0) raises "math domain error" */
                    PyErr_SetString(PyExc_ValueError,
                                    "the dictionary's total frequency is 0: nothing to cut with");
                    return -1;
                }
                log_total = log((double)self->total);
                have_log_total = 1;
            }
            cut_run(self, text, i, j, log_total, w);
            i = j;
        } else if (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') {
            emit(w, i, i + 2, 0);
            i += 2;
        } else {
            emit(w, i, i + 1, text[i] < ROOT_DIRECT ? NODE_OF(self->root[text[i]].child) : 0);
            i++;
        }
    }
    return 0;
}

static void work_free(Work *w) {
    scratch_free(&scratch[S_SPANS], w->spans);
    scratch_free(&scratch[S_ROUTE_PROB], w->route_prob);
    scratch_free(&scratch[S_ROUTE_END], w->route_end);
    scratch_free(&scratch[S_ROUTE_NODE], w->route_node);
    scratch_free(&scratch[S_NODES], w->nodes);
}

/* The code points of a str (a fresh copy, PyMem_Free it), or NULL with an exception. */
static Py_UCS4 *code_points(PyObject *text, const char *what, Py_ssize_t *n) {
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "%s must be str, not %.100s", what, Py_TYPE(text)->tp_name);
        return NULL;
    }
    *n = PyUnicode_GET_LENGTH(text);
    if ((uint64_t)*n >= UINT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s is longer than 2**32 - 2 code points", what);
        return NULL;
    }
    Py_UCS4 *buffer = PyMem_Malloc(((size_t)*n + 1) * sizeof(Py_UCS4));
    if (!buffer) return (Py_UCS4 *)PyErr_NoMemory();
    if (!PyUnicode_AsUCS4(text, buffer, *n + 1, 1)) {
        PyMem_Free(buffer);
        return NULL;
    }
    return buffer;
}

/* jieba's suggest_freq(word, tune=False) for a whole word. */
static int suggest(const Segmenter *self, const Py_UCS4 *word, Py_ssize_t n, int64_t *out) {
    Work w = {0};
    if (cut_spans(self, word, (size_t)n, &w, 0) < 0) {
        work_free(&w);
        return -1;
    }
    int64_t freq;
    if (w.count == 0) {
        freq = self->total + 1; /* int(1 * total) + 1, all in integers */
    } else {
        double ftotal = (double)self->total, product = 1.0;
        if (ftotal == 0.0) { /* only "" can be cut with an empty dictionary */
            work_free(&w);
            PyErr_SetString(PyExc_ZeroDivisionError, "float division by zero");
            return -1;
        }
        for (size_t t = 0; t < w.count; t++) {
            uint32_t a = w.spans[2 * t], b = w.spans[2 * t + 1];
            product *= (double)freq_get(self, word + a, b - a, 1) / ftotal;
        }
        freq = (int64_t)(product * (double)self->total) + 1;
    }
    work_free(&w);
    int64_t known = freq_get(self, word, n, 1);
    *out = freq > known ? freq : known;
    return 0;
}

/* ---- the Python type --------------------------------------------------------------- */

static void segmenter_dealloc(Segmenter *self) {
    PyMem_Free(self->root);
    free(self->edges);
    free(self->filter);
    PyMem_Free(self->freq);
    PyMem_Free(self->log_table);
    PyMem_Free(self->log_keys);
    PyMem_Free(self->log_places);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int64_t as_freq(PyObject *value) {
    PyObject *index = PyNumber_Index(value);
    if (!index) return -1;
    int overflow = 0;
    long long freq = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (freq == -1 && PyErr_Occurred()) return -1;
    if (overflow > 0 || freq >= MAX_FREQ) {
        PyErr_SetString(PyExc_OverflowError, "a word's frequency must be below 2**62");
        return -1;
    }
    if (overflow < 0 || freq < 0) {
        PyErr_SetString(PyExc_ValueError, "a word's frequency must be >= 0");
        return -1;
    }
    return (int64_t)freq;
}

static int segmenter_init(Segmenter *self, PyObject *args, PyObject *kwds) {
    static char *keywords[] = {"words", NULL};
    PyObject *words;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Segmenter", keywords, &words)) return -1;
    if (self->root) {
        PyErr_SetString(PyExc_RuntimeError, "a Segmenter is initialized once");
        return -1;
    }
    self->root = PyMem_Calloc(ROOT_DIRECT, sizeof(Root));
    self->filter = huge_zeroed(((size_t)1 << FILTER_BITS) / 8);
    if (!self->root || !self->filter) {
        PyErr_NoMemory();
        return -1;
    }
    self->node_count = 1;
    if (reserve(self, 0) < 0) return -1;
    self->freq[0] = 0;
    PyObject *iterator = PyObject_GetIter(words);
    if (!iterator) return -1;
    PyObject *item;
    while ((item = PyIter_Next(iterator))) {
        PyObject *pair = PySequence_Fast(item, "each dictionary entry must be (word, freq)");
        Py_DECREF(item);
        if (!pair) break;
        if (PySequence_Fast_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_ValueError, "each dictionary entry must be (word, freq)");
            Py_DECREF(pair);
            break;
        }
        Py_ssize_t n;
        int64_t freq = as_freq(PySequence_Fast_GET_ITEM(pair, 1));
        Py_UCS4 *word = freq < 0 ? NULL
                                 : code_points(PySequence_Fast_GET_ITEM(pair, 0), "word", &n);
        Py_DECREF(pair);
        if (!word) break;
        int failed = add(self, word, n, freq) < 0;
        PyMem_Free(word);
        if (failed) break;
    }
    Py_DECREF(iterator);
    return PyErr_Occurred() ? -1 : 0;
}

static int ready(const Segmenter *self) {
    if (self->root) return 1;
    PyErr_SetString(PyExc_RuntimeError, "Segmenter.__init__ was not called");
    return 0;
}

static PyObject *segmenter_cut(Segmenter *self, PyObject *text) {
    if (!ready(self)) return NULL;
    Py_ssize_t n;
    Py_UCS4 *cps = code_points(text, "text", &n);
    if (!cps) return NULL;
    Work w = {0};
    PyObject *tokens = NULL;
    if (cut_spans(self, cps, (size_t)n, &w, 0) == 0) tokens = PyList_New((Py_ssize_t)w.count);
    PyMem_Free(cps);
    if (tokens) {
        for (size_t t = 0; t < w.count; t++) {
            PyObject *token = PyUnicode_Substring(text, w.spans[2 * t], w.spans[2 * t + 1]);
            if (!token) {
                Py_CLEAR(tokens);
                break;
            }
            PyList_SET_ITEM(tokens, (Py_ssize_t)t, token);
        }
    }
    work_free(&w);
    return tokens;
}

/* array.array('I') of count values. */
static PyObject *uint32_array(const uint32_t *values, size_t count) {
    PyObject *raw = PyBytes_FromStringAndSize((const char *)values,
                                              (Py_ssize_t)(count * sizeof(uint32_t)));
    if (!raw) return NULL;
    PyObject *result = PyObject_CallFunction(array_type, "sO", "I", raw);
    Py_DECREF(raw);
    return result;
}

/* cut_ids (want_nodes 0): the spans; cut_nodes (1): the spans and each token's node. */
static PyObject *cut_arrays(Segmenter *self, PyObject *text, int want_nodes) {
    if (!ready(self)) return NULL;
    Py_ssize_t n;
    Py_UCS4 *cps = code_points(text, "text", &n);
    if (!cps) return NULL;
    Work w = {0};
    PyObject *result = NULL;
    if (cut_spans(self, cps, (size_t)n, &w, want_nodes) == 0) {
        PyObject *spans = uint32_array(w.spans, w.count * 2);
        if (!want_nodes || !spans) {
            result = spans;
        } else {
            PyObject *nodes = uint32_array(w.nodes, w.count);
            if (nodes) result = PyTuple_Pack(2, spans, nodes);
            Py_DECREF(spans);
            Py_XDECREF(nodes);
        }
    }
    PyMem_Free(cps);
    work_free(&w);
    return result;
}

static PyObject *segmenter_cut_ids(Segmenter *self, PyObject *text) {
    return cut_arrays(self, text, 0);
}

/* cut_ids, and each token's node in the trie: the same node for the same token, 0 for
 * none (a joined run of ASCII letters and digits, "\r\n", a character the dictionary
 * does not start a word with). The kernel maps nodes to vocabulary ids once
 * (fingerprint_nodes) instead of hashing each token and looking it up. */
static PyObject *segmenter_cut_nodes(Segmenter *self, PyObject *text) {
    return cut_arrays(self, text, 1);
}

/* The kernel's cut (_cut.h): cut_nodes without the arrays, the spans and nodes left in
 * their scratch buffers until release. */
static PyTypeObject SegmenterType;

static int cut_for_kernel(PyObject *segmenter, PyObject *text, SegmentCut *out) {
    if (!PyObject_TypeCheck(segmenter, &SegmenterType)) {
        PyErr_Format(PyExc_TypeError, "segmenter must be a _segment.Segmenter, not %.100s",
                     Py_TYPE(segmenter)->tp_name);
        return -1;
    }
    Segmenter *self = (Segmenter *)segmenter;
    if (!ready(self)) return -1;
    Py_ssize_t n;
    Py_UCS4 *cps = code_points(text, "text", &n);
    if (!cps) return -1;
    Work w = {0};
    int failed = cut_spans(self, cps, (size_t)n, &w, 1) < 0;
    PyMem_Free(cps);
    if (!failed) { /* the spans and nodes are lent to the kernel until release_cut */
        *out = (SegmentCut){w.spans, w.nodes, w.count};
        w.spans = w.nodes = NULL;
    }
    work_free(&w);
    return failed ? -1 : 0;
}

static void release_cut(SegmentCut *cut) {
    Work w = {.spans = (uint32_t *)cut->spans, .nodes = (uint32_t *)cut->nodes};
    work_free(&w);
    *cut = (SegmentCut){NULL, NULL, 0};
}

static const CutApi cut_api = {cut_for_kernel, release_cut};

static PyObject *segmenter_add_word(Segmenter *self, PyObject *args, PyObject *kwds) {
    static char *keywords[] = {"word", "freq", NULL};
    PyObject *word_obj, *freq_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:add_word", keywords, &word_obj, &freq_obj))
        return NULL;
    if (!ready(self)) return NULL;
    Py_ssize_t n;
    Py_UCS4 *word = code_points(word_obj, "word", &n);
    if (!word) return NULL;
    int64_t freq;
    int failed = freq_obj == Py_None ? suggest(self, word, n, &freq) < 0
                                     : (freq = as_freq(freq_obj)) < 0;
    if (!failed) failed = add(self, word, n, freq) < 0;
    PyMem_Free(word);
    return failed ? NULL : PyLong_FromLongLong(freq);
}

static PyObject *segmenter_suggest_freq(Segmenter *self, PyObject *word_obj) {
    if (!ready(self)) return NULL;
    Py_ssize_t n;
    Py_UCS4 *word = code_points(word_obj, "word", &n);
    if (!word) return NULL;
    int64_t freq;
    int failed = suggest(self, word, n, &freq) < 0;
    PyMem_Free(word);
    return failed ? NULL : PyLong_FromLongLong(freq);
}

static PyObject *segmenter_get_freq(Segmenter *self, PyObject *word_obj) {
    if (!ready(self)) return NULL;
    Py_ssize_t n;
    Py_UCS4 *word = code_points(word_obj, "word", &n);
    if (!word) return NULL;
    int known = n == 0 ? self->root_is_key : find(self, word, n) != 0;
    int64_t freq = freq_get(self, word, n, 0);
    PyMem_Free(word);
    if (!known) Py_RETURN_NONE;
    return PyLong_FromLongLong(freq);
}

static PyObject *segmenter_node_count(Segmenter *self, void *closure) {
    return PyLong_FromUnsignedLong(self->root ? self->node_count : 0);
}

static PyObject *segmenter_total(Segmenter *self, void *closure) {
    return PyLong_FromLongLong(self->total);
}

static Py_ssize_t segmenter_len(Segmenter *self) {
    if (!self->root) return 0;
    return (Py_ssize_t)self->node_count - 1 + self->root_is_key;
}

static PyMethodDef segmenter_methods[] = {
    {"cut", (PyCFunction)segmenter_cut, METH_O,
     "cut(text) -> list[str]: jieba's cut(text, HMM=False)."},
    {"cut_ids", (PyCFunction)segmenter_cut_ids, METH_O,
     "cut_ids(text) -> array('I'): start, end code-point offsets of each token of cut(text), "
     "flat."},
    {"cut_nodes", (PyCFunction)segmenter_cut_nodes, METH_O,
     "cut_nodes(text) -> (array('I'), array('I')): cut_ids(text), and each token's trie "
     "node (below node_count; 0 for none): one node per distinct token."},
    {"add_word", (PyCFunction)(void (*)(void))segmenter_add_word, METH_VARARGS | METH_KEYWORDS,
     "add_word(word, freq=None) -> int: jieba's add_word (freq None: suggest_freq(word)); "
     "returns the frequency given to the word."},
    {"suggest_freq", (PyCFunction)segmenter_suggest_freq, METH_O,
     "suggest_freq(word) -> int: jieba's suggest_freq(word, tune=False)."},
    {"get_freq", (PyCFunction)segmenter_get_freq, METH_O,
     "get_freq(word) -> int | None: jieba's FREQ.get(word) (0 for a prefix of a word only)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef segmenter_getset[] = {
    {"total", (getter)segmenter_total, NULL, "jieba's total: the sum of the frequencies added.",
     NULL},
    {"node_count", (getter)segmenter_node_count, NULL,
     "the trie's nodes (the root included): cut_nodes gives nodes below it.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods segmenter_as_sequence = {
    .sq_length = (lenfunc)segmenter_len,
};

static PyTypeObject SegmenterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fingerprints.rule._segment.Segmenter",
    .tp_basicsize = sizeof(Segmenter),
    .tp_dealloc = (destructor)segmenter_dealloc,
    .tp_as_sequence = &segmenter_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Segmenter(words): jieba's precise mode without the HMM over a dictionary of "
              "(word, freq) pairs; len() is the number of keys of jieba's FREQ.",
    .tp_methods = segmenter_methods,
    .tp_getset = segmenter_getset,
    .tp_init = (initproc)segmenter_init,
    .tp_new = PyType_GenericNew,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "fingerprints.rule._segment",
    "jieba's precise-mode segmentation with the HMM off, in C (identical tokens).", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__segment(void) {
    if (PyType_Ready(&SegmenterType) < 0) return NULL;
    PyObject *array_module = PyImport_ImportModule("array");
    if (!array_module) return NULL;
    array_type = PyObject_GetAttrString(array_module, "array");
    Py_DECREF(array_module);
    if (!array_type) return NULL;
    PyObject *probe = PyObject_CallFunction(array_type, "s", "I");
    if (!probe) return NULL;
    PyObject *itemsize = PyObject_GetAttrString(probe, "itemsize");
    Py_DECREF(probe);
    if (!itemsize) return NULL;
    long size = PyLong_AsLong(itemsize);
    Py_DECREF(itemsize);
    if (size != 4) {
        PyErr_SetString(PyExc_ImportError, "array('I') items are not 4 bytes here");
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "Segmenter", (PyObject *)&SegmenterType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *capsule = PyCapsule_New((void *)&cut_api, CUT_CAPSULE, NULL);
    if (!capsule || PyModule_AddObject(m, "CUT", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
