/*
 * libFuzzer target: the interpreter's blob validator (th_interp_init) on arbitrary bytes, and
 * an invoke of every blob it accepts. The CRC field is recomputed first, so the fuzzer
 * explores the validator behind the CRC gate rather than the CRC itself. The blob and the
 * arena are heap copies of exactly their size: ASan sees any access outside either.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "th_interp.h"

uint64_t th_counter_read(void)
{
    static uint64_t t; /* a deterministic fake counter */
    return t += 7u;
}

static uint32_t crc32_of(const uint8_t *data, size_t len)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        crc ^= data[i];
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
    }
    return crc ^ 0xFFFFFFFFu;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static th_interp ctx;
    if (size < 2) {
        return 0;
    }
    /* The first two bytes choose the arena size (0..64 KiB); the rest is the blob. */
    const uint32_t arena_len = ((uint32_t)data[0] | ((uint32_t)data[1] << 8)) & 0xFFFFu;
    const size_t len = size - 2;
    uint8_t *blob = malloc(len ? len : 1);
    uint8_t *arena = malloc(arena_len ? arena_len : 1);
    if (blob == NULL || arena == NULL) {
        free(blob);
        free(arena);
        return 0;
    }
    memcpy(blob, data + 2, len);
    if (len >= 16) { /* the CRC of bytes [16, total) goes at offset 12 */
        const uint32_t total = (uint32_t)blob[8] | ((uint32_t)blob[9] << 8) |
                               ((uint32_t)blob[10] << 16) | ((uint32_t)blob[11] << 24);
        const size_t end = total < len ? (total > 16u ? total : 16u) : len;
        const uint32_t crc = crc32_of(blob + 16, end - 16u);
        memcpy(blob + 12, &crc, 4);
    }
    memset(arena, 0x5A, arena_len);
    if (th_interp_init(&ctx, blob, (uint32_t)len, arena, arena_len) == TH_INTERP_OK) {
        for (uint32_t i = 0; i < th_interp_num_inputs(&ctx); i++) {
            th_interp_tensor t;
            th_interp_input(&ctx, i, &t);
            memset(t.data, (int)i, t.bytes);
        }
        (void)th_interp_invoke_ex(&ctx, 1); /* an accepted blob must run within its bounds */
    }
    free(blob);
    free(arena);
    return 0;
}
