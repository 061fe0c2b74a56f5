/* Stamped hash tables for the per-article loops: an open-addressing table of 64-bit
 * slots kept from one call to the next, never cleared between calls. A slot holds
 * `stamp << STAMP_SHIFT | key` (key at most STAMP_KEY_MAX, never 0); a slot whose stamp
 * is not the call's own is empty. Each call takes the next stamp, so the table a call
 * sees is empty without a memset of its tens of kilobytes (which was a third of the
 * per-article C library's work: valgrind counts `rep stosb` byte by byte). The table
 * is zeroed only when it is (re)allocated and when the stamps run out (2**31 calls).
 * As with _scratch.h, a table lends itself to one caller at a time: a caller that finds
 * it lent, or asks for more than SCRATCH_KEPT bytes, gets fresh zeroed memory (stamp 0
 * empty, its own stamp 1), freed by stamped_give. The GIL is held from stamped_take to
 * stamped_give. Used by _kernel.c (distinct_values, fingerprint_core). */
#ifndef DEDUP_STAMPED_H
#define DEDUP_STAMPED_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_scratch.h"

#define STAMP_SHIFT 33
#define STAMP_KEY_MAX (((uint64_t)1 << STAMP_SHIFT) - 1)
#define STAMP_LAST (((uint64_t)1 << (64 - STAMP_SHIFT)) - 1)

typedef struct {
    uint64_t *slots;
    size_t size; /* slots allocated */
    uint64_t stamp; /* the last stamp handed out */
    int lent;
} Stamped;

/* a table of at least `count` slots, empty for the stamp put in `*tag` (already shifted:
 * the caller stores tag | key); NULL when there is no memory */
static uint64_t *stamped_take(Stamped *table, size_t count, uint64_t *tag) {
    if (!count) count = 1;
    if (table->lent || count * sizeof(uint64_t) > SCRATCH_KEPT) {
        *tag = (uint64_t)1 << STAMP_SHIFT;
        return PyMem_Calloc(count, sizeof(uint64_t));
    }
    if (count > table->size) {
        size_t size = table->size ? 2 * table->size : 512;
        while (size < count) size *= 2;
        uint64_t *slots = PyMem_Calloc(size, sizeof(uint64_t));
        if (!slots) return NULL;
        PyMem_Free(table->slots);
        table->slots = slots;
        table->size = size;
        table->stamp = 0;
    }
    if (table->stamp == STAMP_LAST) { /* every stamp used: start again on zeros */
        memset(table->slots, 0, table->size * sizeof(uint64_t));
        table->stamp = 0;
    }
    table->stamp++;
    table->lent = 1;
    *tag = table->stamp << STAMP_SHIFT;
    return table->slots;
}

/* is the slot taken in the call whose stamp is `tag` */
static inline int stamped_used(uint64_t slot, uint64_t tag) {
    return (slot >> STAMP_SHIFT) == (tag >> STAMP_SHIFT);
}

static void stamped_give(Stamped *table, uint64_t *slots) {
    if (slots && slots == table->slots && table->lent)
        table->lent = 0;
    else
        PyMem_Free(slots);
}

#endif
