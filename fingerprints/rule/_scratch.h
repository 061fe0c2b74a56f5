/* Scratch memory for the per-article loops: a buffer per slot kept from one call to the
 * next, instead of a malloc and a free of a body's tens of kilobytes, several times per
 * article, in each function (glibc's bins cost more than the work on a short body).
 * A slot lends its buffer to one caller at a time: a caller that finds it lent (a
 * collector's finalizer or another thread entering the kernel while the first holds
 * it) gets fresh memory, as does a request over SCRATCH_KEPT bytes (not kept, so that
 * one huge text does not pin its memory). Release with scratch_free, in any case.
 * Each module has its own slots (a static pool per translation unit); the GIL is held
 * from scratch_alloc to scratch_free. Used by _kernel.c and _segment.c. */
#ifndef DEDUP_SCRATCH_H
#define DEDUP_SCRATCH_H

#include <Python.h>
#include <string.h>

#define SCRATCH_KEPT ((size_t)1 << 20)

typedef struct {
    void *buffer;
    size_t size;
    int lent;
} Scratch;

static void *scratch_alloc(Scratch *slot, size_t bytes) {
    if (!bytes) bytes = 1;
    if (slot->lent || bytes > SCRATCH_KEPT) return PyMem_Malloc(bytes);
    if (bytes > slot->size) {
        size_t size = slot->size ? 2 * slot->size : 4096;
        while (size < bytes) size *= 2;
        void *buffer = PyMem_Malloc(size);
        if (!buffer) return NULL;
        PyMem_Free(slot->buffer);
        slot->buffer = buffer;
        slot->size = size;
    }
    slot->lent = 1;
    return slot->buffer;
}

static void *scratch_zeroed(Scratch *slot, size_t count, size_t size) {
    void *buffer = scratch_alloc(slot, count * size);
    if (buffer) memset(buffer, 0, count * size);
    return buffer;
}

static void scratch_free(Scratch *slot, void *buffer) {
    if (buffer && buffer == slot->buffer && slot->lent)
        slot->lent = 0;
    else
        PyMem_Free(buffer);
}

#endif
