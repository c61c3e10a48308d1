/*
 * blob_check: feeds blobs to th_interp_init (and, when one is accepted, to an invoke) on the
 * host, for the corrupted-blob tests (built with ASan + UBSan by tests/test_blob_fuzz.py).
 *
 * stdin: records of `u32 blob_len, u32 arena_len, blob bytes` (little-endian).
 * stdout: one line per record: "<status> <op> <detail> <invoked>".
 * Each blob is copied into a buffer of exactly its length and the arena is allocated at
 * exactly arena_len, so any access outside either is a sanitizer error, not a silent one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_interp.h"

uint64_t th_counter_read(void)
{
    static uint64_t t; /* test harness only: a deterministic fake counter */
    return t += 7u;
}

static int read_exact(void *dst, size_t n)
{
    return fread(dst, 1, n, stdin) == n;
}

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
           ((uint32_t)b[3] << 24);
}

int main(void)
{
    static th_interp ctx;
    uint8_t head[8];
    while (read_exact(head, sizeof head)) {
        const uint32_t len = le32(head), arena_len = le32(head + 4);
        uint8_t *blob = malloc(len ? len : 1);
        uint8_t *arena = malloc(arena_len ? arena_len : 1);
        th_interp_status s;
        int invoked = 0;
        if (blob == NULL || arena == NULL || !read_exact(blob, len)) {
            return 2;
        }
        memset(arena, 0x5A, arena_len);
        s = th_interp_init(&ctx, blob, len, arena, arena_len);
        if (s == TH_INTERP_OK) {
            /* an accepted blob must also run without touching anything outside */
            for (uint32_t i = 0; i < th_interp_num_inputs(&ctx); i++) {
                th_interp_tensor t;
                th_interp_input(&ctx, i, &t);
                for (uint32_t k = 0; k < t.bytes; k++) {
                    ((uint8_t *)t.data)[k] = (uint8_t)(k * 7u + 3u);
                }
            }
            s = th_interp_invoke_ex(&ctx, 1);
            invoked = 1;
        }
        {
            const th_interp_error e = th_interp_last_error(&ctx);
            printf("%d %d %u %d\n", (int)s, (int)e.op, (unsigned)e.detail, invoked);
        }
        free(blob);
        free(arena);
    }
    return 0;
}
