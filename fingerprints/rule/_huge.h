/* Zeroed memory for a table read at random (the segmenter's trie edges and its edge
 * filter): large ones are aligned to 2 MiB and offered
 * to the operating system as huge pages, since a read lands anywhere in megabytes and
 * with 4 KiB pages most reads would miss the TLB as well as the cache. The advice may
 * be refused: the table works the same. Freed with free(). Used by _segment.c. */
#ifndef DEDUP_HUGE_H
#define DEDUP_HUGE_H

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

static void *huge_zeroed(size_t bytes) {
    if (bytes < HUGE_PAGE) return calloc(1, bytes ? bytes : 1);
    void *memory = NULL;
    bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (posix_memalign(&memory, HUGE_PAGE, bytes)) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(memory, bytes, MADV_HUGEPAGE);
#endif
    memset(memory, 0, bytes);
    return memory;
}

#endif
